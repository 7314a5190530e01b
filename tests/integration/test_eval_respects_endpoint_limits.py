"""`eegbench eval --jobs 3 --max-connections 2` against a real HTTP endpoint that checks its
concurrency cap and misbehaves at scripted points (a 429 with Retry-After, a 500, a malformed
body, slow replies), otherwise answering as the oracle would. The run must finish, never put
more than 2 requests in flight, record every retry in the transcripts, and score exactly as a
clean run against the same endpoint without faults. A token ceiling ends an instance as
token_limit."""
from __future__ import annotations

import pytest

from runner.benchmark import catalog
from runner.models.oracle import ensemble_types, execute_reply_for, solution_reply
from runner.paradigms import prompts
from tests.endpoint_stub import Fault, LimitedEndpoint
from tests.integration.conftest import PROJECT_ROOT

pytestmark = pytest.mark.integration

CASES = ["fa_alpha_relpower-01", "fa_alpha_relpower-02", "fa_alpha_relpower-03"]
# Request numbers in arrival order: every instance makes two successful requests (the
# reference script, then the solution), so faults at 2, 4 and 6 land mid-run.
FAULTS = {1: Fault.slow(1.0), 2: Fault.rate_limited(1), 4: Fault.server_error(), 6: Fault.malformed(),
          7: Fault.slow(1.0)}


def oracle_replies(cases: list[str]):
    """The reply the oracle would give to a conversation, told apart by its task message:
    the reference script first, then the result its observation printed."""
    by_message = {prompts.instance_message(i): i for i in catalog.select(catalog.load_all(), cases)}

    def reply(body: dict) -> str:
        messages = body["messages"]
        instance = by_message[messages[1]["content"]]
        if not any(m["role"] == "assistant" for m in messages):
            return execute_reply_for(PROJECT_ROOT, instance)
        return solution_reply(messages[-1]["content"], ensemble_types(instance))

    return reply


def run(eegbench, endpoint, server, name: str, *extra: str) -> dict[str, dict]:
    done = eegbench("eval", "--model", endpoint(server), "--set", ",".join(CASES), "--run", name,
                    "--jobs", "3", "--max-connections", "2", *extra, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["case_id"]: r for r in eegbench.results(name)}


def test_the_run_keeps_the_connection_cap_records_retries_and_scores_as_a_clean_run(eegbench, endpoint):
    reply = oracle_replies(CASES)
    with LimitedEndpoint(reply, cap=2, delay_s=0.3) as clean_server:
        clean = run(eegbench, endpoint, clean_server, "clean")
    with LimitedEndpoint(reply, cap=2, faults=FAULTS, delay_s=0.3) as server:
        faulty = run(eegbench, endpoint, server, "faulty")
    for stub in (clean_server, server):
        assert stub.violations == [] and stub.peak <= 2, (stub.peak, stub.violations)
    assert sorted(kind for _, kind in server.faulted) == ["429", "500", "raw", "slow", "slow"]
    assert {r["status"] for r in faulty.values()} == {"solution"} == {r["status"] for r in clean.values()}
    assert {c: r["score"] for c, r in faulty.items()} == {c: r["score"] for c, r in clean.items()}
    assert all(r["score"] == 100.0 for r in clean.values())  # the oracle's replies: meaningful scores
    retries = [e["detail"] for case in CASES for e in eegbench.transcript("faulty", case)["events"]
               if e["kind"] == "model_retry"]
    assert len(retries) == 3, retries
    assert any("HTTP 429" in r and "the endpoint's Retry-After 1 s" in r for r in retries), retries
    assert any("HTTP 500" in r for r in retries) and any("JSONDecodeError" in r for r in retries), retries
    assert all("waited" in r for r in retries)
    run_json = (eegbench.runs_dir / "faulty" / "run.json").read_text()
    assert '"max_connections": 2' in run_json


def test_the_instance_token_ceiling_ends_it_as_token_limit(eegbench, endpoint):
    # Every reply reports 3000 tokens: after the script's turn the ceiling of 2000 is reached.
    with LimitedEndpoint(oracle_replies(CASES[:1]), usage=(2500, 500)) as server:
        done = eegbench("eval", "--model", endpoint(server), "--set", CASES[0], "--run", "ceiling",
                        "--max-instance-tokens", "2000", timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    [result] = eegbench.results("ceiling")
    assert (result["status"], result["rounds"], result["score"]) == ("token_limit", 1, 0.0)
    assert (result["prompt_tokens"], result["completion_tokens"]) == (2500, 500)
    transcript = eegbench.transcript("ceiling", CASES[0])
    assert "--max-instance-tokens ceiling of 2000" in transcript["error"]
    assert server.count == 1
