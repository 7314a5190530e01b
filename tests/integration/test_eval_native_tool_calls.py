"""Native function calling end to end: `eegbench eval` with an openai model whose endpoint (a
real HTTP server on 127.0.0.1) answers with OpenAI `tool_calls`, never text JSON. BrainAgent's
subagents reach full marks that way; malformed calls (an unknown tool, arguments that are not
JSON, a reused call id) end as recorded tool errors and the instance goes on, in BrainAgent and
in the tools paradigm."""
from __future__ import annotations

import json

import pytest

from runner.benchmark import catalog
from tests.endpoint_stub import ScriptedServer, completion_body
from tests.integration.conftest import PROJECT_ROOT
from tests.native_plan_stub import NativePlanServer, tool_call_body

pytestmark = pytest.mark.integration

CASE = "fa_alpha_relpower-01"
MALFORMED = [("bad_1", "no_such_tool", "{}"), ("bad_2", "erp_average", "not json {"), ("bad_1", "erp_average", "{}")]
EXPECTED_ERRORS = ["unsupported", "bad_argument", "reused_call_id"]


def instance(case: str):
    [found] = catalog.select(catalog.load_all(), [case])
    return found


def native_turns(requests: list[dict]) -> list[list[dict]]:
    """Every assistant message with native calls, as the controller sent it back."""
    return [m["tool_calls"] for r in requests for m in r["messages"] if m.get("tool_calls")]


def assert_one_tool_message_per_distinct_id(request: dict) -> None:
    messages = request["messages"]
    for i, message in enumerate(messages):
        if message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            answered = [m["tool_call_id"] for m in messages[i + 1:i + 1 + len(ids)] if m.get("role") == "tool"]
            assert len(set(ids)) == len(ids) and answered == ids, (ids, answered)


def test_brainagent_reaches_full_marks_with_native_calls_and_survives_malformed_ones(eegbench, endpoint):
    with NativePlanServer(PROJECT_ROOT, instance(CASE), malformed=MALFORMED) as server:
        done = eegbench("eval", "--paradigm", "brainagent", "--model", endpoint(server), "--set", CASE, "--run", "native")
    assert done.returncode == 0, done.stderr[-3000:]
    [result] = eegbench.results("native")
    assert (result["status"], result["score"]) == ("solution", 100.0), result
    offered = [r for r in server.requests if r.get("tools")]  # the subagent's rounds; the supervisor's have none
    assert server.calls_sent > 0 and len(offered) >= 3 and len(offered) < len(server.requests)
    for request in server.requests:
        assert_one_tool_message_per_distinct_id(request)
    turns = eegbench.transcript("native", CASE)["turns"]
    calls = [c for t in turns for c in t["tool_calls"]]
    assert [c["error_code"] for c in calls[:3]] == EXPECTED_ERRORS
    assert [c["call_id"] for c in calls[:3]] == ["bad_1", "bad_2", "bad_1-2"]
    assert all(c["status"] == "ok" and c["call_id"].startswith("call_") for c in calls[3:])
    assert len(calls) == 3 + server.calls_sent


def test_tools_paradigm_runs_native_calls_and_records_malformed_ones_as_tool_errors(eegbench, endpoint):
    answer = json.dumps({"action": "final_answer", "answer": {"alpha_relative_power": 0.3}})
    calls = [("ok_1", "get_recording_info", "{}"), MALFORMED[0], ("bad_2", "get_recording_info", "not json {"), MALFORMED[2]]
    replies = [(200, tool_call_body(calls), {}, 0.0), (200, completion_body(answer), {}, 0.0)]
    with ScriptedServer(replies) as server:
        done = eegbench("eval", "--paradigm", "tools", "--model", endpoint(server), "--set", CASE, "--run", "native-tools")
    assert done.returncode == 0, done.stderr[-3000:]
    [result] = eegbench.results("native-tools")
    assert result["status"] == "solution", result
    [turn, final] = eegbench.transcript("native-tools", CASE)["turns"]
    assert [(c["status"], c["error_code"]) for c in turn["tool_calls"]] == [("ok", None)] + [("error", e) for e in EXPECTED_ERRORS]
    assert '"n_channels"' in turn["tool_calls"][0]["result"] and final["action"] == "final_answer"
    second = server.requests[1]["body"]
    assert_one_tool_message_per_distinct_id(second)
    assert [c["id"] for c in native_turns([second])[0]] == ["ok_1", "bad_1", "bad_2", "bad_1-2"]
