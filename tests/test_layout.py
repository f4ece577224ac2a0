"""etc_fast's files depend one way: no import circle, counting imports inside functions too.

A function-level import hides a circle from Python (it only runs later) but not from a reader: two
files that import each other are one file in two pieces. The graph here has an edge from each
module to every etc_fast module it imports anywhere in its text (``from pkg import name`` counts as
the submodule ``pkg.name`` when there is one, else as ``pkg``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "etc_fast"


def _modules(root: Path, top: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (path, is a package __init__)}`` for every .py file under ``root/top``."""
    out = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def import_graph(root: Path = ROOT, top: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of package ``top`` it imports (module level and inside functions alike)."""
    mods = _modules(root, top)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, (path, is_pkg) in mods.items():
        package = mod if is_pkg else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                names = [f"{source}.{a.name}" if f"{source}.{a.name}" in mods else source for a in node.names]
            else:
                continue
            targets.update(t for n in names if n.split(".")[0] == top and (t := known(n)) is not None)
        targets.discard(mod)
        graph[mod] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycle_finder_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / PACKAGE / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "_a.py").write_text("from etc_fast.sub._b import thing\n")
    (pkg / "_b.py").write_text("def f():\n    from . import _c\n")
    (pkg / "_c.py").write_text("def g():\n    from etc_fast.sub import _a\n")
    (pkg / "_d.py").write_text("import etc_fast.sub._a\n")
    graph = import_graph(tmp_path)
    assert graph["etc_fast.sub._b"] == {"etc_fast.sub._c"}
    assert graph["etc_fast.sub._d"] == {"etc_fast.sub._a"}
    assert cycles(graph) == [["etc_fast.sub._a", "etc_fast.sub._b", "etc_fast.sub._c"]]


def test_etc_fast_has_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    assert not found, "import circles in etc_fast (module-level and function-level imports): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_kernels_have_no_import_cycles():
    graph = import_graph(top="kernels")
    assert "kernels.step" in graph and "kernels.select" in graph["kernels.step"]  # the walk found the files
    found = cycles(graph)
    assert not found, "import circles in kernels (module-level and function-level imports): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_no_kernel_file_is_over_500_lines():
    kernels_dir = Path(__file__).resolve().parents[1] / "kernels"
    long = {p.name: n for p in sorted(kernels_dir.glob("*.py")) if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"kernel files over 500 lines (split them, docs/contributing.md): {long}"


def test_kernels_init_imports_its_submodules_explicitly():
    init = (Path(__file__).resolve().parents[1] / "kernels" / "__init__.py").read_text()
    assert "importlib" not in init and "import_module" not in init
