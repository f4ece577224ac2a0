"""The symbolic agent's named knobs, counted from its source with ``ast`` (docs/guide/model-selection.md, "Knobs").

A knob is a module-level UPPER_CASE name in ``etc_fast/policies/symbolic/`` bound to a number or a
boolean literal, or a number or boolean default of a dataclass field other than the record fields
that only say "absent" (``0``, ``False``, ``None``). ``SearchLimits``' count caps are counted
separately: they bound the enumeration's work, not what the agent decides.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import etc_fast.policies.symbolic as symbolic

PACKAGE = Path(symbolic.__file__).parent
UPPER = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
COUNT_CAPS = "SearchLimits"

#: The ceiling this test holds the agent to (docs/guide/model-selection.md, "Knobs").
MAX_KNOBS = 20
#: ``SearchLimits``' count caps (the memory bound among them); a new one must be argued for.
MAX_COUNT_CAPS = 44


def _number(node: ast.AST) -> object:
    """The literal number or boolean ``node`` is (a negated one too), else ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
        return node.value
    return None


def _is_dataclass(cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "dataclass" or \
                isinstance(target, ast.Name) and target.id == "dataclass":
            return True
    return False


def knobs(source: str) -> tuple[list[str], list[str], list[str]]:
    """``(module constants, dataclass defaults, count caps)`` named in one module's source."""
    consts, defaults, caps = [], [], []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        elif isinstance(node, ast.ClassDef) and _is_dataclass(node):
            for f in node.body:
                if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name) and f.value is not None:
                    v = _number(f.value)
                    if v is None or v is False or (v == 0 and node.name != COUNT_CAPS):
                        continue
                    (caps if node.name == COUNT_CAPS else defaults).append(f"{node.name}.{f.target.id}")
            continue
        else:
            continue
        if UPPER.match(name) and _number(value) is not None:
            consts.append(name)
    return consts, defaults, caps


def count(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Every knob of the package by kind, each written ``module:name``."""
    out: dict[str, list[str]] = {"constants": [], "defaults": [], "caps": []}
    for path in sorted(package.glob("*.py")):
        for kind, names in zip(out, knobs(path.read_text(encoding="utf-8"))):
            out[kind] += [f"{path.stem}:{n}" for n in names]
    return out


def test_the_counter_sees_every_kind_of_knob():
    src = ("import dataclasses\nA = 1\n_B = -2.5\nC = True\nd = 3\nE = (1, 2)\nF: float = 0.1\n"
           "@dataclasses.dataclass\nclass K:\n    x: int = 4\n    y: bool = False\n    z: int = 0\n"
           "@dataclasses.dataclass(frozen=True)\nclass SearchLimits:\n    a: int = 0\n    b: int = 5\n")
    consts, defaults, caps = knobs(src)
    assert consts == ["A", "_B", "C", "F"]
    assert defaults == ["K.x"]
    assert caps == ["SearchLimits.a", "SearchLimits.b"]


def test_the_agent_keeps_few_named_knobs():
    got = count()
    n = len(got["constants"]) + len(got["defaults"])
    assert n <= MAX_KNOBS, f"{n} knobs (ceiling {MAX_KNOBS}): {got['constants'] + got['defaults']}"
    assert len(got["caps"]) <= MAX_COUNT_CAPS, got["caps"]


def test_no_flag_is_always_on():
    """A module-level boolean the code never changes is just code: none is left."""
    flags = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(_number(node.value), bool):
                flags.append(f"{path.stem}:{node.targets[0].id}")
    assert flags == []


def test_every_knob_is_in_the_knob_table():
    """Each counted knob has its row (its derivation or measurement) in the page's knob table, and
    the page states the count the ceiling holds."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "model-selection.md").read_text(encoding="utf-8")
    table = page.split("## Knobs", 1)[1]
    got = count()
    missing = [k for k in got["constants"] + got["defaults"] if k.split(":")[1].split(".")[-1] not in table]
    assert missing == []
    n = len(got["constants"]) + len(got["defaults"])
    assert f"has {n} today" in table
