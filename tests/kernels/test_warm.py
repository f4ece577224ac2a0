"""The background warm-up: its list names real kernels, and it compiles only what no one else is compiling."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from numba import njit, types

from kernels import _once
from kernels import warmup as _warm
from kernels._specializations import SPECIALIZATIONS
from tests.kernels._jit_checks import needs_jit


def test_parse_signature_reads_what_repr_writes() -> None:
    sig = (types.Array(types.float64, 2, "C"), types.Array(types.float64, 1, "C", readonly=True),
           types.int64, types.boolean, types.literal(0), types.UniTuple(types.int64, 2))
    assert _warm.parse_signature(repr(sig)) == sig
    assert _warm.parse_signature("()") == ()
    for bad in ("(int64", "(__import__('os'),)", "int64", "(1, 2)"):
        with pytest.raises(ValueError, match="Numba"):
            _warm.parse_signature(bad)


@needs_jit
def test_every_listed_specialization_names_a_guarded_kernel() -> None:
    import kernels  # noqa: F401 - guards the kernels

    assert len(SPECIALIZATIONS) > 50
    assert len(set(SPECIALIZATIONS)) == len(SPECIALIZATIONS)
    for function, text in SPECIALIZATIONS:
        disp = _warm.resolve(function)
        assert disp is not None, function
        assert getattr(disp, "_kernels_compile_once", False), function
        assert repr(_warm.parse_signature(text)) == text


def test_resolve_refuses_what_is_not_a_kernel() -> None:
    assert _warm.resolve("kernels.programs.evaluate_programs") is None  # the Python wrapper
    assert _warm.resolve("kernels.nosuch._f") is None
    assert _warm.resolve("numpy.sum") is None


@njit(cache=True)
def _square(x):
    return x * x


@needs_jit
def test_warm_compiles_free_entries_and_leaves_busy_ones(tmp_path: Path, monkeypatch) -> None:
    disp = _square
    lock = _once.lock_path(disp)
    assert lock is not None and _once.guard_dispatcher(disp)
    monkeypatch.setattr(_warm, "resolve", lambda f: disp if f == "kernels.t._square" else None)
    entries = [("kernels.t._square", "(float64,)"), ("kernels.t._gone", "(int64,)"), ("kernels.t._square", "(int6",)]
    Path(lock).parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as other:  # as another process holding it: a second open file description
        fcntl.flock(other, fcntl.LOCK_EX)
        counts = _warm.warm(entries)
        assert counts == {"done": 0, "busy": 1, "skipped": 2}
        assert (types.float64,) not in disp.overloads
    assert _warm.warm(entries) == {"done": 1, "busy": 0, "skipped": 2}
    assert (types.float64,) in disp.overloads
    assert _warm.warm(entries, stop=lambda: True) == {"done": 0, "busy": 0, "skipped": 0}


@needs_jit
def test_missing_names_functions_without_a_cache_index(tmp_path: Path, monkeypatch) -> None:
    entries = [("kernels.t._square", "(float64,)")]
    monkeypatch.setattr(_warm, "resolve", lambda f: _square)
    index = Path(_square._cache._cache_file._index_path)
    assert _warm.missing(entries) == ([] if index.exists() else ["kernels.t._square"])
    monkeypatch.setattr(_square._cache._cache_file, "_index_path", str(tmp_path / "none.nbi"))
    assert _warm.missing(entries) == ["kernels.t._square"]
    (tmp_path / "none.nbi").write_text("")
    assert _warm.missing(entries) == []
