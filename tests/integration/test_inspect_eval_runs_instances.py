"""`inspect eval eegbench/<paradigm>` runs eegbench instances with Inspect's model API, over a
real HTTP endpoint reached through Inspect's openai provider: the same scripted replies score
as `eegbench eval --model script:` scores them, unit by unit; the Inspect log holds the turns;
the run directory is eegbench's own (resumable: a second `inspect eval` with the run's name and
`--epochs 2` runs only epoch 2); BrainAgent's supervisor and subagents play a plan through it; an
Inspect token limit ends the instance as token_limit; bad task arguments stop with one message."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.benchmark import catalog
from tests.endpoint_stub import LimitedEndpoint
from tests.integration.conftest import PROJECT_ROOT
from tests.integration.test_eval_respects_endpoint_limits import oracle_replies
from tests.native_plan_stub import NativePlanServer

pytestmark = pytest.mark.integration
inspect_log = pytest.importorskip("inspect_ai.log")

CASES = ["fa_alpha_relpower-01", "fa_alpha_relpower-02", "fa_alpha_relpower-03"]
INSPECT = str(Path(sys.executable).with_name("inspect"))


def inspect_eval(eegbench, server, log_dir: Path, task: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in eegbench.env().items() if "proxy" not in k.lower()}
    command = [INSPECT, "eval", task, "--model", "openai/stub", "-M", "responses_api=false",
               "--model-base-url", server.url, "--log-dir", str(log_dir), "--display", "plain", *args]
    done = subprocess.run(command, cwd=PROJECT_ROOT, env={**env, "OPENAI_API_KEY": "sk-stub"},
                          text=True, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def read_log(log_dir: Path):
    [path] = sorted(log_dir.glob("*.eval"))
    return inspect_log.read_eval_log(path)


def scripted_replies(eegbench, tmp_path: Path) -> Path:
    """Code, then case 01's true answer (the oracle's own report) for every case: 100 on case
    01, less where the truth differs."""
    done = eegbench("eval", "--model", "oracle", "--set", CASES[0], "--run", "truth-01")
    assert done.returncode == 0, done.stderr
    report = eegbench.transcript("truth-01", CASES[0])["messages"][-1]["content"]
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"replies": ["<execute>print('alpha')</execute>", report]}))
    return script


def by_turn(replies: list[str]):
    """The reply `eegbench eval --model script:` gives at that point of the conversation."""
    def reply(body: dict) -> str:
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        return replies[turn] if turn < len(replies) else ""
    return reply


def test_inspect_eval_scores_as_eegbench_eval_and_resumes_with_more_epochs(eegbench, tmp_path):
    script = scripted_replies(eegbench, tmp_path)
    done = eegbench("eval", "--model", f"script:{script}", "--set", ",".join(CASES), "--run", "scripted")
    assert done.returncode == 0, done.stderr
    expected = {r["case_id"]: r for r in eegbench.results("scripted")}
    assert expected[CASES[0]]["score"] == 100.0 and min(r["score"] for r in expected.values()) < 100.0

    replies = json.loads(script.read_text())["replies"]
    with LimitedEndpoint(by_turn(replies), cap=2, usage=(300, 40)) as server:
        inspect_eval(eegbench, server, tmp_path / "log1", "eegbench/codeact", "-T", "set=" + ",".join(CASES),
                     "-T", "run=via-inspect", "--max-connections", "2")
    assert server.violations == [] and len(server.requests) == 2 * len(CASES)

    log = read_log(tmp_path / "log1")
    assert log.status == "success" and log.eval.task == "eegbench/codeact" and log.eval.model == "openai/stub"
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(
        sum(r["score"] for r in expected.values()) / len(CASES))
    ran = {r["case_id"]: r for r in eegbench.results("via-inspect")}
    for sample in log.samples:
        case = sample.id
        score = sample.scores["eegbench"]
        assert score.value == ran[case]["score"] == expected[case]["score"], case
        assert (ran[case]["status"], ran[case]["rounds"]) == (expected[case]["status"], expected[case]["rounds"])
        eval_units = read_units(eegbench, "scripted", case)
        assert {m: (u["score"], u["predicted"]) for m, u in score.metadata["units"].items()} == eval_units, case
        transcript = eegbench.transcript("via-inspect", case)
        assert [m.role for m in sample.messages] == [m["role"] for m in transcript["messages"]]
        assert [m.text for m in sample.messages if m.role == "assistant"] == replies
        calls = [e for e in sample.events if e.event == "model"]
        assert [c.output.completion for c in calls] == replies  # Inspect's own record of each call
        assert sample.metadata["eegbench_run"] == "via-inspect" and sample.metadata["status"] == "solution"
        assert (ran[case]["prompt_tokens"], ran[case]["completion_tokens"]) == (600, 80)
    run_json = json.loads((eegbench.runs_dir / "via-inspect" / "run.json").read_text())
    assert run_json["config"]["model"] == "inspect:openai/stub"
    shown = eegbench("show", "via-inspect", CASES[1])
    assert shown.returncode == 0 and "print('alpha')" in shown.stdout

    # The same run again with --epochs 2: epoch 1 is taken from the run, only epoch 2 calls the model.
    with LimitedEndpoint(by_turn(replies), usage=(300, 40)) as again:
        inspect_eval(eegbench, again, tmp_path / "log2", "eegbench/codeact", "-T", "set=" + ",".join(CASES),
                     "-T", "run=via-inspect", "--epochs", "2")
    assert len(again.requests) == 2 * len(CASES)
    results = eegbench.results("via-inspect")
    assert sorted((r["case_id"], r["epoch"]) for r in results) == sorted((c, e) for c in CASES for e in (1, 2))
    assert {(r["case_id"], r["epoch"]): r["score"] for r in results} == {
        (c, e): expected[c]["score"] for c in CASES for e in (1, 2)}
    assert len(read_log(tmp_path / "log2").samples) == 2 * len(CASES)
    assert json.loads((eegbench.runs_dir / "via-inspect" / "run.json").read_text())["config"]["epochs"] == 2


def read_units(eegbench, run: str, case: str) -> dict[str, tuple]:
    score = json.loads((eegbench.runs_dir / run / "instances" / case / "score.json").read_text())
    return {m["metric_id"]: (m["score"], m["predicted"]) for m in score["metrics"]}


def test_inspect_eval_plays_a_brainagent_plan(eegbench, tmp_path):
    [instance] = catalog.select(catalog.load_all(), [CASES[0]])
    with NativePlanServer(PROJECT_ROOT, instance) as server:
        inspect_eval(eegbench, server, tmp_path / "log", "eegbench/brainagent", "-T", f"set={CASES[0]}",
                     "-T", "run=plan")
    [sample] = read_log(tmp_path / "log").samples
    assert sample.scores["eegbench"].value == 100.0
    [result] = eegbench.results("plan")
    assert (result["status"], result["score"]) == ("solution", 100.0)
    transcript = eegbench.transcript("plan", CASES[0])
    assert transcript["paradigm"] == "brainagent" and any(t.get("tool_calls") for t in transcript["turns"])
    assert len([e for e in sample.events if e.event == "model"]) == len(server.requests) > 2


def test_inspect_task_arguments_that_select_nothing_stop_with_one_message(eegbench, tmp_path):
    env = {**eegbench.env(), "OPENAI_API_KEY": "sk-stub", "COLUMNS": "300"}  # one line per message
    for args, message in (
        (["-T", "set=no_such_case"], "eegbench/codeact: -T set: SET: no instance matches no_such_case"),
        (["-T", "subset=no_such_subset"], "eegbench/codeact: -T subset='no_such_subset' is not a subset; the subsets are"),
        (["-T", "subset=sleep_assessment", "-T", "task=fa_alpha_relpower"], "select no instance together"),
    ):
        done = subprocess.run([INSPECT, "eval", "eegbench/codeact", "--model", "openai/stub", *args,
                               "--log-dir", str(tmp_path / "log")], cwd=PROJECT_ROOT, env=env, text=True,
                              capture_output=True, timeout=300)
        assert done.returncode != 0, args
        out = done.stdout + done.stderr
        assert message in out and "Traceback" not in out, out[-2000:]
    assert not eegbench.runs_dir.exists() or not any(eegbench.runs_dir.iterdir())
    assert not (tmp_path / "log").exists() or not any((tmp_path / "log").iterdir())


def test_an_inspect_token_limit_ends_the_instance_as_token_limit(eegbench, tmp_path):
    with LimitedEndpoint(oracle_replies(CASES[:1]), usage=(100, 20)) as server:
        inspect_eval(eegbench, server, tmp_path / "log", "eegbench/codeact", "-T", f"set={CASES[0]}",
                     "-T", "run=capped", "--token-limit", "100")
    [result] = eegbench.results("capped")
    assert (result["status"], result["score"]) == ("token_limit", 0.0)
    assert "Inspect's token limit" in result["error"] and len(server.requests) == 1
    [sample] = read_log(tmp_path / "log").samples
    assert sample.scores["eegbench"].value == 0.0 and sample.metadata["status"] == "token_limit"


def test_inspect_task_controls_change_eegbench_controls(eegbench, tmp_path):
    with LimitedEndpoint(oracle_replies(CASES[:1])) as server:
        inspect_eval(eegbench, server, tmp_path / "log", "eegbench/codeact", "-T", f"set={CASES[0]}",
                     "-T", "run=one-round", "-T", "controls={max_rounds: 1, deadline_s: 300}")
    [result] = eegbench.results("one-round")
    assert (result["status"], result["rounds"]) == ("max_rounds", 1) and len(server.requests) == 1
    controls = json.loads((eegbench.runs_dir / "one-round" / "run.json").read_text())["config"]["controls"]
    assert (controls["max_rounds"], controls["deadline_s"]) == (1, 300.0)
