"""Orphans are found by the controller mark in their environment: a process whose controller
is gone is one, a live controller's worker and a controller itself are not."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from runner.run import orphans
from runner.sandbox import procfs
from validation.worker_lifetime import CONTROLLER_ENV


def _sleeper(mark: str) -> subprocess.Popen:
    proc = subprocess.Popen(["sleep", "60"], env={**os.environ, CONTROLLER_ENV: mark})
    deadline = time.monotonic() + 10
    while orphans.controller_of(proc.pid) is None:  # until sleep has exec'd
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc


@pytest.fixture
def dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_the_mark_names_the_controller(dead_pid):
    proc = _sleeper(f"{dead_pid}:1234")
    try:
        assert orphans.controller_of(proc.pid) == (dead_pid, 1234)
    finally:
        proc.kill()
        proc.wait()


def test_a_process_whose_controller_is_gone_is_an_orphan_and_is_ended(dead_pid):
    proc = _sleeper(f"{dead_pid}:1")
    try:
        # a parallel run of this user may end it first: then it was an orphan to that run
        assert proc.pid in orphans.orphans() or proc.poll() == -9
        orphans.collect()
        assert proc.wait(timeout=10) == -9
    finally:
        proc.kill()
        proc.wait()


def test_a_live_controllers_worker_is_no_orphan():
    proc = _sleeper(f"{os.getpid()}:{procfs.start_time(os.getpid())}")
    try:
        assert proc.pid not in orphans.orphans()
    finally:
        proc.kill()
        proc.wait()


def test_a_reused_pid_does_not_keep_an_orphan_alive():
    # our own pid, but a start time that is not ours: the controller of that mark is gone
    proc = _sleeper(f"{os.getpid()}:{procfs.start_time(os.getpid()) + 1}")
    try:
        assert proc.pid in orphans.orphans() or proc.poll() == -9
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(("argv", "expected"), [
    ([b"/home/u/eegbench/.venv/bin/eegbench", b"eval"], True),
    ([b"/usr/bin/python3", b"/home/u/.venv/bin/eegbench", b"eval"], True),
    ([sys.executable.encode(), b"-m", b"runner.cli", b"truth"], True),
    ([b"eegbench", b"report"], True),
    ([sys.executable.encode(), b"-c", b"from multiprocessing.spawn import spawn_main"], False),
    ([b"sleep", b"600"], False),
    ([b"/opt/eegbench/bin/python", b"-m", b"runner.models.local_server"], False),
    ([b""], False),
])
def test_a_controller_is_recognised_by_its_command(argv, expected):
    assert orphans.is_controller_command(argv) is expected


def test_mark_controller_names_this_process(monkeypatch):
    monkeypatch.setenv(CONTROLLER_ENV, "restored by monkeypatch afterwards")
    mark = orphans.mark_controller()
    assert mark == f"{os.getpid()}:{procfs.start_time(os.getpid())}" == os.environ[CONTROLLER_ENV]
