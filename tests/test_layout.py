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


# ----------------------------------------------------------------------------------------
# Packages: one-way between packages too, private names kept private, layers respected
# ----------------------------------------------------------------------------------------
#: Targets (issue "one loop, many labs"): at most this many private imports across packages and
#: imports up the layers, each a known, listed exception.
MAX_PRIVATE_IMPORTS = 10
MAX_UPWARD_IMPORTS = 3

#: etc_fast's layers, bottom to top: a module may import its own layer and the ones below. The
#: root's private helpers (``etc_fast._portable`` and the like) belong to every package.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kernels",),
    ("etc_fast", "etc_fast.core", "etc_fast.errors"),
    ("etc_fast.laws",),
    ("etc_fast.expr", "etc_fast.sandbox", "etc_fast.sampling"),
    ("etc_fast.systems", "etc_fast.diagnostics", "etc_fast.acquisition"),
    ("etc_fast.tasks",),
    ("etc_fast.llm", "etc_fast.evaluate"),
    ("etc_fast.labs",),
    ("etc_fast.policies", "etc_fast.protocol"),
    ("etc_fast.store",),
    ("etc_fast.report",),
    ("etc_fast.runner",),
    ("etc_fast.run", "etc_fast.replay"),
    ("etc_fast.results",),
    ("etc_fast.docs",),  # renders reference pages from every layer below
)


def package_of(module: str) -> str:
    """The package a module belongs to: ``etc_fast.<first part>`` (the root's own modules belong to
    ``etc_fast``), or ``kernels``."""
    parts = module.split(".")
    if parts[0] == "kernels":
        return "kernels"
    if len(parts) == 1 or parts[1] in ("__init__",) or parts[1].startswith("_"):
        return "etc_fast"
    return ".".join(parts[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, bs in graph.items():
        pa = package_of(a)
        out.setdefault(pa, set())
        for b in bs:
            if package_of(b) != pa:
                out[pa].add(package_of(b))
    return out


def private_imports(root: Path = ROOT) -> list[str]:
    """Import statements that reach into another package's private module or name.

    A name or module starting with ``_`` is private to the package that holds it (``etc_fast._x``
    to etc_fast as a whole, ``etc_fast.systems._forward`` to ``etc_fast.systems``, ``kernels._checks``
    to kernels); importing it from outside is a private import. Counted once per statement.
    """
    found = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        mod = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                continue
            src = node.module.split(".")
            if src[0] not in (PACKAGE, "kernels"):
                continue
            for a in node.names:
                full = [*src, a.name]
                cut = next((i for i, p in enumerate(full) if i > 0 and p.startswith("_") and p != "__init__"), None)
                if cut is None:
                    continue
                owner = ".".join(full[:cut])
                if mod != owner and not mod.startswith(owner + "."):
                    found.append(f"{mod}: from {node.module} import {a.name}")
                    break
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a module of a lower layer (:data:`LAYERS`) up to a higher one."""
    level = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
    found = []
    for a, bs in sorted(graph.items()):
        for b in sorted(bs):
            la, lb = level.get(package_of(a)), level.get(package_of(b))
            if la is not None and lb is not None and lb > la:
                found.append(f"{a} -> {b}")
    return found


def test_every_package_has_a_layer():
    missing = sorted({package_of(m) for m in import_graph()} - {p for layer in LAYERS for p in layer})
    assert not missing, f"packages with no layer in LAYERS (add them): {missing}"


def test_packages_import_one_way():
    found = cycles(package_graph(import_graph()))
    assert not found, "package-level import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_private_names_stay_in_their_package():
    found = private_imports()
    assert len(found) <= MAX_PRIVATE_IMPORTS, f"{len(found)} private imports across packages:\n" + "\n".join(found)


def test_lower_layers_do_not_import_higher_ones():
    found = upward_imports(import_graph())
    assert len(found) <= MAX_UPWARD_IMPORTS, f"{len(found)} imports up the layers:\n" + "\n".join(found)


def test_layout_checks_see_what_they_claim(tmp_path):
    pkg = tmp_path / PACKAGE
    for sub in ("labs", "core"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "_a.py").write_text("def f():\n    from etc_fast.labs import thing\n")
    (pkg / "labs" / "_b.py").write_text("from etc_fast.core._a import f\nfrom etc_fast.core import _hidden\n")
    (pkg / "core" / "_c.py").write_text("from etc_fast.core._a import f\n")
    graph = import_graph(tmp_path)
    assert cycles(package_graph(graph)) == [["etc_fast.core", "etc_fast.labs"]]
    assert private_imports(tmp_path) == ["etc_fast.labs._b: from etc_fast.core._a import f",
                                         "etc_fast.labs._b: from etc_fast.core import _hidden"]
    assert upward_imports(graph) == ["etc_fast.core._a -> etc_fast.labs"]
