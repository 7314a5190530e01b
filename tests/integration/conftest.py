"""Helpers for the end-to-end tests: run the real `eegbench` command and read its run directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def sandbox_processes(controllers: set[int]) -> set[int]:
    """Pids of sandbox processes (reaper, bwrap, kernel) started by the given controllers.

    Every sandbox process names its controller: the reaper's config holds `"parent": PID`
    and the workspace bind is under eegbench-work/PID-RUN. Other runs on the machine are
    not counted."""
    markers = [m for pid in controllers for m in (f'"parent": {pid},'.encode(), f"eegbench-work/{pid}-".encode())]
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if any(m in cmdline for m in markers):
            found.add(int(entry.name))
    return found


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


def sandbox_leftovers(controllers: set[int]) -> list[str]:
    """Processes, cgroups and state dirs of the controllers' sandboxes still present. A pids
    cgroup cannot be removed while it holds a process, so a gone cgroup means a gone kernel."""
    found = [f"process {pid}" for pid in sorted(sandbox_processes(controllers))]
    for pid in controllers:
        found += [str(p) for p in Path("/sys/fs/cgroup/pids/eegbench").glob(f"{pid}-*")]
        found += [str(p) for p in Path("/tmp/eegbench-sbx").glob(f"{pid}-*")]
        found += [str(p) for p in Path("/tmp/eegbench-dkr").glob(f"{pid}-*")]
    return found + docker_containers(controllers)


def docker_containers(controllers: set[int]) -> list[str]:
    """Containers (running or not) that the controllers' docker sandboxes left."""
    if not Path("/tmp/eegbench-dkr").exists():
        return []  # no docker sandbox ever ran on this machine
    import docker

    client = docker.from_env()
    try:
        return [f"container {c['Id'][:12]} of {pid}" for pid in controllers
                for c in client.api.containers(all=True, filters={"label": f"eegbench.controller={pid}"})]
    finally:
        client.close()


def assert_no_leftover(ev: Eval) -> None:
    deadline = time.monotonic() + 5  # killed processes take a moment to be reaped
    while (leftover := sandbox_leftovers(ev.controllers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not leftover, f"sandbox leftovers: {leftover}"


@pytest.fixture(scope="session")
def all_case_ids() -> list[str]:
    from runner import catalog

    return [i.case_id for i in catalog.select(catalog.load_all(), [])]  # the default set (no SET)


@pytest.fixture(scope="session")
def one_case_per_task(all_case_ids) -> list[str]:
    """The first case of every task in the default set: what the second backend and the
    null model run (the full set runs once, with the oracle on the local backend)."""
    from runner import catalog

    first: dict[str, str] = {}
    for instance in sorted(catalog.select(catalog.load_all(), []), key=lambda i: i.case_id):
        first.setdefault(instance.task_id, instance.case_id)
    return sorted(first.values())


def ground_truth_mismatches(ev: Eval, run: str) -> dict[str, tuple[object, object]]:
    """"case.key" -> (parsed, ground truth) for every deterministic metric whose parsed value
    is not exactly its ground truth. The oracle reports what the reference script computed in
    the kernel; truth generation ran the same script on the host: they must agree to the bit."""
    from runner.run.store import RunStore
    from validation import unit_registry

    store = RunStore(ev.runs_dir / run)
    found = {}
    for case in store.finished():
        fields = store.read_score(case).fields
        for metric in store.saved_instance(case).eval_config.metrics:
            if not unit_registry.get(metric.type).deterministic or "ground_truth" not in metric.params:
                continue
            parsed, truth = fields.get(metric.target_key), metric.params["ground_truth"]
            if parsed != truth:
                found[f"{case}.{metric.target_key}"] = (parsed, truth)
    return found
