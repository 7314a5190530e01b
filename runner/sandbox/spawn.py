"""How the local backend starts a sandbox's first process: through a reaper, from one thread.

Process tree of one local sandbox (host view):
    controller ─ reaper ─ bwrap (outer) ─ bwrap (pid 1 of the namespace) ─ ipykernel
"""
from __future__ import annotations

import concurrent.futures
import json
import queue
import subprocess
import sys
import threading
from typing import Any

# The first process of every sandbox (run with `python -I -S -c`). It joins the cgroups
# before anything else runs, so every sandbox process is born inside the limits, or sets
# rlimits when there are no cgroups; it dies with the controller; and it is a child
# subreaper: bwrap's outer process can exit before reaping the namespace's init (whose exit
# status it gets through a pipe), and that orphan must not become a zombie of the host's
# pid 1. It exits with bwrap's status once every descendant has been reaped.
REAPER = r"""
import ctypes, json, os, resource, signal, sys
cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != cfg["parent"]:
    sys.exit(112)  # the controller died while we started
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
for path in cfg["cgroup_procs"]:
    with open(path, "w") as f:
        f.write(str(os.getpid()))
for name, value in cfg["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
child = os.fork()
if child == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
status = 0
while True:
    try:
        pid, raw = os.wait()
    except ChildProcessError:
        break
    if pid == child:
        code = os.waitstatus_to_exitcode(raw)
        status = code if code >= 0 else 128 - code
sys.exit(status)
"""


def reaper_argv(parent: int, cgroup_procs: list[str], rlimits: dict[str, int], argv: list[str]) -> list[str]:
    """`argv` run under the reaper: it joins `cgroup_procs`, sets `rlimits`, dies with `parent`."""
    cfg = {"parent": parent, "cgroup_procs": cgroup_procs, "rlimits": rlimits}
    return [sys.executable, "-I", "-S", "-c", REAPER, json.dumps(cfg), *argv]


_Job = tuple[list[str], dict[str, Any], "concurrent.futures.Future[subprocess.Popen[Any]]"]


class Spawner:
    """Starts every sandbox process from one long-lived thread.

    --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
    process exits, not the process: a controller worker thread that finishes would take its
    sandbox down with it. This thread lives as long as the controller process.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """subprocess.Popen(argv, **kwargs), forked by the spawner thread."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="eegbench-spawner", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future[subprocess.Popen[Any]] = concurrent.futures.Future()
        self._jobs.put((argv, kwargs, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            argv, kwargs, future = self._jobs.get()
            try:
                future.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - hand every failure back to the caller
                future.set_exception(exc)


SPAWNER = Spawner()
