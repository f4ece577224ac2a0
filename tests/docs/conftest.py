"""The documentation site, built once per test session (strict, into a temporary folder)."""

from __future__ import annotations

import pytest

from tests.docs._site import build, missing_packages, unavailable


@pytest.fixture(scope="session")
def site_build(tmp_path_factory):
    """``(site folder, completed mkdocs process)``; the build is not checked here."""
    missing = missing_packages()
    if missing:
        unavailable(f"the docs extra is not installed (missing {', '.join(missing)}; pip install -e '.[docs]')")
    dest = tmp_path_factory.mktemp("site") / "site"
    return dest, build(dest)


@pytest.fixture(scope="session")
def site(site_build):
    """The built site's folder; fails when the strict build failed, with MkDocs' output."""
    dest, proc = site_build
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
    return dest
