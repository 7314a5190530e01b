"""A real oracle run (three tasks, three subsets) exported with `eegbench export --format
inspect` and read back with inspect-ai: what `inspect view` would show is what the run holds."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration
inspect_log = pytest.importorskip("inspect_ai.log")

CASES = ["fa_alpha_relpower-01", "sa_hypnogram_export-01", "pi_emg_eeg_hf_ratio-01"]


def test_an_oracle_run_exports_to_an_inspect_log(eegbench):
    done = eegbench("eval", "--model", "oracle", "--set", ",".join(CASES), "--run", "to-inspect")
    assert done.returncode == 0, done.stderr
    exported = eegbench("export", "to-inspect", "--format", "inspect")
    assert exported.returncode == 0, exported.stderr
    path = eegbench.runs_dir / "to-inspect" / "export" / "to-inspect.eval"

    header = inspect_log.read_eval_log(path, header_only=True)  # what `inspect view` lists first
    assert header.status == "success" and header.eval.model == "oracle" and header.eval.solver == "codeact"
    assert header.results.total_samples == 3 and header.results.scores[0].metrics["mean"].value == 100.0
    assert header.stats.started_at and header.stats.completed_at > header.stats.started_at

    log = inspect_log.read_eval_log(path)
    results = eegbench.results("to-inspect")
    assert [(s.id, s.epoch) for s in log.samples] == [(r["case_id"], r.get("epoch", 1)) for r in results]
    assert sorted(s.id for s in log.samples) == sorted(CASES)
    for sample, result in zip(log.samples, results):
        transcript = eegbench.transcript("to-inspect", result["case_id"])
        assert [m.role for m in sample.messages] == [m["role"] for m in transcript["messages"]]
        assert sample.messages[-1].text == transcript["messages"][-1]["content"]
        assert sample.scores["eegbench"].value == result["score"] == 100.0
        assert sample.metadata["status"] == result["status"] == "solution"
        assert sample.metadata["bench_subset"] == result["bench_subset"]
        assert sample.total_time == result["duration_s"] and sample.started_at
        assert sample.error is None and sample.limit is None
        instance = json.loads((eegbench.runs_dir / "to-inspect" / "instances" / result["case_id"]
                               / "instance.json").read_text())
        assert sample.input == instance["agent_input"]["instruction"]
    assert len({s.metadata["bench_subset"] for s in log.samples}) == 3
