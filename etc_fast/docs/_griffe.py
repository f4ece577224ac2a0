"""A Griffe extension for the API pages: the docstrings' Sphinx roles as Markdown code.

The docstrings name other objects as ``:func:`name```, ``:class:`~pkg.Name``` and so on, which
Markdown would show as written. mkdocstrings loads this extension (``mkdocs.yml``) and each
docstring reaches the page with the role dropped and the name kept as code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|ref|term):`~?([^`<]+?)(?:\s*<[^>]*>)?`")


def drop_roles(text: str) -> str:
    """``text`` with each Sphinx role replaced by its target as inline code."""
    return _ROLE.sub(lambda m: f"`{m.group(1).strip()}`", text)


class SphinxRoles(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`drop_roles`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called by Griffe for each object it loads."""
        if obj.docstring is not None:
            obj.docstring.value = drop_roles(obj.docstring.value)
