"""JIT options, held in one place for every kernel.

``FASTMATH`` leaves out ``nnan`` and ``ninf``: kernels branch on finiteness, and those flags would let
LLVM assume NaN/inf never occur.
"""

from pathlib import Path
from typing import Literal, TypedDict


class JitOptions(TypedDict, total=False):
    """The keyword options the kernels pass to ``numba.njit`` (typed so ``@njit(**JIT)`` type-checks)."""

    cache: bool
    nogil: bool
    parallel: bool
    fastmath: set[str]
    error_model: Literal["python", "numpy"]
    inline: Literal["never", "always"]


FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}
JIT: JitOptions = {"cache": True, "nogil": True, "fastmath": FASTMATH}


def kernel_imports(source: str) -> set[str]:
    """The ``kernels`` modules (file stems, e.g. ``"_shared"``) that a kernel file's source imports.

    Reads ``from kernels.X import ...``, ``from .X import ...``, ``import kernels.X`` and
    ``from kernels import X`` (for each ``X`` that names a module of the package).
    """
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0 and mod.startswith("kernels."):
                found.add(mod.split(".")[1])
            elif node.level == 1 and mod:
                found.add(mod.split(".")[0])
            elif (node.level == 0 and mod == "kernels") or (node.level == 1 and not mod):
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kernels."):
                    found.add(alias.name.split(".")[1])
    return found


def source_stamps(sources: dict[str, bytes]) -> dict[str, str]:
    """Per kernel module, a digest of its own source and of every kernel module it imports, directly
    or through others (``sources``: file stem -> file content).

    A module's compiled code can hold code inlined from any module it reaches by imports, so its
    cached kernels are stale exactly when this digest changes; an edit elsewhere leaves them valid.
    """
    import hashlib

    deps = {name: kernel_imports(text.decode()) & sources.keys() for name, text in sources.items()}
    stamps = {}
    for name in sources:
        seen, todo = {name}, [name]
        while todo:
            for dep in deps[todo.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        digest = hashlib.sha256()
        for dep in sorted(seen):
            digest.update(dep.encode() + b"\0" + sources[dep] + b"\0")
        stamps[name] = digest.hexdigest()
    return stamps


def stale_modules(old: dict[str, str], new: dict[str, str]) -> set[str]:
    """The modules whose cached kernels must go: those whose stamp is new or changed."""
    return {name for name, stamp in new.items() if old.get(name) != stamp}


def _cache_dir(here: Path) -> Path:
    """Where Numba caches this package's kernels: ``NUMBA_CACHE_DIR``'s folder for it when that is
    set, else ``__pycache__`` beside the sources."""
    from numba.core import config
    from numba.core.caching import UserProvidedCacheLocator

    cache_root = config.CACHE_DIR  # type: ignore[attr-defined]  # numba.config sets its options at import
    if cache_root:
        return Path(cache_root) / UserProvidedCacheLocator.get_suitable_cache_subpath(str(here / "_jit.py"))
    return here / "__pycache__"


def _drop_stale_cache() -> None:
    """Drop the cached kernels of every module whose source, or a kernel module it imports, changed.

    Numba validates a cached kernel against the source file that defines it only, so an edit to a
    helper module inlined into it (``_vecmath``, ``_mathlib``) would leave stale machine code. A
    stamp per module (:func:`source_stamps`) covers what it imports, so an edit drops the cache of
    the modules that can hold the edited code, not of the whole package.
    """
    import json

    here = Path(__file__).resolve().parent
    sources = {path.stem: path.read_bytes() for path in sorted(here.glob("*.py"))}
    stamps = source_stamps(sources)
    cache = _cache_dir(here)
    stamp_file = cache / "kernels-sources.json"
    try:
        try:
            old = json.loads(stamp_file.read_text()) if stamp_file.is_file() else {}
        except ValueError:  # unreadable stamp: treat every module as changed
            old = {}
        if not isinstance(old, dict):
            old = {}
        stale = stale_modules(old, stamps)
        if not stale:
            return
        cache.mkdir(parents=True, exist_ok=True)
        for path in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            if path.name.split(".", 1)[0] in stale:
                path.unlink(missing_ok=True)
        stamp_file.write_text(json.dumps(stamps, indent=0, sort_keys=True))
        (cache / "kernels-sources.sha256").unlink(missing_ok=True)  # the whole-package stamp of earlier versions
    except OSError:  # read-only install: Numba then falls back to its own cache checks
        pass


_drop_stale_cache()
