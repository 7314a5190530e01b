"""The CodeAct loop's controls, with a fake sandbox and scripted sessions (unit level).

The real sandbox and real models are exercised in tests/integration/.
"""
import time

import pytest

from runner.core.settings import ControlLimits
from runner.core.transcript import Observation, Usage
from runner.models.base import Completion, ModelError, ModelSession, ModelSetupError
from runner.paradigms import prompts
from runner.paradigms.codeact import CodeActLoop
from runner.sandbox.base import SandboxError
from validation.instance import Instance


def make_instance() -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": "fa_demo-01", "bench_subset": "Foundational Analysis", "task_id": "fa_demo"},
        "agent_input": {"data_path": ["demo/rec.edf"], "instruction": "Compute x."},
        "eval_config": {"parser_prompt": "", "metrics": [
            {"metric_id": "x", "type": "numeric_check", "target_key": "x", "weight": 1.0,
             "params": {"ground_truth": 1.0, "tolerance": 0.1}}]},
    })


class Replies(ModelSession):
    def __init__(self, replies, delay=0.0):
        self.replies = list(replies)
        self.seen: list[list[dict]] = []
        self.delay = delay

    def complete(self, messages):
        self.seen.append(messages)
        time.sleep(self.delay)
        reply = self.replies.pop(0) if self.replies else ""
        if isinstance(reply, Exception):
            raise reply
        return Completion(reply, Usage(prompt_tokens=10, completion_tokens=5), 0.01)


class FakeSandbox:
    def __init__(self, observations=None, raises=None):
        self.codes: list[str] = []
        self.timeouts: list[float | None] = []
        self.observations = observations or {}
        self.raises = raises

    def execute(self, code, timeout_s=None):
        self.codes.append(code)
        self.timeouts.append(timeout_s)
        if self.raises:
            raise self.raises
        return self.observations.get(code, Observation(text="ok", status="ok", duration_s=0.0))


def run(replies, sandbox=None, **limits):
    session = Replies(replies)
    outcome = CodeActLoop(make_instance(), session, sandbox or FakeSandbox(), ControlLimits(**limits)).run()
    return outcome, session


def test_solution_after_execution():
    outcome, session = run(["<execute>x=1</execute>", "<solution>{\"x\": 1}</solution>"])
    assert outcome.status == "solution"
    assert outcome.report == '{"x": 1}'
    assert [t.action for t in outcome.turns] == ["execute", "solution"]
    assert session.seen[1][-1]["content"] == prompts.observation_message("ok")


def test_user_message_names_inputs_and_artifact_rule():
    _, session = run(["<solution></solution>"])
    first_user = session.seen[0][1]["content"]
    assert "/input/demo/rec.edf" in first_user
    assert "/workspace/file_check/" in first_user
    assert "ground_truth" not in str(session.seen[0])


def test_final_round_is_forced_and_solution_marked_forced():
    outcome, session = run(["<execute>a=1</execute>", "<execute>a=2</execute>", "<solution>r</solution>"], max_rounds=3)
    assert outcome.status == "forced_solution"
    assert session.seen[2][-1]["content"] == prompts.FINAL_ROUND


def test_no_solution_on_final_round_is_max_rounds():
    outcome, _ = run(["<execute>a=1</execute>", "<execute>a=2</execute>", "<execute>a=3</execute>"], max_rounds=3)
    assert outcome.status == "max_rounds"
    assert outcome.report is None


def test_same_code_three_times_is_repeated_failure():
    outcome, _ = run(["<execute>x=1</execute>"] * 5)
    assert outcome.status == "repeated_failure"
    assert len(outcome.turns) == 3


def test_same_error_fingerprint_three_times_is_repeated_failure():
    observations = {
        f"f({i})": Observation(text="boom", status="error", duration_s=0, error_name="KeyError", error_value=f"'ch{i}'")
        for i in range(5)
    }
    outcome, _ = run([f"<execute>f({i})</execute>" for i in range(5)], FakeSandbox(observations))
    assert outcome.status == "repeated_failure"
    assert len(outcome.turns) == 3


def test_three_replies_without_action_is_missing_action():
    outcome, session = run(["hmm", "let me think", "ok", "<solution>late</solution>"])
    assert outcome.status == "missing_action"
    assert session.seen[1][-1]["content"] == prompts.NO_ACTION


def test_deadline_stops_between_rounds():
    session = Replies(["<execute>a=1</execute>"] * 3 + ["<execute>b</execute>"], delay=0.3)
    outcome = CodeActLoop(make_instance(), session, FakeSandbox(), ControlLimits(deadline_s=0.5, repeat_limit=10)).run()
    assert outcome.status == "deadline"
    assert len(outcome.turns) == 2


