"""No import cycle among the project's modules, counting imports inside functions and under
TYPE_CHECKING (read from the source with ast), and the layering the packages promise:
extensions (the Registry every layer uses) imports nothing of the project; validation, eegtools
and braintools never import the controller; the toolsets (which run in the sandbox's kernel)
need nothing but the tool core in eegtools and extensions; nothing imports the Inspect tasks (eegbench/); a model client never depends
on the run store, nor the run settings on the executors or paradigms they name; and no
hand-written module of the packages is over 500 lines."""
from __future__ import annotations

from pathlib import Path

from tests.import_graph import find_cycle, import_graph, reachable

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["eegbench", "extensions", "runner", "validation", "eegtools", "braintools", "reference_scripts"]


def test_the_project_has_no_import_cycle():
    graph = import_graph(PROJECT_ROOT, PACKAGES)
    assert {"validation.units", "validation.agentbench.units", "runner.run.store", "eegtools.tools"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_lower_layers_never_import_the_controller():
    graph = import_graph(PROJECT_ROOT, PACKAGES)
    for module, targets in graph.items():
        if module.split(".")[0] in ("extensions", "validation", "eegtools", "braintools", "reference_scripts"):
            assert not any(t.startswith("runner") for t in targets), (module, sorted(targets))
        if not module.startswith("eegbench"):  # the Inspect tasks sit on top: nothing imports them
            assert not any(t.split(".")[0] == "eegbench" for t in targets), (module, sorted(targets))
        if module.startswith("extensions"):
            assert all(t.startswith("extensions") for t in targets), (module, sorted(targets))
        if module.startswith("eegtools"):
            assert all(t.split(".")[0] in ("eegtools", "extensions") for t in targets), (module, sorted(targets))
        if module.startswith("braintools"):
            assert all(t.split(".")[0] in ("braintools", "eegtools", "extensions") for t in targets), (module, sorted(targets))


def test_model_clients_and_run_settings_sit_below_the_run():
    graph = import_graph(PROJECT_ROOT, PACKAGES)
    clients = [m for m in graph if m.startswith("runner.models")]
    assert "runner.models.replay" in clients and "runner.models.kinds" in clients
    for module in clients:
        assert "runner.run.store" not in reachable(graph, module), module
    settings = reachable(graph, "runner.core.config")
    assert not {m for m in settings if m.startswith(("runner.run", "runner.paradigms", "runner.sandbox"))}, settings


def test_no_hand_written_module_is_over_500_lines():
    long = {str(path.relative_to(PROJECT_ROOT)): n for package in PACKAGES
            for path in (PROJECT_ROOT / package).rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500}
    assert not long, long


def test_unit_registry_is_a_leaf():
    """The registry imports the Registry and Unit types and the errors only; the units do not import it."""
    graph = import_graph(PROJECT_ROOT, ["extensions", "validation"])
    assert graph["validation.unit_registry"] == {"extensions", "extensions.registry", "validation.errors", "validation.unit"}
    for module in ("validation.units", "validation.agentbench.units", "validation.judge",
                   "validation.artifacts.check", "validation.unit"):
        assert "validation.unit_registry" not in graph[module], module


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_cycle_is_found_through_relative_and_package_imports(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from . import b\n",
        "pkg/sub/__init__.py": "import pkg.a\n",  # the old agentbench/__init__ trick
        "pkg/b.py": "from pkg.sub.c import X\n",
        "pkg/sub/c.py": "X = 1\n",
    })
    cycle = find_cycle(import_graph(tmp_path, ["pkg"]))
    assert cycle is not None and cycle[0] == cycle[-1]
    assert {"pkg.a", "pkg.b", "pkg.sub"} <= set(cycle)
    # without the parent-package edges, b -> pkg.sub.c does not run pkg/sub/__init__
    assert find_cycle(import_graph(tmp_path, ["pkg"], include_parents=False)) is None


def test_imports_in_functions_and_under_type_checking_count(tmp_path):
    write(tmp_path, {
        "lazy/__init__.py": "",
        "lazy/a.py": "def f():\n    from lazy import b\n",
        "lazy/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lazy.a import f\n",
        "lazy/c.py": "import lazy.b\n",
    })
    graph = import_graph(tmp_path, ["lazy"])
    assert graph["lazy.a"] == {"lazy.b"} and graph["lazy.b"] == {"lazy.a"}
    assert sorted(find_cycle(graph) or []) == ["lazy.a", "lazy.a", "lazy.b"]
    assert reachable(graph, "lazy.c") == {"lazy.a", "lazy.b"}


def test_a_package_importing_its_own_submodules_is_no_cycle(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import A\nfrom pkg import b\n",
        "pkg/a.py": "from pkg.b import B\nA = B\n",
        "pkg/b.py": "B = 1\n",
    })
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": {"pkg.a", "pkg.b"}, "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert find_cycle(graph) is None
