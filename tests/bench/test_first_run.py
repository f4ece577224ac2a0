"""bench.first_run: the compile log's sums and the hook that writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench import first_run


def _rec(pid, func, args, start, end, own, depth):
    return {"pid": pid, "func": func, "args": args, "start": start, "end": end,
            "inclusive_s": end - start, "own_s": own, "depth": depth}


def test_summarize_counts_top_level_time_once_and_ranks_own_time() -> None:
    records = [
        _rec(1, "k.inner", "(int64,)", 1.0, 2.0, 1.0, 1),  # compiled while compiling k.outer
        _rec(1, "k.outer", "(float64,)", 0.0, 3.0, 2.0, 0),
        _rec(2, "k.outer", "(float64,)", 0.5, 2.5, 2.0, 0),  # the second worker compiles it again
        _rec(2, "k.inner", "(float64,)", 4.0, 4.5, 0.5, 0),
    ]
    s = first_run.summarize(records)
    assert s["compile_s"] == 3.0 + 2.0 + 0.5
    assert s["compile_wall_s"] == 4.5
    assert s["specializations"] == 3  # outer once, inner for two signatures
    assert s["compilations"] == 4 and s["processes"] == 2
    assert s["per_process_s"] == {"1": 3.0, "2": 2.5}
    assert s["per_function"][0] == {"func": "k.outer", "own_s": 4.0, "specializations": 1, "processes": 2}
    assert s["per_function"][1] == {"func": "k.inner", "own_s": 1.5, "specializations": 2, "processes": 2}
    assert first_run.summarize([])["compile_s"] == 0.0


def test_cache_files_counts_index_and_data_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.f-1.py311.nbi", "a.f-1.py311.1.nbc", "a.f-1.py311.2.nbc", "sub/b.g-2.py311.nbi", "x.txt"):
        (tmp_path / name).write_text("")
    assert first_run.cache_files(tmp_path) == {"nbi": 2, "nbc": 2}


def test_sitecustomize_records_each_compilation(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(first_run.SITECUSTOMIZE)
    log = tmp_path / "compile.jsonl"
    code = (
        "from numba import njit\n"
        "@njit\n"
        "def inner(x):\n    return x + 1\n"
        "@njit\n"
        "def outer(x):\n    return inner(x) * 2\n"
        "outer(1); outer(1.5)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path), ETC_FAST_COMPILE_LOG=str(log), NUMBA_CACHE_DIR=str(tmp_path / "c"))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path, timeout=300)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    funcs = sorted((r["func"].rsplit(".", 1)[-1], r["depth"]) for r in records)
    assert funcs == [("inner", 1), ("inner", 1), ("outer", 0), ("outer", 0)]
    assert all(r["own_s"] <= r["inclusive_s"] for r in records)
