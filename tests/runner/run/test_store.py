"""RunStore: run.json, results.jsonl, instance records (typed, versioned, streamed), summary."""
import errno
import json
import os
from pathlib import Path

import pytest

from runner.core.config import RunConfig
from runner.core.transcript import InfraEvent, Turn
from runner.run.artifacts import retain_artifacts
from runner.run.recorded import MissingRecord
from runner.run.records import FORMAT_VERSION, NewerFormat, ResultRecord, RunSummary, TranscriptRecord
from runner.run.store import ENTRY_FILES, DiskFull, RunConflict, RunStore, open_run
from runner.run.summary import summarize
from validation.instance import Instance


def record(case, status="solution", score=100.0, epoch=1):
    return ResultRecord(case_id=case, epoch=epoch, task_id="t", bench_subset="s", status=status, score=score,
                        rounds=1, prompt_tokens=1, completion_tokens=1, duration_s=0.1)


def recorded(store, *keys):
    """The audit files write_instance leaves, so that resume keeps these entries' lines."""
    for key in keys:
        folder = store.instance_dir(key)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ENTRY_FILES:
            (folder / name).write_text("{}")


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
    recorded(store, "a", "b", "c")
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


# --- typed records, format versions, streaming, summary ----------------------------------------

V1 = Path(__file__).resolve().parents[2] / "fixtures" / "runs_v1"


def test_a_new_run_records_its_format_version(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {"git_revision": "x"})
    assert store.read_run().format_version == FORMAT_VERSION
    assert store.read_run().environment() == {"git_revision": "x"}


