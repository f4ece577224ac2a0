"""Plant state in one sandbox job and look for it from the next; print one JSON object (used to run
the planted-state check as another user).

    python tests/sandbox/_planted_main.py TAG [full]

Without ``full`` the jobs do not name SciPy and are forked by the lean zygote; with it, by the full one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.sandbox.test_zygote import CHECK, PLANT, _kernel_job  # noqa: E402


def plant_and_check(tag: str, full: bool = False) -> dict:
    from etc_fast.sandbox._zygote import LEAN_PRELOAD, PRELOAD, zygote

    names = "\n# (names scipy: forked by the full zygote)\n" if full else ""
    run = _kernel_job(PLANT + names, {"tag": tag})
    planted = json.loads(run.stdout.strip().splitlines()[-1]) if run.ok and run.reply.get("ok") else None
    z = zygote(PRELOAD if full else LEAN_PRELOAD)
    zpid = z.pid
    check = _kernel_job(CHECK + names, {"tag": tag, "fd": (planted or {}).get("fd", [99, 0, 0])})
    seen = json.loads(check.stdout.strip().splitlines()[-1]) if check.ok and check.reply.get("ok") else None
    return {"planted": planted, "seen": seen, "zygote_before": zpid, "zygote_after": z.pid,
            "errors": [run.error, check.error, run.stderr[-500:], check.stderr[-500:]], "layers": check.layers}


if __name__ == "__main__":
    print(json.dumps(plant_and_check(sys.argv[1], full=sys.argv[2:] == ["full"])))
