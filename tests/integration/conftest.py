"""Helpers for the end-to-end tests: run the real `eegbench` command and read its run directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.leftovers import assert_nothing_left

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _renice(increment: int) -> None:
    try:
        os.nice(increment)
    except PermissionError:
        pass  # not root: the run keeps the ordinary priority


class Eval:
    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir
        self.controllers: set[int] = set()

    def env(self) -> dict:
        return {**os.environ, "EEGBENCH_RUNS": str(self.runs_dir)}

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "runner.cli", *args]

    def __call__(self, *args: str, timeout: float = 1200, nice: int = 0) -> subprocess.CompletedProcess:
        """Run the command to its end; `nice` < 0 raises its priority (and its sandboxes') where
        the user may (root), so the suite's critical path is not slowed by the other workers."""
        proc = subprocess.Popen(self.command(*args), cwd=PROJECT_ROOT, env=self.env(), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=(lambda: _renice(nice)) if nice else None)
        self.controllers.add(proc.pid)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)

    def popen(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen(self.command(*args), cwd=PROJECT_ROOT, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.controllers.add(proc.pid)
        return proc

    def results(self, run: str) -> list[dict]:
        path = self.runs_dir / run / "results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def transcript(self, run: str, case: str) -> dict:
        return json.loads((self.runs_dir / run / "instances" / case / "transcript.json").read_text())


@pytest.fixture
def eegbench(tmp_path) -> Eval:
    ev = Eval(tmp_path / "runs")
    yield ev
    assert_no_leftover(ev)


@pytest.fixture
def endpoint(monkeypatch):
    """Point the openai model kind at a stub (no proxy on the way to 127.0.0.1)."""
    def use(server) -> str:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("EEGBENCH_BASE_URL", server.url)
        monkeypatch.setenv("EEGBENCH_API_KEY", "sk-stub")
        return "openai:stub-model"
    return use


def assert_no_leftover(ev: Eval) -> None:
    """Nothing of the command's runs is left on the machine (tests/integration/leftovers.py)."""
    assert_nothing_left(ev.controllers)


@pytest.fixture(scope="session")
def all_case_ids() -> list[str]:
    from runner.benchmark import catalog

    return [i.case_id for i in catalog.select(catalog.load_all(), [])]  # the default set (no SET)


def cases_by_task() -> dict[str, list[str]]:
    """The default set's case ids, grouped by task, each list sorted."""
    from runner.benchmark import catalog

    grouped: dict[str, list[str]] = {}
    for instance in sorted(catalog.select(catalog.load_all(), []), key=lambda i: i.case_id):
        grouped.setdefault(instance.task_id, []).append(instance.case_id)
    return grouped


@pytest.fixture(scope="session")
def one_case_per_task(all_case_ids) -> list[str]:
    """The first case of every task in the default set (SET=check, what `make eval` without a
    MODEL runs): what the second backend and the null model run (the sampled set runs once,
    with the oracle on the local backend)."""
    from runner.benchmark import catalog

    chosen = sorted(i.case_id for i in catalog.one_per_task(catalog.select(catalog.load_all(), [])))
    assert chosen == sorted(cases[0] for cases in cases_by_task().values())
    return chosen


ORACLE_CASES_PER_TASK = 4


@pytest.fixture(scope="session")
def oracle_sample() -> list[str]:
    """Up to ORACLE_CASES_PER_TASK cases of every task, evenly spread over its sorted cases
    (first and last included): what the suite's oracle run plays in the sandbox. The whole set
    (1,200+ instances) takes longer than CI's budget on 2 cores; every instance's ground truth is
    still regenerated in-process by `truth --check`, and `make eval MODEL=oracle` runs them all."""
    picked: list[str] = []
    for cases in cases_by_task().values():
        k = min(ORACLE_CASES_PER_TASK, len(cases))
        picked += sorted({cases[round(i * (len(cases) - 1) / max(k - 1, 1))] for i in range(k)})
    return sorted(picked)


def ground_truth_mismatches(ev: Eval, run: str) -> dict[str, tuple[object, object]]:
    """"case.key" -> (parsed, ground truth) for every deterministic metric whose parsed value
    is not exactly its ground truth. The oracle reports what the reference script computed in
    the kernel; truth generation ran the same script on the host: they must agree to the bit."""
    from runner.run.store import RunStore
    from validation.unit_registry import UNITS

    store = RunStore(ev.runs_dir / run)
    found = {}
    for case in store.finished():
        fields = store.read_score(case).fields
        for metric in store.saved_instance(case).eval_config.metrics:
            if not UNITS.get(metric.type).deterministic or "gt_value" not in metric.params:
                continue
            parsed, truth = fields.get(metric.target_key), metric.params["gt_value"]
            if parsed != truth:
                found[f"{case}.{metric.target_key}"] = (parsed, truth)
    return found
