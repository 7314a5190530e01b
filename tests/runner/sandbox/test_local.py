"""What only the local (bubblewrap) backend has, driven for real: its cgroups, the rlimit
fallback, the spawner thread, stale collection of its processes and cgroups. The contract
both backends share is tested in test_conformance.py.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from runner.sandbox import cgroups, get_backend, local, procfs
from runner.sandbox.conformance import make_spec

pytestmark = pytest.mark.integration
PROJECT_ROOT = Path(__file__).resolve().parents[3]


def running(pid: int) -> bool:
    """A live process (a zombie waiting for the host's init to reap it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def sandbox_pids(box: local.LocalSandbox) -> list[int]:
    return [int(p) for p in Path(box.cgroups["pids"], "cgroup.procs").read_text().split()]


def run(box, code: str):
    return box.execute(textwrap.dedent(code))


@pytest.fixture(scope="module")
def backend():
    b = get_backend("local")
    ok, why = b.available()
    assert ok, why  # the local backend is the embedded default: it must work wherever tests run
    return b


@pytest.fixture(scope="module")
def box(backend, tmp_path_factory):
    spec = make_spec(tmp_path_factory.mktemp("box"), "box", memory_mb=1024, pids=128,
                     exec_timeout_s=3, grace_s=2, output_budget_chars=2000)
    sandbox = backend.start(spec)
    yield sandbox
    sandbox.close()


def test_limits_mechanism_is_cgroups_here(backend):
    assert backend.name == "local" and "cgroup v1" in backend.available()[1]


def test_limits_are_set_in_cgroups(box):
    assert box.limits_via == "cgroups"
    memory = Path(box.cgroups["memory"], "memory.limit_in_bytes").read_text()
    assert int(memory) == 1024 * 1024 * 1024
    assert Path(box.cgroups["pids"], "pids.max").read_text().strip() == "128"
    assert Path(box.cgroups["cpu"], "cpu.cfs_quota_us").read_text().strip() == "100000"
    # the holder's reaper, bwrap and the holder (pid 1 of the sandbox); the kernel's reaper and the kernel
    assert len(sandbox_pids(box)) == 5
    # the group of all sandboxes weighs like one process per CPU, not like one process
    group = Path(box.cgroups["cpu"]).parent / "cpu.shares"
    assert int(group.read_text()) == 1024 * os.cpu_count() > 1024


def test_rlimits_stand_in_when_cgroups_are_not_writable(backend, tmp_path, monkeypatch):
    def read_only(name, limits):
        raise PermissionError("read-only cgroup file system (simulated)")

    monkeypatch.setattr(cgroups, "create", read_only)
    # pids: RLIMIT_NPROC counts every task of the sandbox uid, the other sandboxes' too.
    sandbox = backend.start(make_spec(tmp_path, "rlimit", memory_mb=1024, pids=128, exec_timeout_s=10))
    try:
        assert sandbox.limits_via.startswith("rlimits") and sandbox.cgroups == {}
        obs = run(sandbox, "import numpy\nblock = numpy.ones(2 * 1024**3 // 8)")
        assert obs.status == "oom" and obs.error_name == "MemoryError" and not obs.restarted
        obs = run(sandbox, "import os\nwhile True:\n    os.fork()")
        assert obs.status == "error" and obs.error_name == "BlockingIOError"
        assert "process limit (128)" in obs.text
        assert run(sandbox, "print('back')").text == "back\n"
        pids = [p for reaper in (sandbox._holder, sandbox._proc) for p in (reaper.pid, *procfs.descendants(reaper.pid))]
        assert len(pids) == 5 and sorted(sandbox.host_pids()) == sorted(pids)
    finally:
        sandbox.close()
    assert not any(running(p) for p in pids)


def test_sandbox_outlives_the_thread_that_started_it(backend, tmp_path):
    # --die-with-parent follows the thread that forked bwrap: worker threads come and go.
    started: list = []
    worker = threading.Thread(target=lambda: started.append(backend.start(make_spec(tmp_path, "thread"))))
    worker.start()
    worker.join()
    sandbox = started[0]
    try:
        time.sleep(0.2)
        assert sandbox.alive() and run(sandbox, "print('alive')").text == "alive\n"
        with ThreadPoolExecutor(1) as pool:  # a later cell may come from another thread
            assert pool.submit(run, sandbox, "print('other thread')").result().text == "other thread\n"
    finally:
        sandbox.close()


STARTER = """
import json, sys
from pathlib import Path
from runner.sandbox import get_backend
from runner.sandbox.base import SandboxSpec
root = Path(sys.argv[1])
(root / "data").mkdir()
box = get_backend("local").start(SandboxSpec(run_id="t", case_id="orphan", data_root=root / "data",
                                             inputs=(), workspace=root / "ws"))
print(json.dumps({"box": str(box.box), "cgroups": box.cgroups,
                  "pids": [int(p) for p in Path(box.cgroups["pids"], "cgroup.procs").read_text().split()]}),
      flush=True)
import time; time.sleep(600)
"""


def test_collect_stale_removes_what_a_killed_controller_left(backend, box, tmp_path):
    child = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], stdout=subprocess.PIPE,
                             text=True, cwd=PROJECT_ROOT)
    try:
        made = json.loads(child.stdout.readline())
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert Path(made["box"]).exists() and all(Path(p).exists() for p in made["cgroups"].values())
    assert backend.collect_stale() >= 1
    assert not Path(made["box"]).exists()
    assert not any(Path(p).exists() for p in made["cgroups"].values())
    # Its processes died with it. The sandbox's pid 1 finishes exiting only once the host's
    # init has reaped the kernel (whose reaper, outside the namespace, died too): not at once.
    deadline = time.monotonic() + 10
    while any(running(p) for p in made["pids"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(p) for p in made["pids"]), [p for p in made["pids"] if running(p)]
    assert box.box.exists() and box.execute("print(1)").text == "1\n"  # a live one is left alone


@pytest.mark.parametrize("stderr, as_root, says", [
    ("bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
     "non-privileged user namespaces", False, "unprivileged user namespaces are disabled"),
    ("bwrap: setting up uid map: Permission denied", False, "kernel.apparmor_restrict_unprivileged_userns"),
    ("bwrap: Unknown option --as-pid-1", False, "too old"),
    ("bwrap: Creating new namespace failed: Operation not permitted", True, "cannot create namespaces"),
])
def test_a_failed_probe_says_what_to_enable(stderr, as_root, says):
    assert says in local.explain_probe_failure(stderr, as_root)
