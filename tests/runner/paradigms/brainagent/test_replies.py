"""Reading the supervisor's and subagents' JSON replies."""
from __future__ import annotations

import json

from runner.paradigms.brainagent.replies import parse_subagent, parse_supervisor


def test_supervisor_objectives_inside_prose_and_fences():
    reply = parse_supervisor('Plan:\n```json\n{"objectives": [{"agent": "SleepAgent", "goal": "WASO"}]}\n```')
    assert reply.kind == "objectives"
    assert [(o.agent, o.goal) for o in reply.objectives] == [("SleepAgent", "WASO")]


def test_supervisor_final_report_object_becomes_json_text():
    reply = parse_supervisor('{"final_report": {"waso_min": 12.5}}')
    assert reply.kind == "final_report" and json.loads(reply.report or "") == {"waso_min": 12.5}


def test_supervisor_solution_block_is_accepted_as_the_report():
    assert parse_supervisor("<solution>alpha is 0.61</solution>").report == "alpha is 0.61"


def test_supervisor_malformed_objectives_are_no_action():
    for text in ('{"objectives": []}', '{"objectives": [{"agent": 3}]}', "no json", '{"other": 1}'):
        assert parse_supervisor(text).kind == "none", text


def test_subagent_calls_keep_order_and_accept_args_alias():
    reply = parse_subagent('{"calls": [{"tool": "a", "arguments": {"x": 1}}, {"tool": "b", "args": "{\\"y\\": 2}"}]}')
    assert reply.kind == "calls"
    assert [(c.tool, c.arguments) for c in reply.calls] == [("a", {"x": 1}), ("b", {"y": 2})]


def test_subagent_arguments_that_are_not_an_object_stay_raw_text():
    reply = parse_subagent('{"calls": [{"tool": "a", "arguments": "not json"}]}')
    assert reply.calls[0].arguments == "not json"


def test_subagent_report_with_notes():
    reply = parse_subagent('{"report": {"n": 3}, "notes": "from 30-s epochs"}')
    assert reply.kind == "report"
    assert json.loads(reply.report or "") == {"report": {"n": 3}, "notes": "from 30-s epochs"}


def test_subagent_hostile_text_is_bounded_and_no_action():
    assert parse_subagent("{" * 100_000).kind == "none"
    assert parse_subagent('{"calls": [{"arguments": {}}]}').kind == "none"
