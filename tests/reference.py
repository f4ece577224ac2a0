"""Slow, obvious NumPy twins of every kernel in :mod:`kernels`.

Each twin lives in a sibling ``_ref_<concern>.py`` file and is re-exported here, so tests import
``from tests.reference import rmsle_coverage_ref``.
"""

import importlib as _importlib

_PARTS = ("_ref_programs", "_ref_acquisition", "_ref_metrics", "_ref_stats", "_ref_gp", "_ref_mi")
for _name in _PARTS:
    try:
        _mod = _importlib.import_module(f"tests.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"tests.{_name}":
            raise
        continue
    for _public in [n for n in dir(_mod) if n.endswith("_ref")]:
        globals()[_public] = getattr(_mod, _public)
