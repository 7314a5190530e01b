"""A SIGKILLed controller takes every process it started for itself with it: the artifact
reader and its resource tracker (`eegbench eval`), truth's worker pool (`eegbench truth
--check`), the local Ray cluster it started, and a worker started from a thread that has since
ended (validation/worker_lifetime.py).
What an older controller left anyway, the next run ends (test_runs_as_an_ordinary_user.py
proves it for one user's orphans, where no other run of that user can take them first).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from runner.sandbox import procfs
from tests.integration.conftest import PROJECT_ROOT
from tests.integration.leftovers import assert_nothing_left, sandbox_processes, worker_processes

FILE_CASES = ("sa_hypnogram_export-01", "fa_reref_filter_fif-01")  # scored by the artifact reader
MORE_CASES = ("fa_hjorth-01", "fa_hjorth-02", "fa_hjorth-03", "sa_awakenings-01", "sa_consolidation-01")


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _commands(controller: int) -> list[str]:
    return [_command(p) for p in worker_processes({controller})]


def _spawned_workers(controller: int) -> list[int]:
    """The controller's multiprocessing workers (the resource tracker excepted)."""
    return [p for p in worker_processes({controller}) if "spawn_main" in _command(p)]


def _kill_once_workers_run(proc: subprocess.Popen, count: int, timeout_s: float) -> list[int]:
    """Wait until the controller runs `count` spawned workers, then SIGKILL it; their pids."""
    deadline = time.monotonic() + timeout_s
    while len(workers := _spawned_workers(proc.pid)) < count:
        assert proc.poll() is None, f"the controller ended before its workers started: {proc.communicate()[0][-3000:]}"
        assert time.monotonic() < deadline, f"no {count} worker(s) within {timeout_s:g} s"
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    return workers


def _no_process_left(controller: int, wait_s: float = 5.0) -> None:
    deadline = time.monotonic() + wait_s
    while (found := sandbox_processes({controller}) | worker_processes({controller})) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not found, [_command(p) for p in found]


def test_a_killed_eval_takes_its_artifact_reader_with_it(eegbench):
    args = ("eval", "--model", "oracle", "--sandbox", "local", "--run", "killed", "--set", ",".join(FILE_CASES + MORE_CASES))
    proc = eegbench.popen(*args)
    readers = _kill_once_workers_run(proc, 1, 600)
    _no_process_left(proc.pid)
    assert not any(procfs.running(p) for p in readers)
    resumed = eegbench(*args)  # collects the sandbox dirs and workspace the kill left
    assert resumed.returncode == 0, resumed.stderr[-3000:]


def test_a_killed_truth_check_takes_its_workers_with_it(eegbench):
    proc = eegbench.popen("truth", "--check", "--jobs", "2", "--task", "sa_sleep_metrics", "--task", "sa_awakenings")
    workers = _kill_once_workers_run(proc, 2, 300)
    assert_nothing_left({proc.pid})
    assert not any(procfs.running(p) for p in workers)


# A controller that starts the reader's pool from a thread which then ends, and is killed
# later: the worker lives as long as the controller (PR_SET_PDEATHSIG would have ended it with
# the thread) and not a moment longer.
THREAD_STARTED_READER = textwrap.dedent("""
    import os, threading, time
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context
    from runner.run.orphans import mark_controller
    from validation.artifacts.isolation import _limit_worker

    pools = []

    def start():
        pools.append(ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_limit_worker,
                                         initargs=(os.getpid(),)))
        pools[0].submit(os.getpid).result()  # the worker is up: the thread that forked it ends after it
        pools[0].submit(time.sleep, 600)

    if __name__ == "__main__":  # the spawned worker imports this file too
        mark_controller()
        starter = threading.Thread(target=start)
        starter.start()
        starter.join()
        time.sleep(600)
""")


def test_a_worker_started_from_an_ended_thread_lives_as_long_as_its_controller(tmp_path):
    script = tmp_path / "controller.py"
    script.write_text(THREAD_STARTED_READER)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=PROJECT_ROOT, text=True,
                            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (workers := _spawned_workers(proc.pid)):
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no worker within 120 s"
            time.sleep(0.1)
        time.sleep(3)  # the starting thread ended long ago
        assert all(procfs.running(p) for p in workers), "the worker ended while its controller runs"
    finally:
        proc.kill()
        proc.wait()
    assert_nothing_left({proc.pid})
    assert not any(procfs.running(p) for p in workers)


BUSY_REPLIES = '{"replies": ["<execute>\\nimport time\\ntime.sleep(300)\\n</execute>", "<solution>{}</solution>"]}'


def test_a_killed_eval_takes_the_local_ray_cluster_it_started(eegbench, tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # eegbench starts a cluster of its own
    replies = tmp_path / "busy.json"
    replies.write_text(BUSY_REPLIES)
    args = ("eval", "--model", f"script:{replies}", "--executor", "ray", "--sandbox", "local", "--run", "ray",
            "--set", "fa_hjorth-01")
    proc = eegbench.popen(*args)
    deadline = time.monotonic() + 300
    while "InstanceActor" not in " ".join(cluster := _commands(proc.pid)):
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        assert time.monotonic() < deadline, "no instance actor within 300 s"
        time.sleep(0.5)
    assert any("raylet" in command for command in cluster), cluster
    proc.kill()
    proc.wait()
    _no_process_left(proc.pid, wait_s=30)
    after = eegbench("eval", "--model", "oracle", "--sandbox", "local", "--run", "after", "--set", "fa_hjorth-01")
    assert after.returncode == 0, after.stderr[-3000:]  # it collected the sandbox dir the kill left
