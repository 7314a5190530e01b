"""Adding an executor is one registration: a sequential toy executor, registered here and
nowhere else, runs `eegbench eval --executor toy` and gives the thread pool's results."""
import json
import threading

import pytest

from runner import cli
from runner.run.executors import EXECUTORS
from runner.run.executors.base import Executor, Job
from validation.instance import Instance

CASES = "eab_t1_knowledge_qa-alpha_band,eab_t1_knowledge_qa-car,eab_t2_artifact-r001"


class Sequential(Executor):
    name = "toy"

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        for instance in instances:
            job.progress(1, [])
            attempt = job.work(instance)
            self.ran.append(instance.case_id)
            job.result(None if attempt is None else job.finish(attempt))
        job.progress(0, [])


@pytest.fixture
def toy():
    executor = Sequential()
    EXECUTORS.register("toy", lambda: executor)
    yield executor
    EXECUTORS.unregister("toy")


def results(runs, run):
    lines = (runs / run / "results.jsonl").read_text().splitlines()
    return {r["case_id"]: (r["status"], r["score"]) for r in map(json.loads, lines)}


def test_a_registered_executor_runs_the_instances(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    common = ["eval", "--model", "oracle", "--paradigm", "tools", "--set", CASES]
    assert cli.main([*common, "--executor", "toy", "--run", "toy"]) == 0
    assert cli.main([*common, "--executor", "threads", "--jobs", "2", "--run", "threads"]) == 0
    assert sorted(toy.ran) == sorted(CASES.split(","))
    assert results(tmp_path, "toy") == results(tmp_path, "threads")
    assert set(results(tmp_path, "toy").values()) == {("solution", 100.0)}
    recorded = json.loads((tmp_path / "toy" / "run.json").read_text())
    assert recorded["config"]["executor"] == "toy"


def test_an_unregistered_executor_is_refused_by_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    with pytest.raises(SystemExit):
        cli.main(["eval", "--model", "oracle", "--executor", "toy", "--set", CASES])
    assert "invalid choice: 'toy'" in capsys.readouterr().err
