"""Time the structural judge on the labelled corpus: ``python -m bench.judge_corpus``.

Each task's truth is prepared once (translation, grid, target) before timing, as a run prepares it
once per worker; each submission is then judged once. Prints the median, 90th percentile and the
slowest case, and how many verdicts agree with their labels.
"""

from __future__ import annotations

import time

import numpy as np


def main() -> None:
    from etc_fast.evaluate._structural import StructuralJudge
    from etc_fast.tasks import get_task
    from tests.evaluate.judge_corpus import CASES

    judge = StructuralJudge()
    times, agree, slowest = [], 0, (0.0, "")
    for module, difficulty, version, label, why, src in CASES:
        task = get_task(module, difficulty, version)
        judge.judge("0", task)  # prepares the truth
        if "def discovered_law" not in src:
            src = f"{task.signature}\n    import numpy as np\n    import math\n    return {src}\n"
        t0 = time.perf_counter()
        verdict = judge.judge(src, task)
        dt = time.perf_counter() - t0
        times.append(dt)
        agree += verdict.credited == label
        slowest = max(slowest, (dt, f"{task.key}: {why}"))
    t = np.array(times)
    print(f"{len(t)} submissions, {agree} verdicts agree with their labels")
    print(f"median {np.median(t) * 1e3:.1f} ms, p90 {np.percentile(t, 90) * 1e3:.1f} ms, "
          f"slowest {slowest[0] * 1e3:.0f} ms ({slowest[1]})")


if __name__ == "__main__":
    main()
