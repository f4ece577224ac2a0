"""The factored family of the symbolic search: a monomial times an elementary function of a monomial."""

import numpy as np
import pytest

from etc_fast.evaluate._structural import StructuralJudge
from etc_fast.policies.symbolic import VariableDomain, search
from etc_fast.policies.symbolic._factored import FUNCTIONS, like_pairs, n_library
from etc_fast.policies.symbolic._grammar import make_atoms
from tests._tasks import make_task
from tests.policies.test_symbolic import sobol_points

_ANGLE = {"th": "angle of incidence in radians"}
_LIKE_N = {"n1": "refractive index of the first medium", "n2": "refractive index of the second medium"}
_LIKE_X = {"xa": "position of the first probe in m", "xb": "position of the second probe in m"}

# Laws written only here, one per new shape; each has an extra input entering as a power, so the
# law is a monomial times the function (none is a task of the benchmark, of configs/tasks/ or a draw
# of the generated suite).
FACTORED_LAWS = [
    # an inverse sine of an input times the sine of an angle
    ("asin_product", "2.5*m*asin(n*sin(th))", [("n", "linear", 1.0, 1.4), ("th", "linear", 0.1, 0.7),
                                                ("m", "log", 1, 10)], _ANGLE),
    # an inverse sine of a ratio of like inputs times the sine of an angle
    ("asin_ratio", "asin(n1*sin(th)/n2)/m", [("n1", "linear", 1.0, 1.3), ("n2", "linear", 1.4, 1.8),
                                             ("th", "linear", 0.1, 1.4), ("m", "log", 1, 10)], {**_ANGLE, **_LIKE_N}),
    # an inverse cosine of a ratio of two inputs
    ("acos_ratio", "40*m**2*acos(a/b)", [("a", "linear", 1, 2), ("b", "linear", 2.5, 4), ("m", "log", 0.5, 2)], {}),
    # an arctangent of a scaled input
    ("atan_scaled", "3*m*atan(0.4*t)", [("t", "log", 0.3, 30), ("m", "log", 1, 10)], {}),
    # an arctangent of a ratio of two lengths, mostly saturated on its domain, times three more inputs
    ("atan_saturated", "2*m*k/q*atan(w/L)", [("w", "log", 1, 30), ("L", "log", 0.2, 2), ("m", "log", 1, 10),
                                             ("k", "linear", 1, 3), ("q", "log", 1, 10)], {}),
    # hyperbolic functions of a scaled input
    ("tanh", "7*m/k*tanh(0.8*x)", [("x", "log", 0.1, 5), ("m", "log", 1, 10), ("k", "log", 1, 10)], {}),
    ("sinh", "0.2*m*sinh(1.7*x)", [("x", "log", 0.1, 2), ("m", "log", 1, 10)], {}),
    ("cosh", "0.2*m*cosh(x/k)", [("x", "log", 0.1, 3), ("k", "log", 0.5, 2), ("m", "log", 1, 10)], {}),
    # a Lorentz factor of two like inputs, and one with the speed scale a constant
    ("lorentz", "m/sqrt(1 - v**2/c**2)", [("v", "linear", 1, 8), ("c", "linear", 9, 12), ("m", "log", 1, 10)],
     {"v": "speed of the probe in m/s", "c": "speed of the signal in m/s"}),
    ("lorentz_const", "m/sqrt(1 - 0.01*v**2)", [("v", "linear", 1, 9), ("m", "log", 1, 10)], {}),
    # square roots of a difference and of a sum of squares
    ("root_diff", "4*m*sqrt(a**2 - b**2)", [("a", "linear", 5, 8), ("b", "linear", 1, 4), ("m", "log", 1, 10)], {}),
    ("root_sum", "m*sqrt(a**2 + b**2)", [("a", "log", 1, 8), ("b", "log", 1, 8), ("m", "log", 1, 10)], {}),
    # a difference of like inputs times a monomial, and a log of a scaled input
    ("difference", "3*m*(xb - xa)", [("xa", "linear", 1, 2), ("xb", "linear", 3, 5), ("m", "log", 1, 10)], _LIKE_X),
    ("log1p", "2*m*log(1 + 5*x)", [("x", "log", 0.01, 3), ("m", "log", 1, 10)], {}),
    # an oscillation in time, sin(w t) over many periods, and cos of a wave number times a position
    ("oscillation", "1.5*m*sin(w*t)", [("w", "log", 20, 200), ("t", "linear", 1, 4), ("m", "log", 1, 10)], {}),
    ("wave", "m/k*cos(q*x)", [("q", "linear", 0.5, 3), ("x", "linear", 0.1, 1), ("m", "log", 1, 10),
                              ("k", "log", 1, 10)], {}),
    # a saturation of a scaled input times a monomial of three more inputs
    ("saturation", "0.6*m*k**2/q*(1 - exp(-2.5*x))", [("x", "log", 0.05, 3), ("m", "log", 1, 10),
                                                       ("k", "linear", 1, 3), ("q", "log", 1, 10)], {}),
    # a height fallen through an arc: a length times one less the cosine of an angle
    ("arc_height", "9.8*m*L*(1 - cos(th))", [("th", "linear", 0.2, 2.5), ("L", "log", 0.1, 3), ("m", "log", 1, 10)],
     {}),
]


