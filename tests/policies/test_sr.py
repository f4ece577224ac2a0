"""The optional ``sr`` policy: a pyoperon fit replaces the symbolic agent's final law."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from etc_fast.policies.sr import operon_expression


def test_operon_strings_become_hypothesis_language():
    from etc_fast.expr import parse

    expr = operon_expression("(1.5 * exp((x ^ 2.0))) + sqrt(log(y))")
    assert "**" in expr and "np.exp(" in expr and "np.sqrt(np.log(" in expr
    prog = parse(expr, ["x", "y"])
    np.testing.assert_allclose(prog.evaluate(np.array([[1.0, np.e]])), [1.5 * np.e + 1.0], rtol=1e-12)


def test_config_names_the_sr_extra_when_pyoperon_is_missing(tmp_path, monkeypatch):
    from etc_fast.runner import ConfigError, load_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\ngrids:\n  - model: sr\n    configurations: [variance_c]\n    tasks: [m0_gravity]\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyoperon" else real(name, *a))
    with pytest.raises(ConfigError, match=r"grids\[0\]\.model: .*\[sr\]"):
        load_config(cfg)


def _commit(seed=0):
    from etc_fast.core import Observation
    from etc_fast.policies import create_policy
    from etc_fast.protocol import CONFIGURATIONS

    task = _view()
    pol = create_policy("sr", seed=seed, generations=20, population_size=200)
    pol.begin("synthesis", task, CONFIGURATIONS["variance_c"], 3)
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(20, 2))
    y = 3.0 * X[:, 0] * X[:, 1]
    obs = Observation(phase="synthesis", task=task, X=X, y=y, diagnostics=None, turn=0, turns_left=0,
                      measurements_used=20, measurements_left=0, allowed=frozenset({"final"}), interpreter=True)
    return pol, pol.act(obs), X, y


def test_final_law_is_operons_fit_on_the_observations():
    pytest.importorskip("pyoperon")
    from etc_fast.expr import parse

    pol, act, X, y = _commit()
    assert act.kind == "final" and act.raw.startswith("sr final:")
    expr, r2 = pol.last_sr
    assert r2 > 0.99
    pred = parse(expr, ["a", "b"]).evaluate(X)
    assert np.sqrt(np.mean(((pred - y) / y) ** 2)) < 0.05


def test_same_seed_same_law():
    pytest.importorskip("pyoperon")
    assert _commit(seed=5)[1].source == _commit(seed=5)[1].source


def _view():
    from etc_fast.core import TaskView

    fields = {f for f in TaskView.__dataclass_fields__}
    kw = dict(name="t", title="t", description="d", output_name="y", output_description="o",
              signature="def discovered_law(a, b):", variables=({"name": "a", "key": "a", "scale": "linear", "low": 1.0, "high": 5.0},
                         {"name": "b", "key": "b", "scale": "linear", "low": 1.0, "high": 5.0}))
    return TaskView(**{k: v for k, v in kw.items() if k in fields})
