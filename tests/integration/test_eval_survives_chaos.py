"""SIGKILL at random moments of an oracle run (JOBS=2), each kill followed by a resume: the
finished run holds each instance exactly once, `eegbench verify` finds it whole, its scores
and statuses are a clean run's, and nothing of the killed controllers is left behind.

The kill moments are drawn uniformly over a clean run's duration, so they fall during startup
and stale collection, sandbox start, executions, scoring, the artifact copy (a 5.8 MB FIF) and
the results append; every other kill takes the controller's whole process group (the mount,
mkfs and docker helpers it runs), the others the controller alone. A run that completes
before its kill ends that round, and the next cycle starts a new run. EEGBENCH_CHAOS_CYCLES
sets the number of cycles (`make chaos`: 20), EEGBENCH_CHAOS_SEED replays a failing sequence
(the seed is printed, and named in every assertion).
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import PROJECT_ROOT, Eval
from tests.integration.leftovers import assert_nothing_left

CASES = (
    "fa_hjorth-01", "fa_hjorth-02", "fa_hjorth-03",
    "fa_reref_filter_fif-01",   # writes a FIF under /workspace/file_check
    "sa_hypnogram_export-01",   # writes a CSV under /workspace/file_check
    "sa_awakenings-01", "sa_awakenings-02", "sa_consolidation-01", "sa_consolidation-02",
    "sa_sleep_metrics-01",
)
CYCLES = int(os.environ.get("EEGBENCH_CHAOS_CYCLES", "3"))
SEED = int(os.environ.get("EEGBENCH_CHAOS_SEED") or random.SystemRandom().randrange(2**32))
RUN_TIMEOUT_S = 600


@dataclass
class Cycle:
    """One start of the run and what became of it."""

    run: str
    delay_s: float
    group: bool
    killed: bool = False
    state: str = ""

    def line(self) -> str:
        how = ("killed " + ("process group" if self.group else "controller")) if self.killed else "completed first"
        return f"{self.run}: {how} after {self.delay_s:.1f} s; {self.state}"


def eval_args(backend: str, run: str) -> tuple[str, ...]:
    return ("eval", "--model", "oracle", "--jobs", "2", "--sandbox", backend, "--run", run, "--set", ",".join(CASES))


def outcomes(results: list[dict]) -> dict[str, tuple[str, float | None]]:
    return {r["case_id"]: (r["status"], r["score"]) for r in results}


def start(ev: Eval, log: Path, *args: str) -> subprocess.Popen:
    """The controller in a session of its own, so that its process group can be killed."""
    with open(log, "w") as out:
        proc = subprocess.Popen(ev.command(*args), cwd=PROJECT_ROOT, env=ev.env(), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    ev.controllers.add(proc.pid)
    return proc


def run_dir_state(ev: Eval, run: str) -> str:
    """Where the kill left the run: results lines, and the files of each unfinished entry."""
    finished = {r["case_id"] for r in ev.results(run)}
    folder = ev.runs_dir / run / "instances"
    unfinished = [d for d in sorted(folder.iterdir()) if d.name not in finished] if folder.is_dir() else []
    files = "; ".join(f"{d.name}: {','.join(sorted(p.name for p in d.iterdir()))}" for d in unfinished)
    return f"{len(finished)} results lines, unfinished [{files}]"


def chaos(ev: Eval, backend: str, clean_s: float, logs: Path) -> tuple[list[Cycle], list[str]]:
    """CYCLES starts of the run, each SIGKILLed at a random moment unless it completes first."""
    rng = random.Random(SEED)
    runs, cycles, completed = ["chaos-1"], [], False
    horizon = clean_s  # the kill moments are drawn before the fastest whole run seen so far
    for number in range(CYCLES):
        if completed:
            runs.append(f"chaos-{len(runs) + 1}")
        delay = rng.uniform(0, horizon)
        if number == CYCLES - 1 and not any(c.killed for c in cycles):
            delay = horizon / 2  # every earlier run completed first (a busy clean run): kill this one
        cycle = Cycle(run=runs[-1], delay_s=delay, group=number % 2 == 1)
        began = time.monotonic()
        proc = start(ev, logs / f"cycle-{number}.log", *eval_args(backend, cycle.run))
        try:
            proc.wait(timeout=cycle.delay_s)
            horizon = min(horizon, time.monotonic() - began)
        except subprocess.TimeoutExpired:
            if cycle.group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
            proc.wait()
            cycle.killed = True
        completed = not cycle.killed
        assert cycle.killed or proc.returncode == 0, f"seed {SEED}: {(logs / f'cycle-{number}.log').read_text()[-3000:]}"
        cycle.state = run_dir_state(ev, cycle.run)
        cycles.append(cycle)
        print(f"cycle {number}: {cycle.line()}")
    return cycles, runs


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_sigkill_at_random_moments_then_resume_loses_nothing_and_leaves_nothing(eegbench, tmp_path, backend):
    print(f"chaos seed {SEED}, {CYCLES} cycles on {backend} (EEGBENCH_CHAOS_SEED={SEED} replays it)")
    began = time.monotonic()
    clean = eegbench(*eval_args(backend, "clean"), timeout=RUN_TIMEOUT_S)
    clean_s = time.monotonic() - began
    assert clean.returncode == 0, clean.stderr[-3000:]
    expected = outcomes(eegbench.results("clean"))
    assert sorted(expected) == sorted(CASES)

    cycles, runs = chaos(eegbench, backend, clean_s, tmp_path)
    final = eegbench(*eval_args(backend, runs[-1]), timeout=RUN_TIMEOUT_S)
    history = f"seed {SEED}:\n" + "\n".join(c.line() for c in cycles)
    assert final.returncode == 0, f"{history}\n{final.stderr[-3000:]}"
    assert any(c.killed for c in cycles), history

    for run in runs:
        results = eegbench.results(run)
        assert sorted(r["case_id"] for r in results) == sorted(CASES), f"{run}: {history}"
        verified = eegbench("verify", run)
        assert verified.returncode == 0, f"{run}: {history}\n{verified.stderr[-3000:]}"
        assert outcomes(results) == expected, f"{run}: {history}"
    assert_nothing_left(eegbench.controllers)
