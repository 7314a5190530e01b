"""--epochs in the scheduler: every epoch of every instance is one unit of work, epoch 1 of
all instances first; resume runs only the missing (case, epoch) pairs. Driven through the
real command in this process with a recording executor (the tools paradigm needs no sandbox)."""
import json
import threading

import pytest

from runner import cli
from runner.benchmark import catalog
from runner.run.executors import EXECUTORS
from runner.run.executors.base import Executor, Job
from runner.run.records import EpochInstance, epoch_of, key_of, plain_instance
from runner.run.scheduler import work_units
from validation.instance import Instance, dump_instance

CASES = ["eab_t1_knowledge_qa-alpha_band", "eab_t1_knowledge_qa-car"]


class Recording(Executor):
    name = "recording"

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        for instance in instances:
            attempt = job.work(instance)
            self.ran.append(key_of(instance))
            job.result(None if attempt is None else job.finish(attempt))


@pytest.fixture
def recording():
    executor = Recording()
    EXECUTORS.register("recording", lambda: executor)
    yield executor
    EXECUTORS.unregister("recording")


def evaluate(epochs: int) -> int:
    return cli.main(["eval", "--model", "oracle", "--paradigm", "tools", "--set", ",".join(CASES),
                     "--executor", "recording", "--run", "ep", "--epochs", str(epochs)])


def keys(path) -> list[tuple[str, int]]:
    return [(r["case_id"], r["epoch"]) for r in map(json.loads, path.read_text().splitlines())]


def test_work_units_are_epoch_major_and_keep_the_instance():
    instances = catalog.select(catalog.load_all(), CASES)
    units = work_units(instances, 3)
    assert [key_of(u) for u in units] == [*CASES, *(f"{c}@2" for c in CASES), *(f"{c}@3" for c in CASES)]
    assert [epoch_of(u) for u in units] == [1, 1, 2, 2, 3, 3]
    assert all(dump_instance(plain_instance(u)) == dump_instance(i) for u, i in zip(units, instances * 3))
    assert epoch_of(instances[0]) == 1 and key_of(instances[0]) == CASES[0]  # a plain Instance is epoch 1
    assert isinstance(units[0], EpochInstance) and isinstance(units[0], Instance)


def test_epochs_run_in_order_and_a_resume_runs_only_the_missing_pairs(recording, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EEGBENCH_RUNS", str(tmp_path))
    assert evaluate(2) == 0
    assert recording.ran == [*CASES, *(f"{c}@2" for c in CASES)]
    results = tmp_path / "ep" / "results.jsonl"
    assert sorted(keys(results)) == sorted((c, e) for c in CASES for e in (1, 2))
    lines = results.read_text().splitlines()
    results.write_text("".join(line + "\n" for line in lines if json.loads(line)["epoch"] == 1)
                       + lines[-1][:30])  # epoch 2 lost, the last line torn by a kill
    recording.ran.clear()
    assert evaluate(3) == 0  # a larger --epochs extends the run
    assert recording.ran == [*(f"{c}@2" for c in CASES), *(f"{c}@3" for c in CASES)]
    assert "resuming ep: 2 finished, 4 to run" in capsys.readouterr().err
    assert sorted(keys(results)) == sorted((c, e) for c in CASES for e in (1, 2, 3))
    recording.ran.clear()
    assert evaluate(1) == 0  # a smaller one runs nothing new, and says so
    assert recording.ran == []
    assert "holds epochs up to 3; --epochs 1 runs no new epoch" in " ".join(capsys.readouterr().err.split())
