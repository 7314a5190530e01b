"""The failure policy end to end: `eegbench eval --model openai:...` against a real HTTP stub
endpoint that answers with each kind of failure. What the model caused is scored as produced;
what the setup causes stops the run at once; what the transport causes is retried."""
from __future__ import annotations

import json
import time

import pytest

from tests.endpoint_stub import RawServer, ScriptedServer, completion_body, error, ok

pytestmark = pytest.mark.integration

CASES = "fa_alpha_relpower-01,fa_alpha_relpower-02"
CONTEXT = (400, {"error": {"message": "This model's maximum context length is 8192 tokens, however you requested 9100",
                           "code": "context_length_exceeded"}}, {}, 0.0)


def test_context_overflow_and_refusal_are_scored_as_produced_and_not_retried(eegbench, endpoint):
    filtered = completion_body("Sorry")
    filtered["choices"][0]["finish_reason"] = "content_filter"
    answers = [ok("<execute>print(6 * 7)</execute>"), CONTEXT, (200, filtered, {}, 0.0)]
    with ScriptedServer(answers) as server:
        done = eegbench("eval", "--model", endpoint(server), "--set", CASES, "--run", "failures")
        assert done.returncode == 0, done.stderr[-2000:]
        results = {r["case_id"]: r for r in eegbench.results("failures")}
        assert results["fa_alpha_relpower-01"]["status"] == "context_exceeded"
        assert results["fa_alpha_relpower-02"]["status"] == "refused"
        assert all(r["score"] == 0.0 for r in results.values())  # scored, not dropped
        transcript = eegbench.transcript("failures", "fa_alpha_relpower-01")
        assert transcript["turns"][0]["observation"]["text"].strip() == "42"
        assert "maximum context length" in transcript["error"]
        again = eegbench("eval", "--model", endpoint(server), "--set", CASES, "--run", "failures")
        assert again.returncode == 0 and "2 finished, 0 to run" in " ".join(again.stderr.split())
        assert len(server.requests) == 3  # the resume asked the endpoint nothing


@pytest.mark.parametrize("answer, cause", [
    (error(401), "check the base URL, the API key and the model name"),
    (error(404), "check the base URL, the API key and the model name"),
    ((400, {"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model.",
                      "param": "temperature"}}, {}, 0.0), "Unsupported parameter: 'temperature'"),
])
def test_a_setup_error_stops_the_run_at_once_with_one_message(eegbench, endpoint, answer, cause):
    with ScriptedServer([answer] * 6) as server:
        done = eegbench("eval", "--model", endpoint(server), "--set", CASES, "--run", "setup", "--jobs", "1")
        assert done.returncode == 2, done.stderr[-2000:]
        said = " ".join(done.stderr.split())  # rich wraps long lines
        assert said.count(cause) == 1 and "error:" in said
        assert eegbench.results("setup") == []  # nothing recorded: fixing the setup and rerunning resumes
        assert len(server.requests) <= 2  # one instance's first request (and its text retry), then the stop


def test_a_malformed_body_is_retried_and_the_run_goes_on(eegbench, endpoint):
    truncated = json.dumps(completion_body("<solution>{}</solution>"))[:37].encode()
    with RawServer([truncated], [ok('<solution>{"alpha_rel": 0.1}</solution>'), ok("<solution>{}</solution>")]) as server:
        done = eegbench("eval", "--model", endpoint(server), "--set", CASES, "--run", "malformed", "--jobs", "1")
        assert done.returncode == 0, done.stderr[-2000:]
    results = {r["case_id"]: r for r in eegbench.results("malformed")}
    assert {r["status"] for r in results.values()} == {"solution"}
    events = eegbench.transcript("malformed", "fa_alpha_relpower-01")["events"]
    assert [e["kind"] for e in events] == ["model_retry"]


def test_the_deadline_ends_a_model_call_that_takes_too_long(eegbench, endpoint):
    """The endpoint answers after 60 s; the instance deadline is 10 s: the call is cancelled
    at the deadline and the instance ends as `deadline`, scored as produced (its first turn ran)."""
    answers = [ok("<execute>print(6 * 7)</execute>"), ok("<solution>{}</solution>", delay=60)]
    with ScriptedServer(answers) as server:
        began = time.monotonic()
        done = eegbench("eval", "--model", endpoint(server), "--set", "fa_alpha_relpower-01", "--run", "slow",
                        "--deadline", "10", "--jobs", "1")
        took = time.monotonic() - began
    assert done.returncode == 0, done.stderr[-2000:]
    [result] = eegbench.results("slow")
    assert result["status"] == "deadline" and result["score"] == 0.0, result
    transcript = eegbench.transcript("slow", "fa_alpha_relpower-01")
    assert transcript["turns"][0]["observation"]["text"].strip() == "42"
    assert "deadline" in transcript["error"] and "while the request ran" in transcript["error"], transcript["error"]
    assert took < 50, f"the run took {took:.0f} s: the 60 s reply was waited for"
