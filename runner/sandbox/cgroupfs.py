"""The files of one cgroup, either version: its members, its event counters, killing and
removing it. cgroup_v1.py and cgroup_v2.py lay out where sandbox cgroups go; cgroups.py picks
one for this machine.

Every change to a hierarchy goes through `write`, `mkdir` and `rmdir`: the kernel's side of the
interface, which tests replace with a fake kernel over a fake tree.
"""
from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable
from pathlib import Path

from runner.sandbox import procfs


def write(path: Path, value: object, append: bool = False) -> None:
    """One write(2) of `value` and a newline; errors name the file and the value.

    Each write to cgroup.procs migrates one process whatever the file offset, so append mode
    changes nothing on cgroupfs and lets a plain file in a fake tree collect every pid."""
    flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags)
        try:
            os.write(fd, f"{value}\n".encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror} (writing {str(value)!r})", str(path)) from None


def mkdir(path: Path, exist_ok: bool = False) -> None:
    """Make a cgroup (the kernel fills it with its interface files)."""
    path.mkdir(exist_ok=exist_ok)


def rmdir(path: Path) -> None:
    """Remove an empty cgroup."""
    path.rmdir()


def members(cgroup: str | Path) -> list[int]:
    """Host pids of the processes in a cgroup ([] when it is gone)."""
    try:
        return [int(p) for p in Path(cgroup, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def counter(path: Path, key: str) -> int:
    """A 'key N' line of a flat-keyed file (memory.events, pids.events, memory.oom_control);
    0 when unreadable."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


def kill(cgroup: str | Path, timeout_s: float = 3.0, keep: frozenset[int] | set[int] = frozenset()) -> None:
    """SIGKILL everything in a cgroup but `keep` until nothing else is left (or the timeout
    passes). With nothing to keep, cgroup v2's cgroup.kill (Linux >= 5.14) does it at once,
    processes forked meanwhile included."""
    cgroup = Path(cgroup)
    if not keep and (cgroup / "cgroup.kill").exists():
        try:
            write(cgroup / "cgroup.kill", 1)
        except FileNotFoundError:
            return  # removed meanwhile
    deadline = time.monotonic() + timeout_s
    while True:
        found = [p for p in members(cgroup) if p not in keep]
        if not found or time.monotonic() >= deadline:
            return
        for pid in found:
            procfs.kill(pid)
        time.sleep(0.01)


def remove(cgroup: str | Path, timeout_s: float = 3.0) -> bool:
    """Kill what is in a cgroup and remove it, retrying while the last killed processes are
    reaped (EBUSY); True when it is gone (a missing one counts)."""
    cgroup = Path(cgroup)
    if not cgroup.is_dir():
        return True
    kill(cgroup, timeout_s)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            rmdir(cgroup)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def remove_all(cgroups: Iterable[str | Path], timeout_s: float = 3.0) -> None:
    """`remove` each; what cannot be removed stays for the next run's stale collection."""
    for cgroup in cgroups:
        remove(cgroup, timeout_s)


def collect_stale(parent: Path, state_dir: Path) -> int:
    """Remove the sandbox cgroups under `parent` (named <controller pid>-<hex>, like sandbox
    state dirs) whose state dir vanished and whose controller is gone; return how many."""
    stale = [g for g in procfs.named_after_dead_pids(parent) if g.is_dir() and not (state_dir / g.name).exists()]
    for group in stale:
        remove(group)
    return len(stale)
