"""Custom tasks from YAML: a good file end to end, and one clear error per kind of bad file."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from etc_fast.tasks import CUSTOM, TaskError, get_task, task_view

GOOD = """\
name: drag_force
description: A wind tunnel measures the drag force on a sphere for a chosen air speed and radius.
output:
  name: F
  description: the drag force on the sphere
variables:
  - name: v
    description: air speed
    scale: log
    low: 0.1
    high: 100
    key: air_speed
    default: 1.0
  - name: r
    description: sphere radius
    scale: linear
    low: 0.01
    high: 0.5
law: 0.47 * r**2 * v**2
"""


def _write(tmp_path, text, name="task.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_good_file_end_to_end(tmp_path):
    pytest.importorskip("etc_fast.expr")
    path = _write(tmp_path, GOOD)
    task = get_task(str(path))
    assert (task.name, task.module, task.difficulty, task.law_version) == ("drag_force", "drag_force", CUSTOM, CUSTOM)
    assert task.signature == "def discovered_law(v, r):"
    assert task.source == str(path.resolve())
    assert task.variables[0].key == "air_speed" and task.variables[0].default == 1.0
    assert task.variables[1].default is None
    np.testing.assert_allclose(task.truth(np.array([[2.0, 0.1], [10.0, 0.5]])), [0.47 * 0.01 * 4, 0.47 * 0.25 * 100])
    X = task.inputs_from_request([{"r": 0.2}])
    np.testing.assert_allclose(X, [[1.0, 0.2]])
    with pytest.raises(ValueError, match="missing required key 'r'"):
        task.inputs_from_request([{"air_speed": 3.0}])
    assert task_view(task).variables[1]["scale"] == "linear"
    assert get_task(path) is task  # cached while the file is unchanged
    from etc_fast.sampling import candidate_pool, evaluation_grid

    assert np.isfinite(task.truth(evaluation_grid(task, n=64))).all()
    assert candidate_pool(task, 0, 16).shape == (16, 2)


def test_truth_nan_where_undefined(tmp_path):
    pytest.importorskip("etc_fast.expr")
    text = GOOD.replace("law: 0.47 * r**2 * v**2", "law: sqrt(v - 1) / r")
    task = get_task(_write(tmp_path, text, "nan.yml"))
    y = task.truth(np.array([[0.5, 0.1], [5.0, 0.1]]))
    assert np.isnan(y[0]) and y[1] == pytest.approx(20.0)


def _bad(field_old: str, field_new: str) -> str:
    assert field_old in GOOD
    return GOOD.replace(field_old, field_new)


BAD_FILES = [
    ("unknown top-level field", GOOD + "colour: red\n", r"task.yaml: colour: unknown field"),
    ("missing law", _bad("law: 0.47 * r**2 * v**2\n", ""), r"task.yaml: law: missing"),
    ("missing output description", _bad("  description: the drag force on the sphere\n", ""), r"task.yaml: output.description: missing"),
    ("name wrong type", _bad("name: drag_force", "name: [a, b]"), r"task.yaml: name: must be a string"),
    ("variables not a list", GOOD.split("variables:")[0] + "variables: 3\nlaw: 1\n", r"task.yaml: variables: must be a list"),
    ("empty variables", GOOD.split("variables:")[0] + "variables: []\nlaw: 1\n", r"task.yaml: variables: must list at least one"),
    ("low >= high", _bad("    low: 0.01\n    high: 0.5", "    low: 5\n    high: 2"), r"task.yaml: variables\[1\].low: must be < high \(got 5 >= 2\)"),
    ("log scale low <= 0", _bad("    low: 0.1\n    high: 100", "    low: 0\n    high: 100"), r"task.yaml: variables\[0\].low: a log-scale domain needs low > 0"),
    ("bad scale", _bad("scale: linear", "scale: cubic"), r"task.yaml: variables\[1\].scale: must be 'log' or 'linear'"),
    ("non-numeric bound", _bad("high: 0.5", "high: big"), r"task.yaml: variables\[1\].high: must be a number"),
    ("duplicate names", _bad("  - name: r", "  - name: v"), r"task.yaml: variables\[1\].name: duplicate variable name 'v'"),
    ("not an identifier", _bad("  - name: r", "  - name: 2r"), r"task.yaml: variables\[1\].name: must be a Python identifier"),
    ("reserved name", _bad("  - name: r", "  - name: pi"), r"task.yaml: variables\[1\].name: 'pi' is reserved"),
    ("unknown variable field", _bad("    key: air_speed\n", "    unit: m/s\n"), r"task.yaml: variables\[0\].unit: unknown field"),
    ("non-numeric default", _bad("default: 1.0", "default: fast"), r"task.yaml: variables\[0\].default: must be a number"),
    ("unparseable law", _bad("law: 0.47 * r**2 * v**2", "law: r[0] * v"), r"task.yaml: law: .*subscript"),
    ("law with unknown name", _bad("law: 0.47 * r**2 * v**2", "law: C * r**2 * v**2"), r"task.yaml: law: unknown name\(s\) 'C'"),
    ("not a mapping", "- a\n- b\n", r"task.yaml: must be a mapping"),
    ("empty file", "", r"task.yaml: the file is empty"),
    ("invalid yaml", "name: [unclosed\n", r"task.yaml: not valid YAML at line"),
    ("huge linear range", _bad("    low: 0.01\n    high: 0.5", "    low: -1.0e+308\n    high: 1.0e+308"),
     r"task.yaml: variables\[1\].low: must be between -1e\+100 and 1e\+100"),
    ("huge bound written as YAML text", _bad("high: 0.5", "high: 1e308"),
     r"task.yaml: variables\[1\].high: must be a number, got the text '1e308'.*write it as 1.0e\+308"),
    ("tiny log low", _bad("    low: 0.1\n    high: 100", "    low: 1.0e-300\n    high: 100"),
     r"task.yaml: variables\[0\].low: must be at least 1e-100"),
    ("deeply nested", "name: " + "[" * 3000 + "]" * 3000 + "\n", r"task.yaml: nested more than 32 levels deep \(line 1\)"),
    ("deeply nested block", "".join("  " * i + f"k{i}:\n" for i in range(60)) + "  " * 60 + "v: 1\n",
     r"task.yaml: nested more than 32 levels deep"),
    ("truth undefined everywhere", _bad("law: 0.47 * r**2 * v**2", "law: sqrt(-v) * r"),
     r"task.yaml: law: finite at only 0.0% of the 5000 evaluation points \(at least 10% needed\)"),
    ("truth finite on under 10%", _bad("law: 0.47 * r**2 * v**2", "law: sqrt(0.05 - r) * v"),
     r"task.yaml: law: finite at only [0-9.]+% of the 5000"),
]


@pytest.mark.parametrize("text,match", [(t, m) for _, t, m in BAD_FILES], ids=[b[0] for b in BAD_FILES])
def test_bad_file_names_file_and_field(tmp_path, text, match):
    if "law:" in match:
        pytest.importorskip("etc_fast.expr")
    with pytest.raises(TaskError, match=match):
        get_task(str(_write(tmp_path, text)))


def test_edited_file_is_reloaded(tmp_path):
    pytest.importorskip("etc_fast.expr")
    path = _write(tmp_path, GOOD)
    first = get_task(path)
    path.write_text(GOOD.replace("0.47 *", "0.5 *").replace("name: drag_force", "name: drag_force_2"))
    second = get_task(path)
    assert second is not first and second.name == "drag_force_2"


def test_finite_on_a_tenth_of_the_grid_is_enough(tmp_path):
    pytest.importorskip("etc_fast.expr")
    # r in [0.01, 0.5] (linear): sqrt(0.07 - r) is finite on ~12% of the grid
    task = get_task(str(_write(tmp_path, _bad("law: 0.47 * r**2 * v**2", "law: sqrt(0.07 - r) * v"))))
    from etc_fast.sampling import evaluation_grid

    share = np.isfinite(task.truth(evaluation_grid(task))).mean()
    assert 0.10 <= share < 0.2


def test_non_utf8_file_names_the_file(tmp_path):
    path = tmp_path / "latin1_task.yaml"
    path.write_bytes(GOOD.replace("wind tunnel", "soufflerie \u00e0 vent").encode("latin-1"))
    with pytest.raises(TaskError, match=r"latin1_task.yaml: not UTF-8 text \(byte 0xe0 at offset \d+, line 2\)"):
        get_task(str(path))


@pytest.mark.parametrize("written, suggested", [("1e-3", "1.0e-3"), ("5E+7", "5.0E+7"), ("-2e10", "-2.0e+10"),
                                                ("3e0", "3.0e+0")])
def test_exponent_read_as_text_suggests_the_same_number(tmp_path, written, suggested):
    pytest.importorskip("etc_fast.expr")
    text = GOOD.replace("    low: 0.01\n    high: 0.5", f"    low: {written}\n    high: 1.0e+12")
    with pytest.raises(TaskError, match=r"variables\[1\]\.low: must be a number, got the text") as info:
        get_task(str(_write(tmp_path, text)))
    assert str(info.value).endswith(f"write it as {suggested}")
    fixed = get_task(str(_write(tmp_path, text.replace(f"low: {written}", f"low: {suggested}"), "fixed.yaml")))
    assert fixed.variables[1].low == float(written)
