"""Both packages ship a PEP 561 marker, so type checkers of code that imports them read their annotations."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", ["etc_fast", "kernels"])
def test_py_typed_present_and_declared(package):
    assert (ROOT / package / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"][package]
