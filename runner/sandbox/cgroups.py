"""Cgroup v1 for sandboxes: create them with limits, read their counters, kill and remove them.

One cgroup per sandbox and controller (memory, pids, cpu), named like the sandbox's state dir
(<controller pid>-<hex>) and nested under the controller's own cgroup, so whatever limits or
accounting the controller lives under also covers its sandboxes.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from runner.sandbox import procfs
from runner.sandbox.base import Limits

CGROUP_MOUNT = Path("/sys/fs/cgroup")
CGROUP_GROUP = "eegbench"
CGROUP_CONTROLLERS = ("memory", "pids", "cpu")


def own_cgroup(controller: str) -> str:
    """This process's cgroup path in one v1 hierarchy ('/' when unknown)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return "/"


def parents() -> dict[str, Path]:
    """Where this controller's sandbox cgroups go, per controller; at the hierarchy root this
    is /sys/fs/cgroup/<controller>/eegbench."""
    return {
        c: CGROUP_MOUNT / c / own_cgroup(c).strip("/") / CGROUP_GROUP for c in CGROUP_CONTROLLERS
    }


def planned(name: str) -> dict[str, str]:
    """The paths `create(name, ...)` would make, recorded before making them."""
    return {c: str(p / name) for c, p in parents().items()}


def _write(path: Path, value: object) -> None:
    path.write_text(f"{value}\n")


def group_cpu_shares() -> int:
    """The CPU weight of the group holding every sandbox: that of one ordinary process per CPU.

    The kernel's fair scheduler weighs a cgroup like a single process of its parent (1024 by
    default), however many processes it holds: left at the default, all running sandboxes
    together would get no more CPU than one other process on the machine."""
    return 1024 * (os.cpu_count() or 1)


def create(name: str, limits: Limits) -> dict[str, str]:
    """Create and configure the sandbox's cgroups; OSError when not possible here."""
    made: dict[str, str] = {}
    try:
        for controller, parent in parents().items():
            parent.mkdir(exist_ok=True)
            if controller == "cpu":
                _write(parent / "cpu.shares", group_cpu_shares())
            (parent / name).mkdir()
            made[controller] = str(parent / name)
        memory = Path(made["memory"])
        _write(memory / "memory.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            _write(memory / "memory.memsw.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        _write(Path(made["pids"]) / "pids.max", limits.pids)
        cpu = Path(made["cpu"])
        _write(cpu / "cpu.cfs_period_us", 100_000)
        _write(cpu / "cpu.cfs_quota_us", max(1000, int(limits.cpus * 100_000)))
    except OSError:
        remove(made.values())
        raise
    return made


def limits_mechanism() -> str:
    """'cgroup v1' when this controller can create sandbox cgroups, else why rlimits are used."""
    try:
        for parent in parents().values():
            parent.mkdir(exist_ok=True)
            if not os.access(parent, os.W_OK):
                raise PermissionError(f"{parent} is not writable")
    except OSError as exc:
        return f"rlimits (cgroups not writable: {exc})"
    return "cgroup v1"


def pids(path: str | Path) -> list[int]:
    """Host pids of the processes in a cgroup ([] when it is gone)."""
    try:
        return [int(p) for p in Path(path, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill(path: str | Path, timeout_s: float = 3.0) -> None:
    """SIGKILL everything in a cgroup until it is empty (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = pids(path)
        if not found:
            return
        for pid in found:
            procfs.kill(pid)
        time.sleep(0.01)


def remove(paths: Iterable[str | Path], timeout_s: float = 3.0) -> None:
    """Kill what is in each cgroup and remove it (retrying while the last tasks are reaped)."""
    for path in paths:
        if not Path(path).is_dir():
            continue
        kill(path, timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                Path(path).rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:  # EBUSY while the last killed tasks are being reaped
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.02)


def counter(path: Path, key: str) -> int:
    """A 'key N' line of a cgroup stat-like file (memory.oom_control, pids.events)."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


def pids_events_file(host_pid: int) -> Path | None:
    """The pids cgroup (v1) of a host process: where the limit-hit counter is."""
    try:
        for line in Path(f"/proc/{host_pid}/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if "pids" in names.split(","):
                events = CGROUP_MOUNT / "pids" / path.strip("/") / "pids.events"
                return events if events.exists() else None
    except OSError:
        pass
    return None


def collect_stale(parent: Path, state_dir: Path) -> int:
    """Remove cgroups whose sandbox dir vanished and whose controller (the name's pid) is gone."""
    removed = 0
    if not parent.is_dir():
        return 0
    for group in parent.iterdir():
        if not group.is_dir() or (state_dir / group.name).exists():
            continue
        pid = group.name.split("-", 1)[0]
        if pid.isdigit() and procfs.exists(pid):
            continue
        remove([group])
        removed += 1
    return removed
