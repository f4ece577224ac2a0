"""The system definitions' registry: one definition per (module, system), checked when registered,
read by generic code that names no module, and the package's public face over the private modules."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import etc_fast.systems as S
from etc_fast.systems import _registry
from etc_fast.systems._definition import TrajectoryKernel, points_from_num_points, points_from_steps
from etc_fast.systems.defs import MODULES as DEF_FILES
from etc_fast.tasks import MODULES

SYSTEMS_DIR = Path(S.__file__).resolve().parent


def test_every_module_has_one_definition_per_simulated_system():
    keys = [d.key for d in S.definitions()]
    assert keys == [(m, s) for m in MODULES for s in S.SIM_SYSTEMS]
    for m in MODULES:
        for s in S.SIM_SYSTEMS:
            d = S.definition(m, s)
            assert (d.module, d.system, d.name) == (m, s, f"{m}/{s}")
            assert S.spec(m, s) is d.spec
    # the two systems of a module come from one file and share one hidden-law guard
    for file in DEF_FILES:
        simple, complex_ = file.DEFINITIONS
        assert simple.module == complex_.module == file.MODULE
        assert (simple.system, complex_.system) == S.SIM_SYSTEMS
        assert simple.guard is complex_.guard


def test_unknown_pairs_keep_their_errors():
    assert _registry.lookup("m0_gravity", "vanilla_equation") is None
    with pytest.raises(ValueError, match="no system spec for 'm0_gravity' / 'vanilla_equation'"):
        S.definition("m0_gravity", "vanilla_equation")
    with pytest.raises(ValueError, match="no simulator for module 'nope'"):
        S.simulate("nope", "simple_system", [{}], lambda *a: 1.0)


def _other(defn, **changes):
    """``defn`` as a definition of a module nobody registered, with ``changes``."""
    spec = dataclasses.replace(defn.spec, module="m99_test")
    return dataclasses.replace(defn, spec=spec, **changes)


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda: S.definition("m3_fourier_law", "simple_system"), "already registered"),
        (lambda: _other(S.definition("m0_gravity", "simple_system"),
                        forward=TrajectoryKernel("m0_gravity/simple_system", ("mass1", "mass2"))),
         "reads 5 columns, given 2"),
        (lambda: _other(S.definition("m0_gravity", "complex_system"),
                        forward=TrajectoryKernel("m9_nothing/simple_system", ("mass1",))),
         "unknown trajectory kernel"),
        (lambda: _other(S.definition("m0_gravity", "simple_system"),
                        forward=TrajectoryKernel("m0_gravity/complex_system", S.definition("m0_gravity", "complex_system").kernel.columns)),
         "has 4 channels, the spec 2"),
        (lambda: _other(S.definition("m6_underdamped_harmonic", "simple_system"), points=points_from_steps),
         "the step rule needs duration and time_step"),
        (lambda: _other(S.definition("m6_underdamped_harmonic", "simple_system"), points=points_from_num_points),
         "the num_points rule needs a num_points control"),
        (lambda: dataclasses.replace(S.definition("m7_malus_law", "simple_system"),
                                     spec=dataclasses.replace(S.definition("m7_malus_law", "simple_system").spec, system="vanilla_equation")),
         "system must be one of"),
        (lambda: dataclasses.replace(
            S.definition("m7_malus_law", "simple_system"),
            spec=dataclasses.replace(S.definition("m7_malus_law", "simple_system").spec, system="complex_system", module="m7_malus_law"),
            guard=S.definition("m9_hooke_law", "simple_system").guard),
         "hidden-law guard differs"),
    ],
)
def test_register_refuses_an_inconsistent_definition(make, why):
    before = S.definitions()
    with pytest.raises(ValueError, match=why):
        _registry.register(make())
    assert S.definitions() == before  # nothing was added


def _string_literals(path: Path) -> set[str]:
    """Every string constant of a file's code (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs}


def test_the_generic_machinery_names_no_module():
    """Per-module facts are read through the registry: outside ``defs/`` no code literal names a
    module (or a ``module/system`` pair)."""
    names = set(MODULES) | {f"{m}/{s}" for m in MODULES for s in S.SIM_SYSTEMS}
    files = sorted(p for p in SYSTEMS_DIR.glob("*.py"))
    assert len(files) > 10
    found = {p.name: sorted(_string_literals(p) & names) for p in files}
    assert not {k: v for k, v in found.items() if v}
    # the check can fail: a definition file names its module
    assert "m0_gravity" in _string_literals(SYSTEMS_DIR / "defs" / "m0_gravity.py")


def test_the_public_names_are_the_private_modules_objects():
    from etc_fast.systems import _derive, _derive_cache, _forward, _planning, _pool, _quiet, _spec

    assert set(S.__all__) <= set(dir(S))
    for mod in (_derive, _derive_cache, _forward, _planning, _pool, _quiet, _spec):
        for name in S.__all__:
            if hasattr(mod, name) and not isinstance(getattr(mod, name), type(S)):
                assert getattr(S, name) is getattr(mod, name), (mod.__name__, name)
    for name in ("spec", "observe", "controls_matrix", "predict", "system_pool", "calibrate",
                 "series_disagreement", "record_times", "DerivedTableCache", "quiet"):
        assert name in S.__all__
