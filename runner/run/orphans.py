"""Processes that controllers which died left running, found by the mark in their environment.

Every eegbench command marks itself as the controller (`mark_controller`, at the start of
`eegbench ...`): the processes it starts inherit `EEGBENCH_CONTROLLER=<pid>:<start time>`
(validation/worker_lifetime.py says why). A process of this user whose mark names a
controller that no longer runs (a pid that is gone or was reused) is an orphan: its
controller cannot stop it any more, so the next run does.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from runner.sandbox import procfs
from validation.worker_lifetime import CONTROLLER_ENV

_PREFIX = CONTROLLER_ENV.encode() + b"="


def mark_controller() -> str:
    """Name this process as the controller in the environment its children inherit.

    A controller started by another one (its own environment holds the other's mark) takes
    over: its children carry its mark, not the outer controller's."""
    mark = f"{os.getpid()}:{procfs.start_time(os.getpid())}"
    os.environ[CONTROLLER_ENV] = mark
    return mark


# Waits for the controller (argv[1]) to exit, then kills every process of this user that
# carries its mark (argv[2]): at once and twice more, for processes started while it died.
# Runs with -I -S: no site packages, nothing of the project.
REAPER = r"""
import os, select, signal, sys, time
controller, entry = int(sys.argv[1]), ("%s=" + sys.argv[2]).encode()
try:
    select.select([os.pidfd_open(controller)], [], [])
except ProcessLookupError:
    pass
for pause in (0, 1, 2):
    time.sleep(pause)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(pid) != os.getpid() and entry in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
""" % CONTROLLER_ENV


_REAPERS: list[subprocess.Popen[bytes]] = []  # kept: the reaper outlives every reference to it


def start_reaper() -> None:
    """A process that ends everything carrying this controller's mark once it has exited: for
    helpers that do not watch the controller themselves (a local Ray cluster's daemons). The
    reaper itself carries no mark: it ends 3 s after the controller."""
    mark = os.environ.get(CONTROLLER_ENV) or mark_controller()
    env = {k: v for k, v in os.environ.items() if k != CONTROLLER_ENV}
    _REAPERS.append(subprocess.Popen([sys.executable, "-I", "-S", "-c", REAPER, str(os.getpid()), mark], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True))


def controller_of(pid: int) -> tuple[int, int | None] | None:
    """The (pid, start time) of the controller whose mark a process started with, if any."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or another user's
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(_PREFIX):
            head, _, start = entry[len(_PREFIX):].decode(errors="replace").partition(":")
            if head.isdigit():
                return int(head), int(start) if start.isdigit() else None
    return None


def orphans(uid: int | None = None) -> list[int]:
    """Pids of this user's processes whose controller is gone.

    A process that is itself a live controller is never one, even when the controller that
    started it is gone: its mark in /proc is the one it inherited."""
    uid = os.getuid() if uid is None else uid
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        pid = int(entry.name)
        mark = controller_of(pid)
        if mark is None or procfs.same_process(*mark) or _is_controller(pid):
            continue
        found.append(pid)
    return found


def collect() -> int:
    """End every orphan of this user; return how many there were."""
    found = [pid for pid in orphans() if procfs.running(pid)]
    for pid in found:
        procfs.kill(pid)
    return len(found)


def _is_controller(pid: int) -> bool:
    try:
        return is_controller_command(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"))
    except OSError:
        return False


def is_controller_command(argv: list[bytes]) -> bool:
    """Whether a command line runs eegbench (`eegbench ...` or `python -m runner.cli ...`): such a
    process marked itself after it started, so its mark in /proc is the one it inherited."""
    if argv[:1] and argv[0].rsplit(b"/", 1)[-1] == b"eegbench":
        return True
    return len(argv) > 1 and (argv[1].rsplit(b"/", 1)[-1] == b"eegbench" or argv[1:3] == [b"-m", b"runner.cli"])
