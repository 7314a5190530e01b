"""Cgroup v1 for sandboxes: where their cgroups go, and making one with limits.

One cgroup per sandbox and controller (memory, pids, cpu), named like the sandbox's state dir
(<controller pid>-<hex>) and nested under the controller's own cgroup, so whatever limits or
accounting the controller lives under also covers its sandboxes. Writing there takes root.
"""
from __future__ import annotations

import os
from pathlib import Path

from runner.sandbox import cgroupfs
from runner.sandbox.base import Limits

CGROUP_MOUNT = Path("/sys/fs/cgroup")
CGROUP_GROUP = "eegbench"
CGROUP_CONTROLLERS = ("memory", "pids", "cpu")


def own_cgroup(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy of `controller` (None when that
    controller is not on a v1 hierarchy here)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return None


def parents() -> dict[str, Path]:
    """Where this controller's sandbox cgroups go, per controller; at the hierarchy root this
    is /sys/fs/cgroup/<controller>/eegbench."""
    return {c: CGROUP_MOUNT / c / (own_cgroup(c) or "/").strip("/") / CGROUP_GROUP for c in CGROUP_CONTROLLERS}


def usable() -> str | None:
    """None when sandbox cgroups can be made here, else why not."""
    if any(own_cgroup(c) is None for c in CGROUP_CONTROLLERS):
        return "memory, pids and cpu are not all on cgroup v1 hierarchies"
    try:
        for parent in parents().values():
            parent.mkdir(exist_ok=True)
            if not os.access(parent, os.W_OK):
                raise PermissionError(f"{parent} is not writable")
    except OSError as exc:
        return (f"cgroup v1 not writable: {exc} (cgroup v1 is root's to write: run as root, or on a cgroup v2 "
                "machine in a subtree delegated to you, or with --sandbox docker)")
    return None


def planned(name: str) -> dict[str, str]:
    """The paths `create(name, ...)` would make, recorded before making them."""
    return {c: str(p / name) for c, p in parents().items()}


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
                cgroupfs.write(parent / "cpu.shares", group_cpu_shares())
            cgroupfs.mkdir(parent / name)
            made[controller] = str(parent / name)
        memory = Path(made["memory"])
        cgroupfs.write(memory / "memory.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        if (memory / "memory.memsw.limit_in_bytes").exists():
            cgroupfs.write(memory / "memory.memsw.limit_in_bytes", limits.memory_mb * 1024 * 1024)
        cgroupfs.write(Path(made["pids"]) / "pids.max", limits.pids)
        cpu = Path(made["cpu"])
        cgroupfs.write(cpu / "cpu.cfs_period_us", 100_000)
        cgroupfs.write(cpu / "cpu.cfs_quota_us", max(1000, int(limits.cpus * 100_000)))
    except OSError:
        cgroupfs.remove_all(made.values())
        raise
    return made


def oom_kills(groups: dict[str, str]) -> int:
    """OOM kills in the sandbox's memory cgroup."""
    return cgroupfs.counter(Path(groups["memory"], "memory.oom_control"), "oom_kill")


def pids_max_hits(groups: dict[str, str]) -> int:
    """Forks the sandbox's pids cgroup refused."""
    return cgroupfs.counter(Path(groups["pids"], "pids.events"), "max")
