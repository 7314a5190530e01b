"""Registry: one registration per extension; choices and errors read the registered names."""
import pytest

from runner.core.registry import Registry, UnknownName
from runner.paradigms import PARADIGMS
from runner.run.executors import EXECUTORS
from runner.sandbox import sandbox_choices
from validation.errors import UserError


def test_get_builds_the_registered_extension_and_names_keep_order():
    registry: Registry[str] = Registry("colour")
    registry.register("red", lambda: "R")
    registry.register("blue", lambda: "B")
    assert registry.get("blue") == "B" and registry.names() == ("red", "blue") and "red" in registry


def test_unknown_name_is_a_user_error_listing_the_known_ones():
    registry: Registry[str] = Registry("colour")
    registry.register("red", lambda: "R")
    with pytest.raises(UnknownName, match="unknown colour 'green'; known: red") as caught:
        registry.get("green")
    assert isinstance(caught.value, UserError)


def test_a_name_registered_twice_is_a_bug():
    registry: Registry[str] = Registry("colour")
    registry.register("red", lambda: "R")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("red", lambda: "r")


def test_the_built_in_extensions():
    assert PARADIGMS.names() == ("codeact", "tools", "hybrid", "brainagent")
    assert [PARADIGMS.get(n).needs_sandbox for n in PARADIGMS.names()] == [True, False, True, True]
    assert EXECUTORS.names() == ("threads", "ray")
    assert sandbox_choices()[0] == "auto" and {"local", "docker"} <= set(sandbox_choices())
