"""The generated reference pages match the code, and the configuration table is what validates."""

from __future__ import annotations

import dataclasses

import pytest

from etc_fast.docs import COMMAND, PAGES, attribute_docs, render_pages, stale_pages
from etc_fast.docs.__main__ import main
from etc_fast.runner import ABLATION_KNOBS, CONFIG_KEYS, ConfigError, GridConfig, parse_config
from tests.docs._site import DOCS


@pytest.fixture(scope="module")
def pages():
    return render_pages()


def test_committed_pages_match_the_code(pages):
    stale = [rel for rel, text in pages.items() if not (DOCS / rel).is_file() or (DOCS / rel).read_text(encoding="utf-8") != text]
    assert stale == [], f"docs/{', docs/'.join(stale)} out of date: run `{COMMAND}` and commit the result"


def test_every_validated_key_is_documented(pages):
    config = pages["reference/config.md"]
    for key in CONFIG_KEYS:
        assert f"| `{key.name}` |" in config, key.path
        for value in key.allowed:
            assert f"`{value}`" in config
    for knob in ABLATION_KNOBS:
        assert f"| `{knob}` |" in config


def test_the_table_is_what_the_parser_accepts():
    """An unknown key in each section is refused with exactly the table's keys listed as allowed."""
    grid = {"model": "symbolic", "configurations": ["variance_n"], "tasks": ["m0_gravity"]}
    sections = {"": {}, "ray": {"ray": {}}, "llm": {"llm": {}}, "llm.cache": {"llm": {"cache": {}}},
                "sandbox": {"sandbox": {}}, "analysis": {"analysis": {}}, "grids[]": {}}
    assert {k.section for k in CONFIG_KEYS} == set(sections)
    for section, doc in sections.items():
        doc = {"name": "t", "grids": [dict(grid)], **doc}
        if section == "grids[]":
            doc["grids"][0]["bogus_key"] = 1
        elif section:
            target = doc
            for part in section.split("."):
                target = target[part]
            target["bogus_key"] = 1
        else:
            doc["bogus_key"] = 1
        with pytest.raises(ConfigError) as err:
            parse_config(doc, source="t.yaml")
        allowed = err.value.message.split("allowed keys: ", 1)[1].split(", ")
        assert allowed == [k.name for k in CONFIG_KEYS if k.section == section], section
    assert [k.name for k in CONFIG_KEYS if k.section == "grids[]"] == [f.name for f in dataclasses.fields(GridConfig)]


def test_closed_sets_are_validated():
    """Each key with allowed values refuses a value outside them, naming the key."""
    for key in CONFIG_KEYS:
        if not key.allowed:
            continue
        doc: dict = {"name": "t", "grids": [{"model": "symbolic", "configurations": ["variance_n"], "tasks": ["m0_gravity"]}]}
        parts = key.path.split(".")
        if parts[0] == "grids[]":
            doc["grids"][0][parts[1]] = ["not-a-value"]
            where = f"grids[0].{parts[1]}[0]"
        else:
            target = doc
            for part in parts[:-1]:
                target = target.setdefault(part, {})
            target[parts[-1]] = "not-a-value"
            where = key.path
        with pytest.raises(ConfigError) as err:
            parse_config(doc, source="t.yaml")
        assert err.value.key == where and ", ".join(key.allowed) in err.value.message


def test_attribute_docs_reads_google_style_sections():
    class Example:
        """Something.

        Attributes:
            first: One line.
            second: Two lines, the second
                indented, with a word broken at a hyph-
                en.
            a / b: Shared text.

        Other text.
        """

    assert attribute_docs(Example) == {"first": "One line.", "second": "Two lines, the second indented, with a word "
                                       "broken at a hyph-en.", "a": "Shared text.", "b": "Shared text."}


def test_command_writes_checks_and_refuses(tmp_path, capsys):
    assert main(["--docs", str(tmp_path / "missing")]) == 2
    assert main(["--docs", str(tmp_path), "--check"]) == 1
    assert f"run `{COMMAND}`" in capsys.readouterr().err
    assert main(["--docs", str(tmp_path)]) == 0
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md")) == sorted(PAGES)
    assert main(["--docs", str(tmp_path), "--check"]) == 0 and stale_pages(tmp_path) == []
    page = tmp_path / "reference" / "cli.md"
    page.write_text(page.read_text() + "edited\n")
    assert main(["--docs", str(tmp_path), "--check"]) == 1
    assert "reference/cli.md: out of date" in capsys.readouterr().err


def test_api_pages_show_sphinx_roles_as_code():
    pytest.importorskip("griffe", reason="the docs extra is not installed (pip install -e '.[docs]')")
    from etc_fast.docs._griffe import drop_roles

    assert drop_roles("see :func:`plan_step`, :class:`~etc_fast.core.TrialSpec` and :mod:`kernels`.") == (
        "see `plan_step`, `etc_fast.core.TrialSpec` and `kernels`.")
    assert drop_roles("a ``literal`` and time: 3 s") == "a ``literal`` and time: 3 s"


def test_results_pages_join_the_nav(tmp_path):
    """Every generated results page is listed under Results after the pages mkdocs.yml names."""
    from etc_fast.docs._hooks import results_nav

    (tmp_path / "results").mkdir()
    for name in ("index", "noise", "full"):
        (tmp_path / "results" / f"{name}.md").write_text("# x\n")
    nav = results_nav(tmp_path, [{"Overview": "results/index.md"}])
    assert nav == [{"Overview": "results/index.md"}, {"full": "results/full.md"}, {"noise": "results/noise.md"}]
