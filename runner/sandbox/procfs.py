"""Host processes as /proc shows them: identity across pid reuse, children, state, signals.

Every backend whose sandbox processes are visible from the host (local, docker) uses these to
find its kernel, kill strays and check what outlives a sandbox.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/pid/stat after the command name (field 3 onwards); None when the
    process is gone. The name is cut at its last ')' since it may hold spaces and parens."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """Kernel start time of a pid (field 22 of /proc/pid/stat): tells a reused pid apart."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def cpu_seconds(pid: int | None) -> float | None:
    """CPU time a process has used: user + system of its threads and of the children it
    waited for (fields 14-17 of /proc/pid/stat); None when it is gone."""
    fields = _stat_fields(pid) if pid else None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK") if fields else None


def pss_mb(pid: int | None) -> float | None:
    """The process's proportional set size in MB (its share of pages it maps with others)."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def same_process(pid: int | None, start: int | None) -> bool:
    """Whether `pid` is still the process that had start time `start` (not a reuse of the pid)."""
    if not pid or start is None:
        return False
    return start_time(pid) == start


def exists(pid: int | str) -> bool:
    """Whether /proc has the pid at all (a zombie counts)."""
    return Path(f"/proc/{pid}").exists()


def children(pid: int) -> list[int]:
    """Direct children of a process, over all its threads."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            found += [int(c) for c in text.split()]
    except OSError:
        pass
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def running(pid: int) -> bool:
    """Alive and not a zombie (a killed child stays a zombie until its parent reaps it)."""
    fields = _stat_fields(pid) or []
    return bool(fields) and fields[0] not in ("Z", "X")


def ns_pid(pid: int) -> int | None:
    """The pid as seen inside the innermost pid namespace (last NSpid field)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def named_after_dead_pids(parent: Path) -> list[Path]:
    """The entries of `parent` named <pid>-<anything> (sandbox state dirs, cgroups, scratch
    dirs) whose pid no longer exists: what controllers that died left."""
    if not parent.is_dir():
        return []
    found = []
    for entry in sorted(parent.iterdir()):
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and not exists(pid):
            found.append(entry)
    return found


def kill(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a process; one that is gone (or not ours) is not an error."""
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def tasks_of(pids: list[int]) -> int:
    """How many tasks (threads) the processes run together."""
    tasks = 0
    for pid in pids:
        try:
            tasks += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return tasks


def tasks_of_uid(uid: int) -> int:
    """How many tasks (threads) the uid runs on the host: what RLIMIT_NPROC counts."""
    tasks = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                tasks += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            pass
    return tasks
