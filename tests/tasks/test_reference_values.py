"""NewtonBench's v0 reference values (facts §1, 10 significant digits) and the judge-facing texts."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.tasks import get_task

# module, args, (easy, medium, hard)
REFERENCE_V0 = [
    ("m0_gravity", (2, 3, 4), (5.0055e-05, 3.0033e-04, 2.085625e-04)),
    ("m1_coulomb_force", (2, 3, 4), (0.1875, 3.75, 1.385423393)),
    ("m2_magnetic_force", (2, 3, 0.5), (2.2944, 5.620109266, 4.275361973)),
    ("m3_fourier_law", (2, 0.01, 100, 0.5), (8.0, 80.0, 318.4857364)),
    ("m4_snell_law", (1.2, 1.4, 30), (64.62306648, 42.07164905, 27.02996299)),
    ("m5_radioactive_decay", (50, 0.05, 3), (38.55999671, 84.32007594, 109.1711816)),
    ("m6_underdamped_harmonic", (100, 2, 0.5), (7.062223446, 7.066647013, 352.8906852)),
    ("m7_malus_law", (1000, 0.5), (1841.470985, 3372.488511, 5176.648437)),
    ("m8_sound_speed", (1.4, 300, 0.03), (38428.11471, 92335.51264, 157148.7331)),
    ("m9_hooke_law", (0.5,), (115.5705, 736.5211, 754.3090782)),
    ("m10_be_distribution", (1e9, 100), (0.4999999737, 0.4991688751, 0.4999916887)),
    ("m11_heat_transfer", (2, 500, 20), (1788854.382, 0.1397542486, 0.02123638805)),
]
CASES = [(m, d, args, val) for m, args, vals in REFERENCE_V0 for d, val in zip(("easy", "medium", "hard"), vals)]


@pytest.mark.parametrize("module,difficulty,args,expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_reference_value_v0(module, difficulty, args, expected):
    task = get_task(module, difficulty, "v0")
    got = task.truth(np.array([args], dtype=np.float64))[0]
    # the table keeps 10 significant digits: relative rounding error below 5e-10
    assert got == pytest.approx(expected, rel=1e-9, abs=0.0)


@pytest.mark.parametrize(
    "key,text",
    [
        (("m0_gravity", "easy", "v0"), "HIDDEN_CONSTANT * mass1 * mass2 / distance ** 1.5"),
        (("m9_hooke_law", "hard", "v0"), "2 * k * x ** 2 + CONSTANT2 * x + CONSTANT3 / np.sqrt(x)"),
        (("m4_snell_law", "easy", "v0"), "math.degrees(math.acos(n1 * math.sin(math.radians(angle1)) / n2))"),
        (("m6_underdamped_harmonic", "hard", "v0"), "(k / m - b / (2 * m ** 2)) ** 1.5"),
        (("m10_be_distribution", "easy", "v0"), "1 / (np.exp(HIDDEN_CONSTANT * omega / T) + 1)"),
    ],
)
def test_ground_truth_text_in_newtonbench_style(key, text):
    assert get_task(*key).ground_truth_text == text


def test_ground_truth_texts_name_constants_not_values():
    for module, _args, _ in REFERENCE_V0:
        for d in ("easy", "medium", "hard"):
            for v in ("v0", "v1", "v2"):
                text = get_task(module, d, v).ground_truth_text
                for value in ("6.674e", "4.78e", "351.6", "231.141", "1241.9012", "12.578", "1.0513e"):
                    assert value not in text, (module, d, v, text)


@pytest.mark.parametrize(
    "key,expr",
    [
        (("m0_gravity", "easy", "v0"), "6.674e-05 * mass1 * mass2 / distance ** 1.5"),
        (("m1_coulomb_force", "hard", "v0"), "2.0 * (q1 * q2) * (q1 + q2) / distance ** e"),
        (("m4_snell_law", "easy", "v0"), "degrees(acos(n1 * sin(radians(angle1)) / n2))"),
        (("m11_heat_transfer", "hard", "v2"), "c / (m * delta_T) ** (e + 1)"),
    ],
)
def test_law_expression_inlines_numbers(key, expr):
    assert get_task(*key).law_expression == expr


def test_law_expression_evaluates_like_truth_in_domain():
    expr = pytest.importorskip("etc_fast.expr")
    from etc_fast.sampling import evaluation_grid
    from etc_fast.tasks import DIFFICULTIES, LAW_VERSIONS, MODULES

    for module in MODULES:
        for d in DIFFICULTIES:
            for v in LAW_VERSIONS:
                task = get_task(module, d, v)
                X = evaluation_grid(task, n=200)
                program = expr.parse(task.law_expression, task.variable_names)
                assert program.nuisance == (), task.key
                np.testing.assert_allclose(program.evaluate(X), task.truth(X), rtol=1e-7, equal_nan=True, err_msg=task.key)


def test_param_description_one_line_per_argument():
    task = get_task("m3_fourier_law")
    lines = task.param_description.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["- k", "- A", "- delta_T", "- d"]
    assert lines[0] == "- k: It should be a positive real number."  # meaning omitted, as NewtonBench
    assert "degrees" in get_task("m4_snell_law").param_description
    assert "radians" in get_task("m7_malus_law").param_description
