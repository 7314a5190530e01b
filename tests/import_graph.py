"""The import graph of Python packages, read from their source (nothing is imported).

`import_graph(root, ["validation"])` maps every module of the packages under `root` to the
modules of those packages it imports anywhere in its source: at module level, inside
functions (lazy imports run later, but they run) and under `if TYPE_CHECKING:` (a type a
module names is a dependency too, and a cycle through it is a tangle a reader must hold in
their head). Importing `a.b.c` also loads the packages `a` and `a.b`, so by default those are
edges too, except the importing module's own ancestors: they are already being loaded when it
runs (a package's __init__ importing its submodules is no cycle). `find_cycle(graph)` returns
one cycle as a list of modules, or None; `reachable(graph, module)` what a module depends on,
directly or not. Pass more packages (e.g. ["validation", "runner"]) to check them together.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Module name -> source file, for every .py file of the packages (under root)."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def import_graph(root: Path, packages: Iterable[str], include_parents: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of `packages` it imports (anywhere in its source)."""
    files = module_files(root, packages)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), filename=str(path))):
            for name in _imported_names(node, module, is_package, files):
                targets.update(_with_parents(name) if include_parents else [name])
        loading = set(_with_parents(module))  # the module and its ancestors
        graph[module] = {t for t in targets if t in files and t not in loading}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None when the graph is acyclic."""
    state: dict[str, str] = {}  # "open": on the current path; "done": fully explored
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        state[start] = "open"
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                state[path.pop()] = "done"
            elif state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = "open"
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def reachable(graph: dict[str, set[str]], module: str) -> set[str]:
    """Every module `module` depends on, directly or through others."""
    seen: set[str] = set()
    pending = [module]
    while pending:
        for target in graph.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def _imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
                    files: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    # `from pkg import name`: name is a submodule, or something defined in pkg
    return [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in files]


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
