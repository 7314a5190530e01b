"""Runs written before the run directory had a format version (format 1, committed under
tests/fixtures/runs_v1/ from the code of that time) are read by today's code: `show`, `logs`
and `score` read them, and replaying their recorded replies through today's sandbox and
scoring reproduces every score."""
import json
import shutil
from pathlib import Path

import pytest

V1 = Path(__file__).resolve().parents[1] / "fixtures" / "runs_v1"
RUNS = {  # run -> eval options it was made with
    "v1-oracle-codeact": [],
    "v1-oracle-tools": ["--paradigm", "tools"],
    "v1-script-codeact": [],
}


def recorded(run_dir: Path) -> dict:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return {r["case_id"]: (r["status"], r["score"]) for r in map(json.loads, lines)}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_replaying_a_format_1_run_reproduces_its_scores(eegbench, run):
    cases = ",".join(sorted(recorded(V1 / run)))
    proc = eegbench("eval", "--model", f"replay:{V1 / run}", "--set", cases, "--run", "again", *RUNS[run])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert recorded(eegbench.runs_dir / "again") == recorded(V1 / run)


def test_show_logs_and_score_read_a_format_1_run(eegbench, tmp_path):
    copy = tmp_path / "v1-oracle-codeact"
    shutil.copytree(V1 / "v1-oracle-codeact", copy)  # `score` writes into the run directory
    shown = eegbench("show", str(copy), "sa_hypnogram_export-01")
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "status: solution" in shown.stdout and "hypnogram_annotations.csv" in shown.stdout
    assert "score 100.0" in shown.stdout
    logs = eegbench("logs", str(copy))
    assert logs.returncode == 0 and logs.stdout.count("solution") == 3
    summary = eegbench("show", str(copy))
    assert "100.0" in summary.stdout and "solution 3" in summary.stdout
    rescored = eegbench("score", str(copy), "--name", "today")
    assert rescored.returncode == 0, rescored.stderr[-2000:]
    lines = [json.loads(line) for line in (copy / "scores" / "today.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all(r["score"] == r["original"] == 100.0 for r in lines)
    tools = eegbench("show", str(V1 / "v1-oracle-tools"))
    assert "EEGAgentBench metrics" in tools.stdout
