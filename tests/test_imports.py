"""Every module of dbfs and graph500 imports, and no module imports itself through others: the import
graph, read from the modules' source (imports inside functions included, since they close a cycle at
run time just the same), has no cycle."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_rank

PACKAGES = ("dbfs", "graph500")


def modules() -> dict[str, Path]:
    """Every module and package of PACKAGES (as installed or on the path): name -> source file."""
    found = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        found[package] = Path(root.__file__)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            found[info.name] = Path(importlib.util.find_spec(info.name).origin)
    return found


def imported_names(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    # `import a.b.c` also runs a and a.b; the cycle test needs only the deepest module named
    return {t for t in targets if t in known and t != name}


def import_graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imported_names(name, path, set(found)) for name, path in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or a module importing itself
    (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    out.append(sorted(component))
    return out


@pytest.mark.parametrize("name", sorted(m for m in modules() if not m.endswith(".__main__")))
def test_every_module_imports(name):
    importlib.import_module(name)


def test_no_import_cycles():
    graph = import_graph()
    assert {"dbfs.harness", "dbfs.convert", "graph500.stats"} <= set(graph)
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["e"]]
