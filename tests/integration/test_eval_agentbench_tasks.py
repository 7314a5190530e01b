"""`eegbench eval --set ...` on EEGAgentBench instances: T1 and T2 from the committed instances
(T2 epochs regenerated from the packaged recordings into a private data root), T3-T6 built by
`eegbench truth --dataset` from fixtures in each dataset's native layout. The oracle scores 100
everywhere and `eegbench show RUN` prints the metrics table at 1.0; the null model scores 0,
with every answer counted as unparseable, none dropped."""
from __future__ import annotations

import json
import re

import pytest

from runner.benchmark import catalog
from tests.fixtures import datasets as fx

pytestmark = pytest.mark.integration

DATASETS = {"bonn": fx.make_bonn, "ds004504": fx.make_ds004504, "chbmit": fx.make_chbmit,
            "sleepedfx": fx.make_sleepedfx}
FIXTURE_TASKS = ["eab_t3_bonn", "eab_t4_ds004504", "eab_t5_chbmit", "eab_t6_sleepedfx"]


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    base = tmp_path_factory.mktemp("agentbench")
    data_root = fx.agentbench_data_root(base / "data")
    copies = {name: make(base / "copies" / name) for name, make in DATASETS.items()}
    return data_root, base / "local_instances", copies


@pytest.fixture
def env(setting, monkeypatch):
    data_root, local, copies = setting
    monkeypatch.setenv("EEGBENCH_DATA", str(data_root))
    monkeypatch.setenv("EEGBENCH_LOCAL_INSTANCES", str(local))
    return setting


def _selection() -> list[str]:
    committed = catalog.load_all()
    t1 = sorted(i.case_id for i in committed if i.task_id == "eab_t1_knowledge_qa")[:4]
    t2 = []
    for label in ("clean", "ocular", "muscle"):
        t2 += sorted(i.case_id for i in committed if i.task_id == "eab_t2_artifact"
                     and i.reference.params["answer"] == label)[:2]
    return t1 + t2 + FIXTURE_TASKS


def _build_fixture_instances(eegbench, copies) -> None:
    for name, root in copies.items():
        proc = eegbench("truth", "--dataset", name, "--root", str(root))
        assert proc.returncode == 0, proc.stderr[-2000:]


def test_oracle_scores_100_and_show_prints_the_metrics(eegbench, env):
    data_root, local, copies = env
    _build_fixture_instances(eegbench, copies)
    assert sorted(p.name for p in local.iterdir()) == sorted(DATASETS)
    proc = eegbench("eval", "--model", "oracle", "--set", ",".join(_selection()), "--run", "oracle",
                    "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("oracle")
    assert len(results) == 4 + 6 + 8 + 6 + 4 + 4
    assert {r["case_id"]: r["score"] for r in results if r["score"] != 100.0} == {}
    shown = eegbench("show", "oracle")
    assert shown.returncode == 0, shown.stderr
    assert "EEGAgentBench metrics" in shown.stdout
    assert "Overall 1.000 (mean of the primary metrics of 6/6 families)" in shown.stdout
    primary = re.search(r"primary\s*│(.*)│\s*$", shown.stdout, re.M).group(1)
    assert primary.count("1.000") == 6, primary
    logs = eegbench("logs", "oracle")
    assert "EEGAgentBench metrics" in logs.stdout


def test_null_scores_zero_and_counts_every_answer_as_unparseable(eegbench, env):
    data_root, local, copies = env
    _build_fixture_instances(eegbench, copies)
    proc = eegbench("eval", "--model", "null", "--set", ",".join(_selection()), "--run", "null",
                    "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("null")
    assert len(results) == 32 and all(r["score"] == 0.0 for r in results)
    shown = eegbench("show", "null").stdout
    row = re.search(r"unparseable answers\s*│(.*)│\s*$", shown, re.M).group(1)
    assert [int(x) for x in re.findall(r"\d+", row)] == [4, 6, 8, 6, 4, 4]
    assert "Over-alarm rate" in shown and "Miss rate" in shown
    score = json.loads((eegbench.runs_dir / "null" / "instances" / results[0]["case_id"]
                        / "score.json").read_text())
    assert score["metrics"][0]["predicted"] is None


def test_tools_and_hybrid_paradigms_run_every_family(eegbench, env, tmp_path):
    """PARADIGM=tools (the paper's protocol) and PARADIGM=hybrid on T1-T6: the oracle scores
    100 under both; a scripted tool user is recorded call by call and scored as answered."""
    data_root, local, copies = env
    _build_fixture_instances(eegbench, copies)
    selection = ",".join(_selection())
    for paradigm in ("tools", "hybrid"):
        proc = eegbench("eval", "--paradigm", paradigm, "--model", "oracle", "--set", selection,
                        "--run", f"{paradigm}-oracle", "--jobs", "2")
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = eegbench.results(f"{paradigm}-oracle")
        assert len(results) == 32 and {r["score"] for r in results} == {100.0}, paradigm
    script = tmp_path / "tool_user.json"
    script.write_text(json.dumps({"replies": [
        json.dumps({"action": "get_recording_info", "args": {}}),
        json.dumps({"action": "final_answer", "answer": [[0, 30]]}),
    ]}))
    t5 = [i.case_id for i in catalog.load_all(local_dir=local) if i.task_id == "eab_t5_chbmit"]
    proc = eegbench("eval", "--paradigm", "tools", "--model", f"script:{script}", "--set", "eab_t5_chbmit",
                    "--run", "tools-script", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r["case_id"]: r for r in eegbench.results("tools-script")}
    assert sorted(results) == sorted(t5) and {r["status"] for r in results.values()} == {"solution"}
    assert all(r["score"] is not None for r in results.values())
    turns = eegbench.transcript("tools-script", t5[0])["turns"]
    assert [c["name"] for t in turns for c in t["tool_calls"]] == ["get_recording_info"]
    assert "Dice" in eegbench("show", "tools-script").stdout
