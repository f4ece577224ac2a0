"""Write tests/llm/data/prompt_pins.json: the cache keys of test_prompt_stability.py's scenario.

Run it with the etc_fast whose prompts are to be pinned first on the path, from anywhere:

    cd OTHER_CHECKOUT && PYTHONPATH=OTHER_CHECKOUT python /path/to/this/tests/llm/pin_prompts.py

The scenario (the test module and the stand-in model) is loaded from this file's folder by path, so
an older checkout without them can be pinned; its own ``tests.llm._server`` and ``tests.llm.conftest``
are used and must exist there. The pins record the commit of the etc_fast that made them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    import etc_fast

    root = Path(etc_fast.__file__).resolve().parents[1]
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    _load("tests.llm._prompt_model", HERE / "_prompt_model.py")
    scenario = _load("_prompt_stability_scenario", HERE / "test_prompt_stability.py")
    cells = scenario.play_all()
    out = {"etc_fast_commit": commit, "cells": cells}
    target = HERE / "data" / "prompt_pins.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    n = sum(len(c["calls"]) for c in cells.values())
    print(f"{target}: {len(cells)} trials, {n} requests, from etc_fast at {root} ({commit[:10]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
