"""Native calls' ids: one tool message per distinct id, a reused id refused but kept well-formed."""
from __future__ import annotations

from runner.models.base import ToolCall
from runner.paradigms.json_actions import parse_arguments, with_distinct_ids


def call(call_id: str, name: str = "t") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments="{}")


def test_a_reused_id_is_renamed_and_flagged_and_the_first_keeps_it():
    used: set[str] = {"a"}
    distinct = with_distinct_ids([call("b"), call("a"), call("b"), call("b-2")], used)
    assert [(c.id, reused) for c, reused in distinct] == [("b", False), ("a-2", True), ("b-3", True), ("b-2", False)]
    assert used == {"a", "b", "a-2", "b-2", "b-3"}
    assert [c.name for c, _ in distinct] == ["t"] * 4


def test_a_call_without_an_id_gets_one_and_runs():
    used: set[str] = set()
    [(first, reused_1), (second, reused_2)] = with_distinct_ids([call(""), call("")], used)
    assert (first.id, second.id) == ("call-2", "call-3") and not reused_1 and not reused_2


def test_arguments_that_are_not_a_json_object_stay_raw():
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("not json {") == "not json {" and parse_arguments("[1]") == "[1]" and parse_arguments(" ") == {}
