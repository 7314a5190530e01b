"""`eegbench export RUN --format inspect` on the committed format-1 runs (copies of them):
the log Inspect reads back holds one sample per results line with the transcript's messages,
the score and the errors the run recorded."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner import cli

inspect_log = pytest.importorskip("inspect_ai.log")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs_v1"


@pytest.fixture
def runs(tmp_path, monkeypatch) -> Path:
    """A writable copy of the format-1 runs, as the runs directory."""
    root = tmp_path / "runs"
    shutil.copytree(FIXTURES, root)
    monkeypatch.setenv("EEGBENCH_RUNS", str(root))
    return root


def results(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def transcript(run: Path, key: str) -> dict:
    return json.loads((run / "instances" / key / "transcript.json").read_text())


def write_transcript(run: Path, key: str, data: dict) -> None:
    (run / "instances" / key / "transcript.json").write_text(json.dumps(data))


def said(capsys) -> str:
    """What the command printed on stderr, unwrapped (the console wraps long lines)."""
    return " ".join(capsys.readouterr().err.split())


def export(run: str, *extra: str) -> None:
    assert cli.main(["export", run, "--format", "inspect", *extra]) == 0


def check_matches_run(log, run: Path) -> None:
    """Samples, ids, epochs, messages, scores and model as the run directory has them."""
    lines = results(run)
    assert len(log.samples) == len(lines)
    assert log.eval.model == json.loads((run / "run.json").read_text())["config"]["model"]
    for sample, line in zip(log.samples, lines):
        assert (sample.id, sample.epoch) == (line["case_id"], line.get("epoch", 1))
        key = line["case_id"] if line.get("epoch", 1) == 1 else f"{line['case_id']}@{line['epoch']}"
        messages = transcript(run, key)["messages"]
        assert [m.role for m in sample.messages] == [m["role"] for m in messages]
        assert [m.text for m in sample.messages] == [m["content"] or "" for m in messages]
        assert sample.metadata["status"] == line["status"]
        if line["status"] == "infra_error":
            assert sample.scores is None and sample.error is not None
        else:
            assert sample.scores["eegbench"].value == line["score"] and sample.error is None


@pytest.mark.parametrize("name", ["v1-oracle-codeact", "v1-oracle-tools", "v1-script-codeact"])
def test_a_run_reads_back_as_an_inspect_log(runs, name):
    export(name)
    path = runs / name / "export" / f"{name}.eval"
    log = inspect_log.read_eval_log(path)
    check_matches_run(log, runs / name)
    assert log.status == "success" and log.eval.task == "eegbench" and log.eval.run_id == name
    header = inspect_log.read_eval_log(path, header_only=True)  # what `inspect view` lists
    assert header.samples is None
    mean = sum(r["score"] for r in results(runs / name)) / len(results(runs / name))
    assert header.results.scores[0].metrics["mean"].value == pytest.approx(mean)
    assert header.results.total_samples == len(results(runs / name))


def test_the_sample_carries_instruction_target_report_and_units(runs):
    export("v1-script-codeact", "--out", str(runs / "script.json"))
    (sample,) = inspect_log.read_eval_log(runs / "script.json").samples
    instance = json.loads((runs / "v1-script-codeact" / "instances" / "fa_alpha_relpower-01" / "instance.json").read_text())
    assert sample.input == instance["agent_input"]["instruction"]
    assert json.loads(sample.target) == {"alpha_rel": 0.6521}
    report = (runs / "v1-script-codeact" / "instances" / "fa_alpha_relpower-01" / "report.md").read_text()
    assert sample.output.completion == report
    score = sample.scores["eegbench"]
    assert score.value == 0.0 and "alpha_rel (numeric_check, weight 1): 0" in score.explanation
    assert score.metadata["units"]["alpha_rel"]["expected"] == 0.6521
    assert sample.metadata["task_id"] == "fa_alpha_relpower" and sample.metadata["rounds"] == 3


def test_an_infra_error_is_a_sample_with_an_error_and_no_score(runs):
    run = runs / "v1-oracle-codeact"
    lines = results(run)
    lines[1].update(status="infra_error", score=None, error="sandbox start failed: boom")
    (run / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    key = lines[1]["case_id"]
    data = transcript(run, key)
    data.update(status="infra_error", error="sandbox start failed: boom", messages=data["messages"][:2], turns=[])
    write_transcript(run, key, data)
    (run / "instances" / key / "score.json").unlink()
    export("v1-oracle-codeact", "--out", str(runs / "infra.eval"))
    log = inspect_log.read_eval_log(runs / "infra.eval")
    check_matches_run(log, run)
    failed = log.samples[1]
    assert failed.id == key and failed.scores is None
    assert failed.error.message == "sandbox start failed: boom"
    assert len(failed.messages) == 2
    assert log.results.completed_samples == 2 and log.results.scores[0].unscored_samples == 1


def test_native_tool_calls_become_tool_calls_and_tool_messages(runs):
    run = runs / "v1-oracle-tools"
    key = "eab_t2_artifact-r001"
    data = transcript(run, key)
    call = {"id": "call_1", "type": "function",
            "function": {"name": "compute_windowed_features", "arguments": '{"window_s": 0.25}'}}
    data["messages"][2:2] = [{"role": "assistant", "content": None, "tool_calls": [call]},
                             {"role": "tool", "tool_call_id": "call_1", "content": '{"error": "budget_exceeded"}'}]
    data["turns"].insert(0, {"index": 0, "reply": "", "action": "tool_call", "tool_calls": [
        {"name": "compute_windowed_features", "arguments": {"window_s": 0.25}, "call_id": "call_1",
         "status": "error", "error_code": "budget_exceeded", "result": '{"error": "budget_exceeded"}'}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7}})
    write_transcript(run, key, data)
    export("v1-oracle-tools")
    log = inspect_log.read_eval_log(run / "export" / "v1-oracle-tools.eval")
    sample = next(s for s in log.samples if s.id == key)
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "tool", "assistant"]
    (tool_call,) = sample.messages[2].tool_calls
    assert (tool_call.id, tool_call.function, tool_call.arguments) == ("call_1", "compute_windowed_features",
                                                                         {"window_s": 0.25})
    tool = sample.messages[3]
    assert (tool.tool_call_id, tool.function, tool.error.type) == ("call_1", "compute_windowed_features", "limit")
    usage = sample.model_usage["oracle"]
    assert (usage.input_tokens, usage.output_tokens) == (120, 7)
    assert log.stats.model_usage["oracle"].total_tokens == 127


def test_a_later_epoch_is_its_own_sample(runs):
    run = runs / "v1-oracle-tools"
    case = "eab_t2_artifact-r001"
    shutil.copytree(run / "instances" / case, run / "instances" / f"{case}@2")
    line = next(r for r in results(run) if r["case_id"] == case)
    with open(run / "results.jsonl", "a") as out:
        out.write(json.dumps({**line, "epoch": 2, "score": 0.0}) + "\n")
    export("v1-oracle-tools")
    log = inspect_log.read_eval_log(run / "export" / "v1-oracle-tools.eval")
    check_matches_run(log, run)
    assert [(s.id, s.epoch) for s in log.samples if s.id == case] == [(case, 1), (case, 2)]
    assert log.eval.config.epochs == 2


def test_the_output_must_be_an_inspect_format(runs, capsys):
    assert cli.main(["export", "v1-oracle-tools", "--format", "inspect", "--out", str(runs / "x.txt")]) == 2
    assert "must end in .eval or .json" in said(capsys)
    assert not (runs / "x.txt").exists()


def test_without_inspect_ai_the_command_says_how_to_install_it(runs, monkeypatch, capsys):
    import runner.report

    # Forget the module (in sys.modules and as the package's attribute) so it imports anew.
    monkeypatch.delitem(sys.modules, "runner.report.inspect_log", raising=False)
    monkeypatch.delattr(runner.report, "inspect_log", raising=False)
    for name in [m for m in sys.modules if m == "inspect_ai" or m.startswith("inspect_ai.")]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    assert cli.main(["export", "v1-oracle-tools", "--format", "inspect"]) == cli.EXIT_USER_ERROR
    assert "pip install -e '.[inspect]'" in said(capsys)


def test_the_command_line_does_not_import_inspect_ai():
    code = "import sys, runner.cli; sys.exit(any(m.split('.')[0] == 'inspect_ai' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], cwd=FIXTURES.parents[2]).returncode == 0