def _domains(task):
    return [VariableDomain(v.name, v.scale, v.low, v.high, v.description) for v in task.variables]


def _clustered_points(task, n: int, width: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` Sobol points in the box ``width`` wide (in unit coordinates) about the domain's centre:
    the narrow spread of a planner's first records."""
    from etc_fast.sampling import pool_unit

    X = task.unit_to_inputs(0.5 + width * (pool_unit(task.d, 0, 64)[:n] - 0.5))
    return X, task.truth(X)


def _recovers(name, law, variables, descriptions, n=24, width=1.0):
    """The search's best law on ``n`` Sobol points (in a box ``width`` wide about the centre) is exact
    and the structural judge credits it."""
    task = make_task(name, law, variables, descriptions=descriptions)
    X, y = sobol_points(task, n) if width == 1.0 else _clustered_points(task, n, width)
    best = search(X, y, _domains(task)).best
    assert best.error <= 1e-9, (best.expression, best.error)
    v = StructuralJudge().judge(best.source, task)
    assert v.credited, (best.expression, v.reason)


@pytest.mark.parametrize("name,law,variables,descriptions", FACTORED_LAWS, ids=[x[0] for x in FACTORED_LAWS])
def test_search_recovers_factored_law(name, law, variables, descriptions):
    _recovers(name, law, variables, descriptions)


def test_like_pairs_read_quantity_unit_and_domain():
    doms = [VariableDomain("T_hot", "linear", 300, 400, "temperature of the hot cell in K"),
            VariableDomain("T_cold", "linear", 250, 300, "temperature of the cold cell in K"),
            VariableDomain("T_wall", "linear", 250, 300, "temperature of the wall in C"),
            VariableDomain("m", "log", 1, 10, "mass of the puck in kg"),
            VariableDomain("L", "log", 1, 10, "length of the rod in m")]
    # same quantity and unit (0, 1); same domain (1, 2) and (3, 4); a unit apart is not like (0, 2)
    assert like_pairs(doms) == [(0, 1), (1, 2), (3, 4)]


def test_n_library_is_polynomial_and_capped():
    def count(d, like, cap=10 ** 9):
        doms = [VariableDomain(f"x{i}", "log", 1, 10 + i) for i in range(d)]
        atoms = tuple(a for per in make_atoms(doms) for a in per)
        return len(n_library(atoms, [(0, 1)] * like, cap))

    # 6 singles per atom, 6 per pair of atoms, 4 per like pair and further atom
    assert count(4, 0) == 6 * 4 + 6 * 6
    assert count(10, 1) == 6 * 10 + 6 * 45 + 4 * 8
    assert count(10, 1, cap=50) == 50
    assert set(FUNCTIONS) >= {"asin", "acos", "atan", "tanh", "sinh", "cosh", "rsqrt1m", "sqrt1p", "sqrt1m"}


def test_factored_forms_compile_to_the_same_values():
    """The compiled program of a factored form gives its NumPy values (what the search scores)."""
    task = make_task("asin_product", *FACTORED_LAWS[0][1:3], descriptions=_ANGLE)
    X, y = sobol_points(task, 24)
    res = search(X, y, _domains(task))
    form = res.forms[0]
    assert form.kind == "compound" and form.spec.name.startswith("asin")
    from etc_fast.policies.symbolic._forms import evaluate_forms, predict
    atoms = form.atoms
    A = np.column_stack([a.values(X) for a in atoms])
    got = evaluate_forms([form], A, lambda a: atoms.index(a))[0]
    np.testing.assert_allclose(got, predict(form, A), rtol=1e-13)
    np.testing.assert_allclose(got, y, rtol=1e-9)


_POINTS = {"xa": "position of the first point in m", "xb": "position of the second point in m",
           "ya": "height of the first point in m", "yb": "height of the second point in m"}
DIFFERENCE_LAWS = [
    # a difference of like inputs of either sign times a monomial
    ("signed_difference", "0.3*m**2/k*(xb - xa)", [("xa", "linear", -2, 2), ("xb", "linear", -2, 2),
                                                    ("m", "log", 1, 10), ("k", "log", 1, 10)], _POINTS),
    # the distance of two points in the plane, coordinates about an origin
    ("distance_2d", "1.5*m*sqrt((xb - xa)**2 + (yb - ya)**2)", [("xa", "linear", -3, 3), ("xb", "linear", -3, 3),
                                                                 ("ya", "linear", -1, 1), ("yb", "linear", -1, 1),
                                                                 ("m", "log", 1, 10)], _POINTS),
    # differences of powers of like inputs (inverse distances, squared speeds, square roots) and a
    # logarithm of a ratio of like inputs (an isothermal work), each times a monomial of three more inputs
    ("inverse_difference", "2*m*k**2/q*(1/ra - 1/rb)", [("ra", "linear", 1, 3), ("rb", "linear", 4, 9),
                                                        ("m", "log", 1, 10), ("k", "linear", 1, 4), ("q", "log", 1, 100)],
     {"ra": "radius of the inner shell in m", "rb": "radius of the outer shell in m"}),
    ("square_difference", "0.5*m*s**0.5/k*(vb**2 - va**2)", [("va", "linear", 1, 4), ("vb", "linear", 5, 9),
                                                             ("m", "log", 1, 10), ("k", "log", 1, 10),
                                                             ("s", "linear", 2, 8)],
     {"va": "speed of the cart before in m/s", "vb": "speed of the cart after in m/s"}),
    ("root_difference", "m*q/k**2*(sqrt(hb) - sqrt(ha))", [("ha", "log", 0.1, 1), ("hb", "log", 2, 20),
                                                           ("m", "log", 1, 10), ("k", "linear", 1, 3),
                                                           ("q", "log", 0.1, 1)],
     {"ha": "depth of the lower tap in m", "hb": "depth of the upper tap in m"}),
    ("log_ratio", "4*m*k/q**2*log(Vb/Va)", [("Va", "log", 0.5, 2), ("Vb", "log", 3, 30), ("m", "log", 1, 10),
                                            ("k", "linear", 1, 3), ("q", "log", 1, 10)],
     {"Va": "volume of the gas before in m^3", "Vb": "volume of the gas after in m^3"}),
]


@pytest.mark.parametrize("name,law,variables,descriptions", DIFFERENCE_LAWS, ids=[x[0] for x in DIFFERENCE_LAWS])
def test_search_recovers_difference_law(name, law, variables, descriptions):
    _recovers(name, law, variables, descriptions)


@pytest.mark.parametrize("name,law,variables,descriptions", DIFFERENCE_LAWS + FACTORED_LAWS,
                         ids=[x[0] for x in DIFFERENCE_LAWS + FACTORED_LAWS])
def test_search_recovers_law_from_clustered_records(name, law, variables, descriptions):
    """Sixteen records a fifth of each domain wide, as a planner's are: the family's fit is still exact."""
    _recovers(name, law, variables, descriptions, n=16, width=0.2)


@pytest.mark.parametrize("law,power", [("2*m*(1/ra - 1/rb)", -1.0), ("m*(rb**2 - ra**2)", 2.0),
                                       ("m*(rb**1.5 - ra**1.5)", 1.5), ("m*log(rb/ra)", "log")])
def test_difference_family_fits_powers_and_logs_of_like_inputs(law, power):
    """The differences family alone writes g(x_b) - g(x_a) for each power of DIFFERENCE_POWERS and the
    logarithm, exactly."""
    from etc_fast.policies.symbolic._factored import DIFFERENCE_POWERS, fit_differences
    from etc_fast.policies.symbolic._search import SearchLimits, new_collector

    assert power in DIFFERENCE_POWERS
    desc = {"ra": "radius of the inner shell in m", "rb": "radius of the outer shell in m"}
    task = make_task("diff", law, [("ra", "linear", 1, 3), ("rb", "linear", 4, 9), ("m", "log", 1, 10)],
                     descriptions=desc)
    X, y = sobol_points(task, 12)
    doms = _domains(task)
    col = new_collector(X, y, doms, 0.0)
    atoms = tuple(a for per in make_atoms(doms) for a in per)
    A = col.atoms_matrix(atoms)
    fit_differences(col, atoms, A, y, like=[(0, 1)], lim=SearchLimits())
    fits = sorted(col.flush(), key=lambda f: f[1])
    form, err = fits[0]
    assert err <= 1e-9, (form, err)
    assert form.spec.name == ("log_ratio" if power == "log" else "difference")