def test_model_transport_error_is_infra_error():
    outcome, _ = run([ModelError("503 after 5 retries", infrastructure=True)])
    assert outcome.status == "infra_error"
    assert "503" in outcome.error


def test_sandbox_failure_is_infra_error_not_model_failure():
    outcome, _ = run(["<execute>x=1</execute>"], FakeSandbox(raises=SandboxError("kernel gone")))
    assert outcome.status == "infra_error"
    assert "kernel gone" in outcome.error


@pytest.mark.parametrize("stop_after", [0])
def test_stop_request_ends_instance_unscored(stop_after):
    outcome = CodeActLoop(make_instance(), Replies(["<solution>x</solution>"]), FakeSandbox(), ControlLimits(),
                          should_stop=lambda: True).run()
    assert outcome.status == "infra_error"
    assert outcome.turns == []


def test_retried_model_calls_and_kernel_restarts_become_infrastructure_events():
    class Retried(Replies):
        def complete(self, messages):
            completion = super().complete(messages)
            completion.retries = ["attempt 1 failed (HTTP 503 InternalServerError: busy); retried after 0.4 s"]
            return completion

    restarted = Observation(text="killed", status="timeout", duration_s=1.0, restarted=True)
    events = []
    loop = CodeActLoop(make_instance(), Retried(["<execute>slow()</execute>", "<solution>x</solution>"]),
                       FakeSandbox({"slow()": restarted}), ControlLimits(), on_event=events.append)
    outcome = loop.run()
    assert outcome.status == "solution"
    assert [(e.kind, e.turn) for e in events] == [("model_retry", 0), ("kernel_restart", 0), ("model_retry", 1)]
    assert "HTTP 503" in events[0].detail and events[1].detail == "after a timeout execution"


def test_a_request_held_back_by_the_endpoint_limits_is_a_model_wait_event():
    class Queued(Replies):
        waits = iter([2.5, 0.2])  # only a wait of a second or more is worth an event

        def complete(self, messages):
            completion = super().complete(messages)
            completion.queued_s = next(self.waits)
            return completion

    events = []
    loop = CodeActLoop(make_instance(), Queued(["<execute>x=1</execute>", "<solution>x</solution>"]),
                       FakeSandbox(), ControlLimits(), on_event=events.append)
    assert loop.run().status == "solution"
    assert [(e.kind, e.turn) for e in events] == [("model_wait", 0)]
    assert events[0].detail.startswith("waited 2.5 s for the endpoint's limits (--max-connections")


def test_sandbox_failure_is_an_event_too():
    events = []
    loop = CodeActLoop(make_instance(), Replies(["<execute>x=1</execute>"]), FakeSandbox(raises=SandboxError("gone")),
                       ControlLimits(), on_event=events.append)
    assert loop.run().status == "infra_error"
    assert [e.kind for e in events] == ["sandbox_failure"] and "gone" in events[0].detail


@pytest.mark.parametrize("kind, status", [
    ("transport", "infra_error"), ("harness", "infra_error"), ("context_exceeded", "context_exceeded"),
    ("refused", "refused"), ("rejected", "request_rejected"),
])
def test_a_failed_model_call_ends_the_instance_by_whose_failure_it_is(kind, status):
    outcome, _ = run(["<execute>print(1)</execute>", ModelError("boom", infrastructure=kind == "transport", kind=kind)])
    assert outcome.status == status and "boom" in (outcome.error or "")
    assert len(outcome.turns) == 1  # the turns before it are kept, and scored for what they produced


def test_a_setup_error_stops_the_run_instead_of_ending_the_instance():
    with pytest.raises(ModelSetupError, match="fa_demo-01: bad key"):
        run([ModelError("bad key", infrastructure=False, kind="setup")])


def test_each_execution_is_bounded_by_the_time_left_before_the_deadline():
    sandbox = FakeSandbox()
    run(["<execute>a</execute>", "<execute>b</execute>", "<solution>{}</solution>"], sandbox, deadline_s=30.0)
    first, second = sandbox.timeouts
    assert 29.0 < first <= 30.0 and second <= first


def test_the_instance_token_ceiling_ends_it_before_the_next_call():
    # Each reply reports 10 + 5 tokens: after two replies the instance has used 30.
    outcome, session = run(["<execute>a=1</execute>", "<execute>b=2</execute>", "<solution>{}</solution>"],
                           max_instance_tokens=30)
    assert outcome.status == "token_limit" and outcome.report is None
    assert len(outcome.turns) == 2 and len(session.seen) == 2  # no third request was sent
    assert "30 tokens" in outcome.error and "--max-instance-tokens" in outcome.error


def test_the_reply_that_crosses_the_token_ceiling_is_still_acted_on():
    outcome, _ = run(['<solution>{"x": 1}</solution>'], max_instance_tokens=10)
    assert outcome.status == "solution"
