"""Every public function and class in etc_fast/ and kernels/ has a docstring.

Public here means a top-level ``def`` or ``class`` whose name does not start with ``_``, in any module
(a private module's unprefixed names are what its package imports and re-exports), plus whatever a
package's ``__all__`` exports under another name. ``@overload`` stubs are skipped: the implementation
below them carries the docstring. Methods are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("etc_fast", "kernels")

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _dotted(root: Path, path: Path) -> str:
    """The module name of ``path`` under ``root`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _dunder_all(tree: ast.Module) -> set[str]:
    """The names listed in a module's literal ``__all__`` (empty when there is none)."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return set()
    return set()


def _exported(trees: dict[Path, ast.Module], root: Path) -> set[tuple[str, str]]:
    """``(module, name)`` for each definition a package's ``__all__`` exports through an import."""
    out: set[tuple[str, str]] = set()
    for path, tree in trees.items():
        names = _dunder_all(tree)
        if not names:
            continue
        module = _dotted(root, path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            out.update((source, a.name) for a in node.names if (a.asname or a.name) in names)
    return out


def _is_overload(node: Definition) -> bool:
    """Whether ``node`` is decorated with ``typing.overload`` (written ``overload`` or ``typing.overload``)."""
    for dec in node.decorator_list:
        if isinstance(dec, ast.Name) and dec.id == "overload":
            return True
        if isinstance(dec, ast.Attribute) and dec.attr == "overload":
            return True
    return False


def undocumented(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """``path:line name`` for each public top-level function or class under ``root/<package>`` with no docstring."""
    trees = {
        path: ast.parse(path.read_text(), filename=str(path))
        for top in packages
        for path in sorted((root / top).rglob("*.py"))
    }
    exported = _exported(trees, root)
    missing = []
    for path, tree in trees.items():
        module = _dotted(root, path)
        for node in tree.body:
            if not isinstance(node, Definition) or _is_overload(node):
                continue
            public = not node.name.startswith("_") or (module, node.name) in exported
            if public and ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    return missing


def test_every_public_function_and_class_has_a_docstring():
    missing = undocumented()
    assert missing == [], f"{len(missing)} public functions/classes without a docstring:\n" + "\n".join(missing)


def test_the_count_sees_what_it_should(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""A package."""\nfrom ._impl import _hidden as shown\n__all__ = ["shown"]\n')
    (pkg / "_impl.py").write_text(
        "from typing import overload\n"
        "def public(x):\n    return x\n"  # counted: public name in a private module
        "def _private(x):\n    return x\n"  # not counted
        "def _hidden(x):\n    return x\n"  # counted: exported by __all__ under another name
        "class Thing:\n    def method(self):\n        return 1\n"  # the class counted, not its method
        "@overload\ndef over(x: int) -> int: ...\n"  # stub skipped
        'def over(x):\n    """Documented."""\n    return x\n'
        'async def fetch():\n    """Documented."""\n'
    )
    assert [m.split(" ")[1] for m in undocumented(tmp_path, ("pkg",))] == ["public", "_hidden", "Thing"]
