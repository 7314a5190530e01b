"""Worker processes end with the controller that started them, however it ends.

The controller's helpers (the artifact reader and truth's pool, both multiprocessing workers)
are its children, and a SIGKILLed controller tells them nothing: they would sleep forever.
PR_SET_PDEATHSIG is no cure here, since it fires when the *thread* that forked the worker
exits, and pools are started from short-lived worker threads. Instead each worker watches its
controller through a pidfd (readable once the process has exited) from a daemon thread, and
exits at once when it fires.

The controller also names itself in its environment (CONTROLLER_ENV = "<pid>:<start time>",
set by runner/run/orphans.py), which every process it starts inherits (workers, their resource
tracker, a llama.cpp server, a local Ray cluster; sandboxes get an environment of their own):
that is how the next run and the tests find a process a dead controller left, whatever kept
it alive.
"""
from __future__ import annotations

import os
import select
import threading

CONTROLLER_ENV = "EEGBENCH_CONTROLLER"


def die_with_parent(parent: int) -> None:
    """In a worker: exit as soon as `parent` (the controller's pid, passed by the controller)
    has exited; at once when it already has (the worker was reparented before this ran)."""
    try:
        watched = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)
    if os.getppid() != parent:  # the pid may have been reused after the parent died
        os._exit(1)
    threading.Thread(target=_exit_when_readable, args=(watched,), name="eegbench-die-with-parent",
                     daemon=True).start()


def _exit_when_readable(fd: int) -> None:
    select.select([fd], [], [])
    os._exit(1)  # no cleanup: the controller that would have wanted it is gone
