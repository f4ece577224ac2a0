"""The 108 NewtonBench ``vanilla_equation`` laws as NewtonBench-style Python expressions.

Each law is the expression NewtonBench's ground-truth function returns, with module constants
named rather than valued (exactly what the judge sees). :mod:`etc_fast.tasks` (its ``_pysem``) evaluates
these strings over arrays with NewtonBench's scalar semantics, and :func:`law_expression`
rewrites them into the hypothesis language with the constants inlined.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

__all__ = ["LAWS", "CONSTANTS", "NAN_IF_NEGATIVE", "ground_truth_text", "law_expression"]

#: Hidden constants per module (names as in NewtonBench's source).
CONSTANTS: dict[str, dict[str, float]] = {
    "m0_gravity": {"HIDDEN_CONSTANT": 6.674e-5},
    "m1_coulomb_force": {"CONSTANT": 2.0},
    "m2_magnetic_force": {"CONSTANT": 4.78e-2},
    "m3_fourier_law": {},
    "m4_snell_law": {},
    "m5_radioactive_decay": {},
    "m6_underdamped_harmonic": {},
    "m7_malus_law": {},
    "m8_sound_speed": {"HIDDEN_CONSTANT": 351.6},
    "m9_hooke_law": {"k": 231.141, "CONSTANT2": 1241.9012, "CONSTANT3": 12.578},
    "m10_be_distribution": {"HIDDEN_CONSTANT": 1.0513e-14},
    "m11_heat_transfer": {},
}

# module -> {(difficulty, version): expression}
_RAW: dict[str, dict[tuple[str, str], str]] = {
    "m0_gravity": {
        ("easy", "v0"): "(HIDDEN_CONSTANT * mass1 * mass2) / (distance ** 1.5)",
        ("medium", "v0"): "(HIDDEN_CONSTANT * (mass1 * mass2) ** 2) / (distance ** 1.5)",
        ("hard", "v0"): "(HIDDEN_CONSTANT * (mass1 + mass2) ** 2) / (distance ** 1.5)",
        ("easy", "v1"): "(HIDDEN_CONSTANT * mass1) / (distance ** 2)",
        ("medium", "v1"): "(HIDDEN_CONSTANT * mass1) / (distance ** 2.6)",
        ("hard", "v1"): "(HIDDEN_CONSTANT * mass1 ** 1.3) / (distance ** 2.6)",
        ("easy", "v2"): "(HIDDEN_CONSTANT * (mass1 ** 2 * mass2 ** 2)) / (distance ** 2)",
        ("medium", "v2"): "(HIDDEN_CONSTANT * (mass1 ** 2 * mass2 ** 2)) * (distance ** 2)",
        ("hard", "v2"): "(HIDDEN_CONSTANT * (mass1 ** 2 + mass2 ** 2)) * (distance ** 2)",
    },
    "m1_coulomb_force": {
        ("easy", "v0"): "(CONSTANT * q1 * q2) / (distance ** 3)",
        ("medium", "v0"): "(CONSTANT * (q1 * q2) * (q1 + q2)) / (distance ** 2)",
        ("hard", "v0"): "(CONSTANT * (q1 * q2) * (q1 + q2)) / (distance ** np.exp(1))",
        ("easy", "v1"): "(CONSTANT * (q1 * q2) ** 3) / (distance ** 2)",
        ("medium", "v1"): "(CONSTANT * (q1 + q2) ** 3) / (distance ** 2)",
        ("hard", "v1"): "(CONSTANT * q2 ** 2 * (q1 + q2) ** 3) / (distance ** 2)",
        ("easy", "v2"): "(CONSTANT * q1 ** 3 * q2) / (distance ** 2)",
        ("medium", "v2"): "(CONSTANT * q1 ** 3 * q2 ** 2) / (distance ** 2.5)",
        ("hard", "v2"): "(CONSTANT * q1 ** 3 * q2 ** 2) / (distance ** np.exp(1))",
    },
    "m2_magnetic_force": {
        ("easy", "v0"): "(CONSTANT * current1 * current2) / (distance ** 3)",
        ("medium", "v0"): "(CONSTANT * (current1 * current2) ** 1.5) / (distance ** 3)",
        ("hard", "v0"): "(CONSTANT * (current1 + current2) ** 1.5) / (distance ** 3)",
        ("easy", "v1"): "(CONSTANT * (current1 * current2) ** 2) / distance",
        ("medium", "v1"): "(CONSTANT * (current1 * current2) ** 2) * distance",
        ("hard", "v1"): "(CONSTANT * (current1 - current2) ** 2) * distance",
        ("easy", "v2"): "(CONSTANT * current2) / distance",
        ("medium", "v2"): "(CONSTANT * current2) / (distance ** 3.8)",
        ("hard", "v2"): "(CONSTANT * (current2 ** 0.9)) / (distance ** 3.8)",
    },
    "m3_fourier_law": {
        ("easy", "v0"): "(k * A * delta_T) / (d ** 2)",
        ("medium", "v0"): "(k * (A ** 0.5) * delta_T) / (d ** 2)",
        ("hard", "v0"): "(k * (A ** 0.5) * (delta_T ** 1.3)) / (d ** 2)",
        ("easy", "v1"): "(k * (A ** 0.5) * delta_T) / d",
        ("medium", "v1"): "(k * (A ** 0.5) * delta_T ** 2.7) / d",
        ("hard", "v1"): "(k * (A ** 0.5) * delta_T ** 2.7) / d ** (3 / 7)",
        ("easy", "v2"): "(k * A * delta_T ** 2) / d",
        ("medium", "v2"): "(k * delta_T ** 2) / (d * (A ** 3.4))",
        ("hard", "v2"): "(k * delta_T ** 2) / (np.sqrt(d) * (A ** 3.4))",
    },
    "m4_snell_law": {
        ("easy", "v0"): "math.degrees(math.acos(n1 * math.sin(math.radians(angle1)) / n2))",
        ("medium", "v0"): "math.degrees(math.acos(n1 * math.cos(math.radians(angle1)) / n2))",
        ("hard", "v0"): "math.degrees(math.acos((n1 ** 2) * math.cos(math.radians(angle1)) / n2))",
        ("easy", "v1"): "math.degrees(math.asin(n2 * math.sin(math.radians(angle1)) / n1))",
        ("medium", "v1"): "math.degrees(math.acos(n2 * math.sin(math.radians(angle1)) / n1))",
        ("hard", "v1"): "math.degrees(math.acos(n2 * math.sin(math.radians(angle1)) / (n1 ** 2.5)))",
        ("easy", "v2"): "math.degrees(math.atan(n1 * math.sin(math.radians(angle1)) / n2))",
        ("medium", "v2"): "math.degrees(math.atan(n1 * math.tan(math.radians(angle1)) / n2))",
        ("hard", "v2"): "math.degrees(math.atan((n1 / n2) ** 2 * math.tan(math.radians(angle1))))",
    },
    "m5_radioactive_decay": {
        ("easy", "v0"): "N0 * np.exp(-lambda_constant * (t ** 1.5))",
        ("medium", "v0"): "N0 ** 1.2 * np.exp(-lambda_constant * (t ** 1.5))",
        ("hard", "v0"): "N0 ** 1.2 * np.exp(-lambda_constant ** (np.exp(1)) * (t ** 1.5))",
        ("easy", "v1"): "N0 * np.exp(-lambda_constant ** 1.5 * t)",
        ("medium", "v1"): "N0 ** 1.4 * np.exp(-lambda_constant ** 1.5 * t)",
        ("hard", "v1"): "N0 ** 1.4 * np.exp(-lambda_constant ** 1.5 * (t ** (np.exp(1))))",
        ("easy", "v2"): "N0 * np.exp(-(lambda_constant * t) ** 1.5)",
        ("medium", "v2"): "N0 ** 1.8 * np.exp(-(lambda_constant * t) ** 1.5)",
        ("hard", "v2"): "N0 ** 1.8 * np.exp(-(lambda_constant * t) ** (np.exp(1) + 1.5))",
    },
    "m6_underdamped_harmonic": {
        ("easy", "v0"): "math.sqrt(k/m - (b/(2*m)))",
        ("medium", "v0"): "math.sqrt(k/m - (b/(2*m**2)))",
        ("hard", "v0"): "(k/m - (b/(2*m**2)))**1.5",  # NaN if the base < 0: see NAN_IF_NEGATIVE
        ("easy", "v1"): "((k/m) - (b/(2*m)) ** 2) ** 2",
        ("medium", "v1"): "((k/(m ** 2)) - (b/(2*m)) ** 2) ** 2",
        ("hard", "v1"): "((k*(m ** 2)) - (b/(2*m)) ** 2) ** 2",
        ("easy", "v2"): "(k/m - (b/(2*m)) ** 2)",
        ("medium", "v2"): "(k/(m ** 1.3) - (b/(2*m)) ** 2)",
        ("hard", "v2"): "(k/(m ** 1.3) - (b/(2*m)) ** 0.7)",
    },
    "m7_malus_law": {
        ("easy", "v0"): "I_0 * (np.sin(theta) + np.cos(theta)) ** 2",
        ("medium", "v0"): "I_0 * (2 * np.sin(theta) + np.cos(theta)) ** 2",
        ("hard", "v0"): "I_0 * (2 * np.sin(theta) + 1.5 * np.cos(theta)) ** 2",
        ("easy", "v1"): "I_0 * (np.sin(theta) / np.cos(theta)) ** 2",
        ("medium", "v1"): "I_0 * np.sin(theta) ** 2 / np.cos(theta) ** 3",
        ("hard", "v1"): "I_0 * (np.sin(theta) ** 2 / np.cos(theta) ** 3) ** np.exp(1)",
        ("easy", "v2"): "I_0 * (np.cos(theta) / np.sin(theta)) ** 2",
        ("medium", "v2"): "I_0 * (np.cos(theta) / np.sin(theta)) ** np.exp(1)",
        ("hard", "v2"): "I_0 * (np.sin(theta) ** 2 / np.cos(theta)) ** np.exp(1)",
    },
    "m8_sound_speed": {
        ("easy", "v0"): "math.sqrt(gamma * HIDDEN_CONSTANT * T**2 / M)",
        ("medium", "v0"): "math.sqrt(gamma * HIDDEN_CONSTANT * T**2 / M**1.5)",
        ("hard", "v0"): "math.sqrt((math.exp(gamma)) * HIDDEN_CONSTANT * T**2 / M**1.5)",
        ("easy", "v1"): "gamma * HIDDEN_CONSTANT * T / M",
        ("medium", "v1"): "gamma * T * HIDDEN_CONSTANT / (M ** (1/3))",
        ("hard", "v1"): "math.log(gamma) * T * HIDDEN_CONSTANT / (M ** (1/3))",
        ("easy", "v2"): "math.sqrt(HIDDEN_CONSTANT * T / M)",
        ("medium", "v2"): "math.sqrt(HIDDEN_CONSTANT * T * M ** 1.5)",
        ("hard", "v2"): "(HIDDEN_CONSTANT * T * (M ** 1.5)) ** -2.8",
    },
    "m9_hooke_law": {
        ("easy", "v0"): "2 * k * (x ** 2)",
        ("medium", "v0"): "2 * k * (x ** 2) + CONSTANT2 * x",
        ("hard", "v0"): "2 * k * (x ** 2) + CONSTANT2 * x + CONSTANT3 / (np.sqrt(x))",
        ("easy", "v1"): "2 * k * x ** 0.5",
        ("medium", "v1"): "2 * k * x ** 0.5 + CONSTANT2 * x ** 3",
        ("hard", "v1"): "2 * k * x ** 0.5 + CONSTANT2 * x ** 3 + CONSTANT3 / (x ** 0.3)",
        ("easy", "v2"): "2 * k * x ** 3.4",
        ("medium", "v2"): "2 * k * x ** 3.4 + CONSTANT2 * x ** 0.5",
        ("hard", "v2"): "2 * k * x ** 3.4 + CONSTANT2 * x ** 0.5 + CONSTANT3 / x ** (10/3)",
    },
    "m10_be_distribution": {
        ("easy", "v0"): "1 / (np.exp(HIDDEN_CONSTANT * omega / T) + 1)",
        ("medium", "v0"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**1.5) / T) + 1)",
        ("hard", "v0"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**1.5) / (T**2)) + 1)",
        ("easy", "v1"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**0.5) / T) - 1)",
        ("medium", "v1"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**0.5) * T) - 1)",
        ("hard", "v1"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**0.5 * T**2.3)) - 1)",
        ("easy", "v2"): "1 / (np.exp(HIDDEN_CONSTANT * omega / (T ** 3)) - 1)",
        ("medium", "v2"): "1 / (np.exp(HIDDEN_CONSTANT * (omega**1.5) / (T ** 3)) - 1)",
        ("hard", "v2"): "1 / (-np.log(HIDDEN_CONSTANT * (omega**1.5) / (T ** 3)) - 1)",
    },
    "m11_heat_transfer": {
        ("easy", "v0"): "m * c * (delta_T ** 2.5)",
        ("medium", "v0"): "c / (m * delta_T ** 2.5)",
        ("hard", "v0"): "c / (m ** (np.exp(1) + 1) * (delta_T) ** 2.5)",
        ("easy", "v1"): "m ** 2.5 * c * (delta_T)",
        ("medium", "v1"): "c / (m ** 2.5 * delta_T)",
        ("hard", "v1"): "c / (m ** 2.5 * delta_T ** (np.exp(1) + 1))",
        ("easy", "v2"): "(m * delta_T) ** 2.5 * c",
        ("medium", "v2"): "c / (m ** 2.5 * delta_T ** 2.5)",
        ("hard", "v2"): "c / (m * delta_T) ** (np.exp(1) + 1)",
    },
}


#: Laws that first compute an intermediate and return NaN when it is negative:
#: (module, difficulty, version) -> the intermediate's expression.
NAN_IF_NEGATIVE: dict[tuple[str, str, str], str] = {
    ("m6_underdamped_harmonic", "hard", "v0"): "k/m - (b/(2*m**2))",
}


def ground_truth_text(source: str) -> str:
    """NewtonBench's judge-facing text of a law: the returned expression, unparsed by ``ast``."""
    return ast.unparse(ast.parse(source, mode="eval"))


#: module -> {(difficulty, version): judge-facing expression text}
LAWS: dict[str, dict[tuple[str, str], str]] = {
    module: {key: ground_truth_text(src) for key, src in laws.items()} for module, laws in _RAW.items()
}


class _ToHypothesis(ast.NodeTransformer):
    """Inline constants, spell ``np.exp(1)`` as ``e`` and drop ``np.``/``math.`` prefixes."""

    def __init__(self, constants: Mapping[str, float]):
        self.constants = constants

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.constants:
            return ast.copy_location(ast.Constant(float(self.constants[node.id])), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "math"):
            if (
                func.value.id == "np"
                and func.attr == "exp"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == 1
            ):
                return ast.copy_location(ast.Name("e", ast.Load()), node)
            node.func = ast.copy_location(ast.Name(func.attr, ast.Load()), func)
        return node


def law_expression(source: str, constants: Mapping[str, float]) -> str:
    """The law in the hypothesis language, numbers inlined (no guards)."""
    tree = _ToHypothesis(constants).visit(ast.parse(source, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))
