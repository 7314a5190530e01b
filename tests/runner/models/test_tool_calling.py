"""Model kinds in the tools paradigm: native calls over real HTTP, text fallback, oracle, null."""
from __future__ import annotations

import json

from runner.models.null import NullModel
from runner.models.oracle import OracleModel, reference_answer
from runner.models.scripted import ListSession
from runner.paradigms.json_actions import parse_json_action
from tests.runner.models.test_openai_client import MESSAGES, ScriptedServer, completion_body, error, model
from validation.instance import Instance

TOOLS = [{"type": "function", "function": {"name": "get_recording_info", "description": "d",
                                           "parameters": {"type": "object", "properties": {}}}}]


def tool_call_body() -> dict:
    body = completion_body("")
    body["choices"][0]["message"] = {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_7", "type": "function",
                        "function": {"name": "get_recording_info", "arguments": '{"record": "a.edf"}'}}],
    }
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def test_native_tool_calls_are_sent_and_read():
    with ScriptedServer([(200, tool_call_body(), {}, 0.0)]) as server:
        client = model(server.url)
        completion = client.session(None).complete_with_tools(MESSAGES, TOOLS)
    assert server.requests[0]["body"]["tools"] == TOOLS
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [("call_7", "get_recording_info", '{"record": "a.edf"}')]
    assert client.native_tools is True


def test_endpoint_rejecting_tools_falls_back_to_text_for_good():
    answers = [error(400), (200, completion_body('{"action": "final_answer", "answer": "A"}'), {}, 0.0),
               (200, completion_body("x"), {}, 0.0)]
    with ScriptedServer(answers) as server:
        client = model(server.url)
        session = client.session(None)
        first = session.complete_with_tools(MESSAGES, TOOLS)
        session.complete_with_tools(MESSAGES, TOOLS)
    assert first.tool_calls == [] and parse_json_action(first.text).answer == "A"
    assert "tools" in server.requests[0]["body"]
    assert "tools" not in server.requests[1]["body"] and "tools" not in server.requests[2]["body"]
    assert client.native_tools is False


def test_plain_complete_never_sends_tools():
    with ScriptedServer([(200, completion_body("hi"), {}, 0.0)]) as server:
        model(server.url).session(None).complete(MESSAGES)
    assert "tools" not in server.requests[0]["body"]


def instance(metrics) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "t5_demo-01", "bench_subset": "EEGAgentBench"},
        "agent_input": {"data_path": "a.edf", "instruction": "find seizures"},
        "eval_config": {"metrics": metrics},
    })


def test_oracle_answers_with_the_reference_result(tmp_path):
    single = instance([{"metric_id": "m", "type": "set_match_check", "target_key": "answer", "weight": 1,
                        "params": {"ground_truth": [[834, 894]]}}])
    completion = OracleModel(tmp_path).session(single).complete_with_tools([], TOOLS)
    assert json.loads(completion.text) == {"action": "final_answer", "answer": [[834, 894]]}
    several = instance([
        {"metric_id": "a", "type": "numeric_check", "target_key": "alpha_rel", "weight": 0.5, "params": {"ground_truth": 0.65}},
        {"metric_id": "b", "type": "semantic_consistency", "target_key": "full_text", "weight": 0.5, "params": {}},
    ])
    assert reference_answer(several) == {"alpha_rel": 0.65}


def test_null_and_scripted_in_the_tools_paradigm():
    null = NullModel().session(None).complete_with_tools([], TOOLS)
    assert parse_json_action(null.text).kind == "final_answer" and parse_json_action(null.text).answer is None
    scripted = ListSession(['{"action": "get_channel_list", "args": {}}']).complete_with_tools([], TOOLS)
    assert parse_json_action(scripted.text).name == "get_channel_list"


def test_replay_repeats_native_tool_calls(tmp_path):
    from runner.models.replay import ReplayModel

    case = tmp_path / "instances" / "t5_demo-01"
    case.mkdir(parents=True)
    turns = [
        {"reply": "", "tool_calls": [{"name": "get_recording_info", "arguments": {"record": "a.edf"}, "call_id": "c9",
                                      "status": "ok", "result": "{}"}]},
        {"reply": '{"action": "final_answer", "answer": []}', "tool_calls": []},
    ]
    turns = [{"index": i, "action": "tool_call", **t} for i, t in enumerate(turns)]
    (case / "transcript.json").write_text(json.dumps({"case_id": "t5_demo-01", "status": "solution", "turns": turns}))
    (tmp_path / "run.json").write_text(json.dumps({"config": {"run_id": "r", "model": "null"}}))
    session = ReplayModel(tmp_path).session(instance([]))
    first = session.complete_with_tools([], TOOLS)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [("c9", "get_recording_info", {"record": "a.edf"})]
    second = session.complete_with_tools([], TOOLS)
    assert second.tool_calls == [] and parse_json_action(second.text).answer == []
