"""docs/tasks.md stays true: its field table is the loader's key sets, and its examples, quoted
errors and judge verdicts are what the code does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from etc_fast.tasks import TaskError, get_task
from etc_fast.tasks import _custom as custom

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tasks.md"
TEXT = DOC.read_text(encoding="utf-8")


def _block(marker: str, lang: str) -> str:
    """The fenced block of ``lang`` right after the comment ``<!-- marker -->``."""
    m = re.search(rf"<!-- {re.escape(marker)} -->\s*```{lang}\n(.*?)```", TEXT, re.S)
    assert m, f"docs/tasks.md has no ```{lang} block after <!-- {marker} -->"
    return m.group(1)


def _section(heading: str) -> str:
    """The text under ``## heading`` up to the next ``## ``."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", TEXT, re.S | re.M)
    assert m, f"docs/tasks.md has no section '## {heading}'"
    return m.group(1)


def _table_rows(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``text``, as stripped cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, "no table found"
    return rows[2:]  # header and the |---| line


def _code(cell: str) -> str:
    m = re.fullmatch(r"`([^`]*)`(.*)", cell)
    assert m, f"expected a cell starting with `code`, got {cell!r}"
    return m.group(1)


def _accepted() -> dict[str, bool]:
    """Every field the loader accepts, as the doc's table names it, -> whether it is required."""
    fields = {k: True for k in custom._TOP_REQUIRED} | {k: False for k in custom._TOP_OPTIONAL}
    fields |= {f"output.{k}": True for k in custom._OUTPUT_FIELDS}
    fields |= {f"variables[].{k}": True for k in custom._VAR_REQUIRED}
    fields |= {f"variables[].{k}": False for k in custom._VAR_OPTIONAL}
    return fields


def _example_task_text() -> str:
    return _block("example task file", "yaml")


def _write_example(root: Path, text: str | None = None) -> Path:
    rel = re.search(r"Save this as `([^`]+)`", TEXT)
    assert rel, "docs/tasks.md no longer says where to save the example task file"
    path = root / rel.group(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_example_task_text() if text is None else text, encoding="utf-8")
    return path


def test_field_table_is_exactly_what_the_loader_accepts():
    rows = _table_rows(_section("Every field"))
    documented = {_code(r[0]): r[2] for r in rows}
    accepted = _accepted()
    assert not set(accepted) - set(documented), f"fields the loader accepts but the doc lacks: {set(accepted) - set(documented)}"
    assert not set(documented) - set(accepted), f"fields the doc lists but the loader refuses: {set(documented) - set(accepted)}"
    for field, required in accepted.items():
        says_required = documented[field] == "required"
        assert says_required == required, f"{field}: the doc says {documented[field]!r}, the loader has it {'required' if required else 'optional'}"
    assert all(len(r) == 5 and r[4] for r in rows), "every field row needs a type, required/default, meaning and example"


def test_example_uses_every_field():
    import yaml

    doc = yaml.safe_load(_example_task_text())
    used = {k for k in doc if k not in ("output", "variables")} | {"output", "variables"}
    used |= {f"output.{k}" for k in doc["output"]}
    used |= {f"variables[].{k}" for v in doc["variables"] for k in v}
    assert used == set(_accepted())


def test_example_task_loads_and_its_law_evaluates(tmp_path):
    import yaml

    from etc_fast.sampling import candidate_pool

    path = _write_example(tmp_path)
    task = get_task(str(path))
    doc = yaml.safe_load(_example_task_text())
    assert task.name == doc["name"] and task.constants == doc["constants"]
    assert task.signature == f"def discovered_law({', '.join(v['name'] for v in doc['variables'])}):"
    X = candidate_pool(task, seed=0, n=16)
    for j, v in enumerate(doc["variables"]):
        assert ((X[:, j] >= v["low"]) & (X[:, j] <= v["high"])).all()
    y = task.truth(X)
    assert np.isfinite(y).all()
    # the law as Python reads it, with NumPy's functions and the named constants by value
    names = {"pi": np.pi, "e": np.e, "np": np, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, **doc["constants"]}
    cols = {v["name"]: X[:, j] for j, v in enumerate(doc["variables"])}
    expected = eval(doc["law"], names, cols)  # noqa: S307 - the doc's own example law
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_python_example_prints_what_it_says(tmp_path, monkeypatch, capsys):
    _write_example(tmp_path)
    monkeypatch.chdir(tmp_path)
    block = _block("example python", "python")
    exec(compile(block, "docs/tasks.md example", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    for printed, line in zip(out, [ln for ln in block.splitlines() if ln.startswith("print(")]):
        comment = line.split("#", 1)[1].strip()
        if comment.startswith("def "):
            assert printed == comment
        else:
            value = float(re.search(r"about ([0-9.]+)", comment).group(1))
            assert float(printed.strip("[]")) == pytest.approx(value, rel=2e-3)


def test_run_config_is_valid(tmp_path, monkeypatch):
    from etc_fast.runner import load_config

    path = _write_example(tmp_path)
    (tmp_path / "sphere_drag.yaml").write_text(_block("example run config", "yaml"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config = load_config("sphere_drag.yaml")
    tasks = [t for g in config.grids for t in g.tasks]
    assert tasks == [str(path.relative_to(tmp_path))]


def test_quoted_cli_error_is_the_runs(tmp_path, monkeypatch, capsys):
    from etc_fast.run import main

    m = re.search(r"^error: (.*)$", TEXT, re.M)
    assert m
    quoted = m.group(1)
    bad = re.search(r"got the text '([^']+)'", quoted).group(1)
    good = re.search(r"write it as (\S+)$", quoted).group(1)
    text = _example_task_text()
    assert f"low: {good}\n" in text
    _write_example(tmp_path, text.replace(f"low: {good}\n", f"low: {bad}\n"))
    (tmp_path / "sphere_drag.yaml").write_text(_block("example run config", "yaml"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["sphere_drag.yaml", "--dry-run"]) == 2
    assert quoted in capsys.readouterr().err


_LAW_SECTION = _section("The law language")
LAW_ERRORS = _table_rows("| you write |" + _LAW_SECTION.split("| you write |", 1)[1])


@pytest.mark.parametrize("row", LAW_ERRORS, ids=[r[0][:40] for r in LAW_ERRORS])
def test_quoted_law_errors(tmp_path, row):
    line = _code(row[0])
    key = line.split(":", 1)[0]
    text = _example_task_text()
    old = next(ln for ln in text.splitlines() if ln.lstrip().startswith(f"{key}:"))
    indent = old[: len(old) - len(old.lstrip())]
    path = _write_example(tmp_path, text.replace(old + "\n", indent + line + "\n", 1))
    with pytest.raises(TaskError) as err:
        get_task(str(path))
    assert f"{path.name}: {_code(row[1])}" in str(err.value)


@pytest.mark.parametrize("name", sorted(custom._reserved()))
def test_reserved_names_are_listed(name):
    assert f"`{name}`" in _section("The law language")


def test_allowed_functions_are_listed():
    """The docs' table of functions is the law language's table: every name (canonical and alias)
    in it, and no other function listed."""
    from etc_fast.expr._functions import NAMES

    rows = _table_rows(_LAW_SECTION)
    listed = set()
    for row in rows:
        listed |= set(re.findall(r"`([a-z0-9]+)(?:\(|`)", row[0] + " " + row[1]))
    listed -= {"x", "y", "a", "b"}
    assert listed == set(NAMES), (sorted(listed - set(NAMES)), sorted(set(NAMES) - listed))


def _verdict_rows(marker: str) -> list[tuple[str, bool, str]]:
    start = TEXT.index(f"<!-- verdicts: {marker} -->")
    rows = _table_rows(TEXT[start:])
    return [(_code(r[0]), {"yes": True, "no": False}[r[1]], _code(r[2])) for r in rows]


def _judge(task, rows):
    from etc_fast.evaluate import create_judge

    judge = create_judge("structural")
    for body, credited, reason in rows:
        source = f"{task.signature}\n    return {body}\n"
        v = judge.judge(source, task)
        assert v.credited == credited, f"{body}: {v.reason}"
        assert v.reason.startswith(reason.removesuffix("...").rstrip()), f"{body}: {v.reason}"


def test_judge_verdicts_on_the_example(tmp_path):
    rows = _verdict_rows("the example task")
    assert {c for _, c, _ in rows} == {True, False}
    _judge(get_task(str(_write_example(tmp_path))), rows)


def test_judge_verdicts_without_constants(tmp_path):
    law = re.search(r"without the `constants:` block, as `(law: [^`]+)`", TEXT.replace("\n", " ")).group(1)
    lines = _example_task_text().splitlines()
    i = lines.index("constants:")
    kept = [ln for k, ln in enumerate(lines) if k not in (i, i + 1)]
    text = "\n".join(law if ln.startswith("law:") else ln for ln in kept) + "\n"
    assert "Cd" not in text.split("law:", 1)[1]
    task = get_task(str(_write_example(tmp_path, text)))
    assert task.constants == {}
    _judge(task, _verdict_rows("without constants"))
