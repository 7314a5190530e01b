"""Instances run by a worker that cannot write the run directory (runner/run/bundle.py):
the driver writes the bundles, and the run directory is the one a thread run leaves."""
import json
import threading
from pathlib import Path

import pytest

from runner import cli
from runner.run.attempt import Attempt
from runner.run.bundle import Bundle
from runner.run.executors import EXECUTORS
from runner.run.executors.base import Executor, Job
from runner.run.executors.ray_actor import InstanceActor
from runner.run.store import RunStore
from validation.instance import Instance

CASES = "eab_t1_knowledge_qa-alpha_band,eab_t1_knowledge_qa-car,eab_t2_artifact-r001"
LOST = "eab_t1_knowledge_qa-car"


class Bundled(Executor):
    """Each instance on an InstanceActor built from the job's WorkerSpec (in this process,
    as a Ray actor would be on another machine); the first `lose` instances' workers die."""

    name = "bundled"

    def __init__(self) -> None:
        self.lose: set[str] = set()

    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        actor = InstanceActor(job.worker_spec(), "node-under-test")
        for instance in instances:
            if instance.case_id in self.lose:
                job.result(job.lost(instance, "worker lost mid-instance (test)", 1.5))
                continue
            bundle = actor.work(instance, None)
            assert isinstance(bundle, Bundle) and isinstance(bundle.attempt, Attempt)
            job.result(job.record(bundle))
        actor.shutdown()


@pytest.fixture
def bundled():
    executor = Bundled()
    EXECUTORS.register("bundled", lambda: executor)
    yield executor
    EXECUTORS.unregister("bundled")


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bundled_instances_leave_the_run_directory_a_thread_run_leaves(bundled, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    common = ["eval", "--model", "oracle", "--paradigm", "tools", "--set", CASES]
    assert cli.main([*common, "--executor", "bundled", "--run", "bundled"]) == 0
    assert cli.main([*common, "--run", "threads"]) == 0
    one, other = RunStore(tmp_path / "bundled"), RunStore(tmp_path / "threads")
    assert {r.case_id: (r.status, r.score, r.rounds) for r in one.results()} == \
        {r.case_id: (r.status, r.score, r.rounds) for r in other.results()}
    for case in CASES.split(","):
        mine, theirs = files(one.instance_dir(case)), files(other.instance_dir(case))
        assert sorted(mine) == sorted(theirs)
        for name in ("instance.json", "report.md", "score.json", "artifacts.json"):
            assert mine[name] == theirs[name], (case, name)
        log = mine["controller.log"].decode()
        assert "on Ray node node-under-t" in log and "after" in log  # the worker's own log, kept


def test_a_lost_worker_records_infra_error_and_resume_reruns_it(bundled, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    common = ["eval", "--model", "oracle", "--paradigm", "tools", "--set", CASES, "--executor", "bundled", "--run", "r"]
    bundled.lose = {LOST}
    assert cli.main(common) == 0
    store = RunStore(tmp_path / "r")
    lost = {r.case_id: r for r in store.results()}[LOST]
    assert (lost.status, lost.score, lost.error) == ("infra_error", None, "worker lost mid-instance (test)")
    transcript = json.loads((store.instance_dir(LOST) / "transcript.json").read_text())
    assert [e["kind"] for e in transcript["events"]] == ["worker_lost"]
    bundled.lose = set()
    assert cli.main(common) == 0
    assert {r.case_id: (r.status, r.score) for r in store.latest_results()} == \
        {case: ("solution", 100.0) for case in CASES.split(",")}


def test_a_bundle_cannot_write_outside_its_artifacts(tmp_path):
    store = RunStore(tmp_path / "run")
    store.instance_dir("case").mkdir(parents=True)
    with pytest.raises(ValueError, match="leaves artifacts/"):
        store.write_retained("case", "log", [("../../escape.txt", b"x")])
    assert not (tmp_path / "run" / "escape.txt").exists()
    store.write_retained("case", "log text", [("plots/fig.png", b"png")])
    assert (store.artifacts_dir("case") / "plots" / "fig.png").read_bytes() == b"png"
    assert store.log_path("case").read_text() == "log text"
