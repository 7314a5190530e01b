import json
import os

import pytest

from runner.config import RunConfig
from runner.run.artifacts import retain_artifacts
from runner.run.records import ResultRecord
from runner.run.store import RunConflict, RunStore


def record(case, status="solution", score=100.0):
    return ResultRecord(case_id=case, task_id="t", bench_subset="s", status=status, score=score,
                        rounds=1, prompt_tokens=1, completion_tokens=1, duration_s=0.1)


def test_new_run_writes_run_json_and_resume_is_detected(tmp_path):
    store = RunStore(tmp_path / "r1")
    assert store.open(RunConfig(run_id="r1", model="oracle"), {"git_revision": "x"}) is False
    assert json.loads((tmp_path / "r1" / "run.json").read_text())["config"]["model"] == "oracle"
    assert RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle", jobs=4), {}) is True


def test_rerun_with_different_settings_names_the_field(tmp_path):
    RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle"), {})
    with pytest.raises(RunConflict, match="model"):
        RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="null"), {})


def test_resume_drops_torn_lines_infra_errors_and_duplicates(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.append_result(record("a"))
    store.append_result(record("b", status="infra_error", score=None))
    store.append_result(record("a", score=0.0))
    with open(store.root / "results.jsonl", "a") as fh:
        fh.write('{"case_id": "c", "sta')  # SIGKILL mid-write
    RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle"), {})
    lines = (store.root / "results.jsonl").read_text().splitlines()
    assert [json.loads(l)["case_id"] for l in lines] == ["a"]
    assert json.loads(lines[0])["score"] == 100.0
    assert set(store.finished()) == {"a"}


def test_artifacts_are_copied_with_sha256_and_symlinks_never_followed(tmp_path):
    ws = tmp_path / "ws"
    (ws / "file_check" / "sub").mkdir(parents=True)
    (ws / "file_check" / "sub" / "x.npy").write_bytes(b"abc")
    os.symlink("/etc/passwd", ws / "file_check" / "leak.txt")
    os.symlink("/etc", ws / "file_check" / "etcdir")
    manifest = retain_artifacts(ws, tmp_path / "out")
    by_path = {m.path: m for m in manifest}
    assert by_path["sub/x.npy"].sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert (tmp_path / "out" / "sub" / "x.npy").read_bytes() == b"abc"
    assert by_path["leak.txt"].skipped and by_path["etcdir"].skipped
    assert by_path["leak.txt"].link_target == "/etc/passwd"
    assert not (tmp_path / "out" / "leak.txt").exists()
