"""Run the hostile corpus and print one JSON object of outcomes (used to run it as another user).

    python tests/sandbox/_corpus_main.py '{"canary_dir": ..., "harness_pid": ..., "port": ..., "laws": ...}' [full]

A law whose text does not name SciPy is forked by the lean zygote; with ``full`` each law gets a
comment that names it, so the whole corpus runs in the children of the full zygote instead.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from etc_fast.sandbox import call_law  # noqa: E402
from tests.sandbox._util import SHORT, load_corpus  # noqa: E402

X = np.array([[0.5], [1.5], [2.5]])


#: Appended to each law to send it to the full zygote (its text then names SciPy).
NAMES_SCIPY = "# (this text names scipy: the full zygote forks it)\n"


def run_corpus(params: dict, full: bool = False) -> dict:
    out = {}
    for name, mod in load_corpus().items():
        t0 = time.monotonic()
        source = mod.SOURCE.format(**params) + (NAMES_SCIPY if full else "")
        r = call_law(source, X, arg_names=["a"], limits=SHORT)
        out[name] = {"ok": r.ok, "error": r.error, "stdout": r.stdout, "wall_s": time.monotonic() - t0,
                     "values": None if r.values is None else r.values.tolist(), "layers": r.layers}
    return out


if __name__ == "__main__":
    print(json.dumps(run_corpus(json.loads(sys.argv[1]), full=sys.argv[2:] == ["full"])))
