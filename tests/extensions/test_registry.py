"""Registry: one registration per extension; choices and errors read the registered names."""
import sys

import pytest

from extensions.registry import Registry, UnknownName, lazy
from runner.paradigms import PARADIGMS, get_paradigm
from runner.run.executors import EXECUTORS
from runner.sandbox import sandbox_choices


def test_get_returns_the_registered_item_and_names_keep_order():
    registry: Registry[str] = Registry("colour")
    assert registry.register("red", "R") == "R"
    registry.register("blue", "B")
    assert registry.get("blue") == "B" and registry.names() == ("red", "blue") and "red" in registry
    assert registry.items() == ("R", "B") and list(registry) == ["red", "blue"] and len(registry) == 2
    registry.unregister("red")
    assert registry.names() == ("blue",) and "red" not in registry


def test_unknown_name_lists_the_known_ones():
    registry: Registry[str] = Registry("colour")
    registry.register("red", "R")
    with pytest.raises(UnknownName, match="unknown colour 'green'; known: red"):
        registry.get("green")
    with pytest.raises(UnknownName):
        registry.get(["unhashable"])  # type: ignore[arg-type]  # a model's JSON can hold anything
    assert ["unhashable"] not in registry


def test_a_kind_words_its_own_unknown_name_error():
    registry: Registry[str] = Registry("tool", unknown=lambda name, known: KeyError(f"{name} not in {known}"))
    registry.register("a", "A")
    with pytest.raises(KeyError, match=r"b not in \('a',\)"):
        registry.get("b")


def test_a_name_registered_twice_is_a_bug():
    registry: Registry[str] = Registry("colour")
    registry.register("red", "R")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("red", "r")


def test_lazy_imports_its_module_only_when_called():
    sys.modules.pop("colorsys", None)
    to_hls = lazy("colorsys", "rgb_to_hls")
    assert "colorsys" not in sys.modules
    assert to_hls(1.0, 0.0, 0.0) == (0.0, 0.5, 1.0) and "colorsys" in sys.modules
    with pytest.raises(AttributeError):
        lazy("colorsys", "no_such_function")()


def test_the_built_in_extensions():
    assert PARADIGMS.names() == ("codeact", "tools", "hybrid", "brainagent")
    assert [get_paradigm(n).needs_sandbox for n in PARADIGMS.names()] == [True, False, True, True]
    assert EXECUTORS.names() == ("threads", "ray")
    assert sandbox_choices()[0] == "auto" and {"local", "docker"} <= set(sandbox_choices())
