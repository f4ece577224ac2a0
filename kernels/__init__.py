"""kernels: the compiled numeric core of etc_fast (NumPy + Numba only).

Each submodule holds one concern: a private ``@njit`` kernel and its checked public wrapper.
This package never imports :mod:`etc_fast`.
"""

import importlib as _importlib

_SUBMODULES = ("programs", "calibrate", "scores", "rank_reg", "select", "metrics", "stats", "pairs", "systems")
__all__: list[str] = []
for _name in _SUBMODULES:
    try:
        _mod = _importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _exc:  # pragma: no cover - only while a submodule is being written
        if _exc.name != f"{__name__}.{_name}":
            raise
        continue
    for _public in getattr(_mod, "__all__", ()):
        globals()[_public] = getattr(_mod, _public)
        __all__.append(_public)
