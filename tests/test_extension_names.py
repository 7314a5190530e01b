"""No code outside a unit's or a model kind's own module switches on its name: behaviour that
differs by unit (ensemble rule, chance, family) or by model kind (builders, whether it parses,
whether it is remote) is carried by the registered object, so adding one is one module.

Read from the source with ast. A metric type's name appears only in the units' modules and in
the task specs that choose a task's unit; a model kind's name (one that is not also an
everyday word) is never compared against outside runner/models."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import validation.builtin_units  # noqa: F401 (registers the units)
from runner.models.kinds import MODEL_KINDS
from validation.unit_registry import UNITS

PROJECT_ROOT = Path(__file__).resolve().parents[1]
UNIT_MODULES = ("validation/units.py", "validation/agentbench/units.py", "validation/judge", "validation/artifacts/check.py")
TASK_SPECS = ("runner/benchmark/agentbench/specs.py", "runner/benchmark/agentbench/local.py")  # a task names its unit
MODEL_MODULES = ("runner/models/",)
EVERYDAY_WORDS = {"local", "null", "constant", "script", "replay", "oracle"}  # also sandbox names, JSON words...


def modules(skip: tuple[str, ...]) -> Iterator[tuple[str, ast.AST]]:
    for package in ("runner", "validation"):
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            relative = path.relative_to(PROJECT_ROOT).as_posix()
            if not relative.startswith(skip):
                yield relative, ast.parse(path.read_text(encoding="utf-8"))


def strings(tree: ast.AST) -> list[tuple[int, str]]:
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def compared_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, string) of each string constant a comparison (==, !=, in, not in) tests against."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                found += strings(operand) if isinstance(operand, (ast.Constant, ast.Tuple, ast.List, ast.Set)) else []
    return found


def test_only_units_and_task_specs_name_a_metric_type():
    names = set(UNITS.names())
    assert {"numeric_check", "hypnogram_check", "label_check"} <= names
    named = [f"{module}:{line} {text!r}" for module, tree in modules(UNIT_MODULES + TASK_SPECS)
             for line, text in strings(tree) if text in names]
    assert not named, named


def test_no_module_switches_on_a_model_kind():
    names = set(MODEL_KINDS.names()) - EVERYDAY_WORDS
    assert "openai" in names
    switches = [f"{module}:{line} {text!r}" for module, tree in modules(MODEL_MODULES)
                for line, text in compared_strings(tree) if text in names]
    assert not switches, switches


def test_a_switch_is_found():
    tree = ast.parse('if kind == "openai" or m.type in ("label_check", "x"):\n    pass\nTYPES = ("numeric_check",)\n')
    assert [text for _, text in compared_strings(tree)] == ["openai", "label_check", "x"]
    assert "numeric_check" in [text for _, text in strings(tree)]