def test_a_run_in_a_newer_format_is_refused_by_every_reader(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    data = json.loads((store.root / "run.json").read_text())
    (store.root / "run.json").write_text(json.dumps({**data, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(NewerFormat, match=f"format version {FORMAT_VERSION + 1}.*update eegbench"):
        open_run("r1", tmp_path)
    with pytest.raises(NewerFormat):
        store.config()


def test_format_1_run_reads_through_the_typed_records():
    store = open_run(str(V1 / "v1-oracle-codeact"), Path("/nonexistent"))
    assert store.read_run().format_version == 1
    assert store.config().model == "oracle"
    finished = store.finished()
    assert set(finished) == {"fa_alpha_relpower-01", "nc_erp_image-01", "sa_hypnogram_export-01"}
    transcript = store.read_transcript("nc_erp_image-01")
    assert transcript.status == "solution" and transcript.events == []
    assert [t.action for t in transcript.turns] == ["execute", "solution"]
    assert store.read_score("nc_erp_image-01").score == 100.0
    assert store.saved_instance("nc_erp_image-01").case_id == "nc_erp_image-01"
    [artifact] = store.read_artifacts("nc_erp_image-01")
    assert artifact.path == "erp_image.png" and len(artifact.sha256) == 64
    assert (store.artifacts_dir("nc_erp_image-01") / "erp_image.png").is_file()
    summary = store.summary()  # version 1 has no summary.json: computed
    assert summary.groups["all"].instances == 3 and summary.groups["all"].mean_score == 100.0


def test_an_unfinished_instance_shows_the_turns_streamed_so_far(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.begin_instance("c-01", "codeact")
    store.append_turn("c-01", Turn(index=0, reply="<execute>1</execute>", action="execute", code="1"))
    store.append_event("c-01", InfraEvent(kind="model_retry", detail="HTTP 503", turn=1))
    with open(store.instance_dir("c-01") / "turns.jsonl", "a") as stream:
        stream.write('{"turn": {"index": 1, "rep')  # the controller died mid-write
    transcript = store.read_transcript("c-01")
    assert transcript.status is None and transcript.paradigm == "codeact"
    assert [t.index for t in transcript.turns] == [0]
    assert [e.detail for e in transcript.events] == ["HTTP 503"]
    assert transcript.controller_pid == os.getpid() and transcript.controller_start is not None


def test_finishing_an_instance_folds_the_stream_into_the_transcript(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.begin_instance("c-01", "codeact")
    turn = Turn(index=0, reply="<solution>x</solution>", action="solution")
    store.append_turn("c-01", turn)
    instance = Instance.model_validate({
        "meta_info": {"case_id": "c-01", "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "a.edf", "instruction": "x"},
        "eval_config": {"metrics": []},
    })
    store.write_instance("c-01", instance, TranscriptRecord(case_id="c-01", status="solution", turns=[turn]), "x", [], None)
    assert not (store.instance_dir("c-01") / "turns.jsonl").exists()
    assert store.read_transcript("c-01").status == "solution"
    assert store.read_report("c-01") == "x" and store.read_score("c-01") is None


def test_summary_json_is_written_and_used_until_results_grow(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.append_result(record("a", score=100.0))
    store.append_result(record("b", status="max_rounds", score=0.0))
    written = store.write_summary()
    assert json.loads((store.root / "summary.json").read_text())["results"] == 2
    assert written.groups["all"].statuses == {"max_rounds": 1, "solution": 1}
    assert written.groups["all"].mean_score == 50.0 and written.groups["s"].instances == 2
    store.append_result(record("c", score=100.0))
    assert store.summary().results == 3  # stale file: recomputed


def test_readers_name_the_missing_run_and_case(tmp_path):
    with pytest.raises(MissingRecord, match="no run named 'nope'.*runs: none"):
        open_run("nope", tmp_path)
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    with pytest.raises(MissingRecord, match="r1 has no instance 'x-01'"):
        store.read_transcript("x-01")
    with pytest.raises(Exception, match="not a case id"):
        store.instance_dir("../r2")


# --- epochs: one entry per (case, epoch) --------------------------------------------------------

def instance_of(case_id):
    return Instance.model_validate({
        "meta_info": {"case_id": case_id, "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "a.edf", "instruction": "x"},
        "eval_config": {"metrics": []},
    })


def test_results_are_keyed_and_compacted_per_case_and_epoch(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle", epochs=3), {})
    store.append_result(record("a", score=0.0))
    store.append_result(record("a", score=100.0, epoch=2))
    store.append_result(record("b", status="infra_error", score=None, epoch=3))
    store.append_result(record("a", score=50.0, epoch=2))  # a duplicate of (a, 2): the first stays
    store.append_result(record("b", score=100.0, epoch=2))
    with open(store.root / "results.jsonl", "a") as fh:
        fh.write('{"case_id": "a", "epoch": 3, "sta')  # SIGKILL mid-write
    assert store.entries() == ["a", "a@2", "b@2"]
    recorded(store, "a", "a@2", "b@2", "b@3")
    RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle", epochs=3), {})
    lines = [json.loads(line) for line in (store.root / "results.jsonl").read_text().splitlines()]
    assert [(r["case_id"], r["epoch"], r["score"]) for r in lines] == [("a", 1, 0.0), ("a", 2, 100.0), ("b", 2, 100.0)]
    assert {k: r.epoch for k, r in store.finished().items()} == {"a": 1, "a@2": 2, "b@2": 2}


def test_a_line_without_epoch_is_epoch_1_under_the_case_id(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    line = record("a").model_dump(mode="json")
    del line["epoch"]  # as written before --epochs existed
    (store.root / "results.jsonl").write_text(json.dumps(line) + "\n")
    assert store.entries() == ["a"] and store.finished()["a"].epoch == 1


def test_each_epoch_has_its_own_directory_and_transcript(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle", epochs=2), {})
    for key, report in (("c-01", "first"), ("c-01@2", "second")):
        store.begin_instance(key, "codeact")
        store.write_instance(key, instance_of("c-01"), TranscriptRecord(case_id="c-01", status="solution"), report, [], None)
    assert store.instance_dir("c-01@2") == store.root / "instances" / "c-01@2"
    assert store.read_report("c-01") == "first" and store.read_report("c-01@2") == "second"
    assert store.saved_instance("c-01@2").case_id == "c-01"
    store.begin_instance("c-01@3", "codeact")
    header = store.read_transcript("c-01@3")
    assert (header.case_id, header.epoch, header.status) == ("c-01", 3, None)
    with pytest.raises(ValueError, match="'c-02@2' is not a run of instance 'c-01'"):
        store.write_instance("c-02@2", instance_of("c-01"), TranscriptRecord(case_id="c-01"), "", [], None)


def test_epochs_are_not_part_of_the_resume_key_and_run_json_records_the_most(tmp_path):
    RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle", epochs=2), {})
    assert RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle", epochs=5), {}) is True
    assert RunStore(tmp_path / "r1").config().epochs == 5
    assert RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle", epochs=1), {}) is True
    assert RunStore(tmp_path / "r1").config().epochs == 5  # the later epochs are kept


def test_epochs_below_one_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        RunConfig(run_id="r1", model="oracle", epochs=0)


def test_summary_counts_every_line_and_gives_per_epoch_means(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle", epochs=2), {})
    store.append_result(record("a", score=100.0))
    store.append_result(record("b", score=0.0))
    store.append_result(record("a", score=0.0, epoch=2))
    store.append_result(record("b", score=0.0, epoch=2))
    summary = store.write_summary()
    assert summary.results == 4 and summary.groups["all"].instances == 4 and summary.groups["all"].mean_score == 25.0
    assert {k: g.mean_score for k, g in summary.epochs.items()} == {1: 50.0, 2: 0.0}
    assert {k: g.instances for k, g in store.summary().epochs.items()} == {1: 2, 2: 2}  # read back from summary.json


def test_summary_totals_reasoning_tokens_and_reads_summaries_without_them():
    lines = [record("a").model_copy(update={"completion_tokens": 50, "reasoning_tokens": 30}),
             record("b").model_copy(update={"completion_tokens": 20, "reasoning_tokens": 5})]
    summary = summarize("r", lines)
    assert (summary.groups["all"].completion_tokens, summary.groups["all"].reasoning_tokens) == (70, 35)
    old = summary.model_dump()
    del old["groups"]["all"]["reasoning_tokens"]
    assert RunSummary.model_validate(old).groups["all"].reasoning_tokens == 0


def test_a_single_epoch_summary_has_no_epoch_groups_and_old_summaries_read():
    assert summarize("r", [record("a"), record("b")]).epochs == {}
    old = {"run_id": "r", "results": 0, "groups": {}, "with_unscored_units": 0, "violations": 0}
    assert RunSummary.model_validate(old).epochs == {}


# --- nothing half-written: a full disk, a damaged directory -------------------------------------

def full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_resume_runs_again_an_entry_whose_directory_is_not_whole(tmp_path):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.append_result(record("a"))
    store.append_result(record("b"))
    recorded(store, "a", "b")
    (store.instance_dir("b") / "score.json").unlink()
    RunStore(tmp_path / "r1").open(RunConfig(run_id="r1", model="oracle"), {})
    assert set(store.finished()) == {"a"}


def test_a_results_line_that_does_not_fit_is_cut_off_and_stops_the_run(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs" / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.append_result(record("a"))
    before = (store.root / "results.jsonl").read_bytes()
    calls = []

    def half_then_full(fd, data):  # the file system takes half the line, then nothing
        calls.append(len(data))
        if len(calls) == 1:
            return os.write(fd, bytes(data[: len(data) // 2]))
        full()

    monkeypatch.setattr("runner.run.store.os.write", half_then_full)
    with pytest.raises(DiskFull, match=f"runs directory {tmp_path / 'runs'} is full: No space left on device"):
        store.append_result(record("b"))
    assert (store.root / "results.jsonl").read_bytes() == before
    assert len(calls) == 2


def test_a_short_write_is_finished_not_torn(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    real_write = os.write
    monkeypatch.setattr("runner.run.store.os.write", lambda fd, data: real_write(fd, bytes(data[:7])))
    store.append_result(record("a"))
    assert list(store.finished()) == ["a"]


@pytest.mark.parametrize("write", ["begin", "turn", "instance", "summary", "artifacts"])
def test_every_write_of_a_run_turns_a_full_disk_into_one_disk_full_error(tmp_path, monkeypatch, write):
    store = RunStore(tmp_path / "runs" / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})
    store.begin_instance("c-01", "codeact")
    (tmp_path / "ws" / "file_check").mkdir(parents=True)
    (tmp_path / "ws" / "file_check" / "x.csv").write_text("1")
    monkeypatch.setattr("runner.run.store.write_atomic", full)
    monkeypatch.setattr("runner.run.store.write_json", full)
    monkeypatch.setattr("runner.run.store.open", full, raising=False)
    monkeypatch.setattr("runner.run.artifacts.open", full, raising=False)
    actions = {
        "begin": lambda: store.begin_instance("c-02", "codeact"),
        "turn": lambda: store.append_event("c-01", InfraEvent(kind="sandbox_failure", detail="x")),
        "instance": lambda: store.write_instance("c-01", instance_of("c-01"),
                                                 TranscriptRecord(case_id="c-01", status="solution"), "", [], None),
        "summary": store.write_summary,
        "artifacts": lambda: store.retain_artifacts("c-01", tmp_path / "ws"),
    }
    with pytest.raises(DiskFull, match="No space left on device.*RUN=r1 to resume"):
        actions[write]()


def test_other_write_errors_are_not_taken_for_a_full_disk(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "r1")
    store.open(RunConfig(run_id="r1", model="oracle"), {})

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("runner.run.store.write_atomic", denied)
    with pytest.raises(PermissionError):
        store.write_summary()
