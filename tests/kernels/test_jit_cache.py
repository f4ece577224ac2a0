"""The kernel cache guard drops the cached kernels of the modules an edit can reach, and only those."""

from __future__ import annotations

from pathlib import Path

from kernels import _jit


def test_kernel_imports_reads_every_import_form() -> None:
    src = (
        "import numpy as np\n"
        "from kernels._shared import _grown\n"
        "from ._vecmath import sin_inplace\n"
        "from kernels import _mathlib\n"
        "import kernels.programs\n"
        "from numba import njit\n"
    )
    assert _jit.kernel_imports(src) == {"_shared", "_vecmath", "_mathlib", "programs"}


def test_stamp_covers_transitive_imports_only() -> None:
    sources = {
        "_mathlib": b"x = 1\n",
        "_vecmath": b"from kernels._mathlib import x\n",
        "programs": b"from kernels._vecmath import x\n",
        "scores": b"from kernels._shared import y\n",
        "_shared": b"y = 2\n",
    }
    before = _jit.source_stamps(sources)
    edited = dict(sources, _mathlib=b"x = 2\n")
    after = _jit.source_stamps(edited)
    # an edit to _mathlib reaches _vecmath and programs (which inline it), not scores or _shared
    assert _jit.stale_modules(before, after) == {"_mathlib", "_vecmath", "programs"}
    assert _jit.stale_modules(before, before) == set()
    assert _jit.stale_modules({}, before) == set(sources)


def test_stamp_survives_import_cycles() -> None:
    sources = {"a": b"from kernels.b import f\n", "b": b"from kernels.a import g\n"}
    stamps = _jit.source_stamps(sources)
    assert stamps["a"] == stamps["b"]  # each reaches the other: one closure, one digest


def test_drop_stale_cache_removes_only_stale_modules(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(_jit, "_cache_dir", lambda here: cache)
    names = [f"{m}.{fn}-10.py311.{ext}" for m, fn in (("scores", "_f"), ("programs", "_g")) for ext in ("nbi", "1.nbc")]
    for name in names:
        (cache / name).write_text("x")
    _jit._drop_stale_cache()  # no stamp yet: every module is stale, the fake entries go
    assert not list(cache.glob("*.nb*"))
    stamps = (cache / "kernels-sources.json").read_text()
    for name in names:
        (cache / name).write_text("x")
    real = _jit.source_stamps({p.stem: p.read_bytes() for p in Path(_jit.__file__).parent.glob("*.py")})
    changed = dict(real, programs="0" * 64)  # as if programs.py (or what it imports) had been edited since
    (cache / "kernels-sources.json").write_text(__import__("json").dumps(changed))
    _jit._drop_stale_cache()
    assert sorted(p.name for p in cache.glob("*.nb*")) == sorted(n for n in names if n.startswith("scores."))
    assert (cache / "kernels-sources.json").read_text() == stamps
    _jit._drop_stale_cache()  # nothing changed: nothing dropped
    assert len(list(cache.glob("*.nb*"))) == 2


def test_unreadable_stamp_drops_everything_and_is_rewritten(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(_jit, "_cache_dir", lambda here: cache)
    (cache / "kernels-sources.json").write_text("not json")
    (cache / "step._f-1.py311.nbi").write_text("x")
    _jit._drop_stale_cache()
    assert not (cache / "step._f-1.py311.nbi").exists()
    assert (cache / "kernels-sources.json").read_text().startswith("{")


def test_cache_dir_follows_numba_cache_dir(tmp_path: Path, monkeypatch) -> None:
    from numba.core import config

    here = Path(_jit.__file__).resolve().parent
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    got = _jit._cache_dir(here)
    assert got.parent == tmp_path and got.name.startswith("kernels_")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert _jit._cache_dir(here) == here / "__pycache__"
