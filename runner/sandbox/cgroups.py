"""Which cgroups hold this controller's sandboxes, and one sandbox's cgroups whichever they are.

`hierarchy()` decides once per controller process: cgroup v1 where memory, pids and cpu are on
v1 hierarchies and writable (root), else cgroup v2 where a cgroup delegated to this process
(systemd's delegation, or the root of the hierarchy) offers memory and pids, else none, with
the reasons and what to enable. A sandbox's cgroups are a dict, as owner.json records them:
per controller for v1 ({"memory": dir, "pids": dir, "cpu": dir}), one dir for v2 ({"unified":
dir}); the functions below take that dict whatever the version.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from runner.sandbox import cgroup_v1, cgroup_v2, cgroupfs
from runner.sandbox.base import Limits

UNIFIED = "unified"  # the key of a v2 sandbox's one cgroup


@dataclass(frozen=True)
class Hierarchy:
    """Where this controller's sandbox cgroups go: a version (0: none here) and why."""

    version: int
    detail: str  # for the run log: where, or why none and what to enable
    v2: cgroup_v2.Parent | None = None


_chosen: Hierarchy | None = None
_lock = threading.Lock()
SCOPE_MARKER = "EEGBENCH_SCOPE"  # set on a controller re-run in a delegated systemd scope
_scope_asked = False


def hierarchy() -> Hierarchy:
    """This controller's hierarchy, found (and for v2 set up) on first use."""
    global _chosen
    with _lock:
        if _chosen is None:
            _chosen = _find()
        return _chosen


def _find() -> Hierarchy:
    if cgroup_v1.own_cgroup("memory") is not None:  # memory is on a v1 hierarchy: v1 or nothing
        why = cgroup_v1.usable()
        return Hierarchy(1, "cgroup v1") if why is None else Hierarchy(0, why)
    located = cgroup_v2.locate_self(scope_asked=_scope_asked)
    if isinstance(located, str):
        return Hierarchy(0, located)
    try:
        cgroup_v2.prepare(located)
    except OSError as exc:
        return Hierarchy(0, f"cgroup v2: cannot set up {located.delegated}: {exc}")
    return Hierarchy(2, located.describe(), located)


def scope_command(argv: list[str], environ: dict[str, str]) -> list[str] | None:
    """The command that re-runs this controller (`argv`) in a systemd scope delegated to it,
    when that is how sandboxes get cgroups here: a cgroup v2 machine where this process's
    cgroup is not delegated, with systemd reachable. None otherwise, and once re-run (the
    marker variable is set); SCOPE_MARKER=0 turns it off."""
    global _scope_asked
    if environ.get(SCOPE_MARKER):
        _scope_asked = environ[SCOPE_MARKER] == "1"
        return None
    if cgroup_v1.own_cgroup("memory") is not None or hierarchy().version:
        return None
    euid = os.geteuid()
    if "not delegated" not in hierarchy().detail or not cgroup_v2.systemd_reachable(euid, environ):
        return None
    return cgroup_v2.scope_command(argv, euid)


def limits_mechanism() -> str:
    """What enforces sandbox limits here: the cgroup hierarchy, or rlimits and why."""
    chosen = hierarchy()
    return chosen.detail if chosen.version else f"rlimits (no writable cgroup: {chosen.detail})"


def planned(name: str) -> dict[str, str]:
    """The cgroups `create(name, ...)` would make, recorded before making them."""
    chosen = hierarchy()
    if chosen.v2 is not None:
        return {UNIFIED: str(chosen.v2.group / name)}
    return cgroup_v1.planned(name) if chosen.version == 1 else {}


def create(name: str, limits: Limits) -> dict[str, str]:
    """Create and configure the sandbox's cgroups; OSError when not possible here."""
    chosen = hierarchy()
    if chosen.v2 is not None:
        made = cgroup_v2.create(chosen.v2, name, limits.memory_mb, limits.pids, limits.cpus)
        return {UNIFIED: str(made)}
    if chosen.version == 1:
        return cgroup_v1.create(name, limits)
    raise PermissionError(chosen.detail)


def members(groups: dict[str, str]) -> list[int]:
    """Host pids of every process of the sandbox."""
    return cgroupfs.members(groups.get(UNIFIED) or groups["pids"])


def oom_kills(groups: dict[str, str]) -> int:
    """OOM kills counted in the sandbox's memory cgroup."""
    if UNIFIED in groups:
        return cgroup_v2.oom_kills(Path(groups[UNIFIED]))
    return cgroup_v1.oom_kills(groups)


def pids_max_hits(groups: dict[str, str]) -> int:
    """Forks the sandbox's pids limit refused."""
    if UNIFIED in groups:
        return cgroup_v2.pids_max_hits(Path(groups[UNIFIED]))
    return cgroup_v1.pids_max_hits(groups)


def cpu_limited(groups: dict[str, str]) -> bool:
    """Whether the sandbox's CPU time is bounded (a v2 delegation may lack the cpu controller)."""
    return "cpu" in groups or (UNIFIED in groups and Path(groups[UNIFIED], "cpu.max").exists())


def remove(groups: dict[str, str]) -> None:
    """Kill what is in the sandbox's cgroups and remove them."""
    cgroupfs.remove_all(groups.values())


def collect_stale(state_dir: Path) -> int:
    """Remove sandbox cgroups of this controller's hierarchy whose state dir is gone and whose
    controller died; return how many."""
    chosen = hierarchy()
    if chosen.v2 is not None:
        return cgroupfs.collect_stale(chosen.v2.group, state_dir)
    if chosen.version == 1:
        return sum(cgroupfs.collect_stale(p, state_dir) for p in cgroup_v1.parents().values())
    return 0


def pids_events_file(host_pid: int) -> Path | None:
    """The pids.events file of a host process's cgroup (v1's pids hierarchy, or v2): where the
    limit-hit counter of a container is."""
    try:
        lines = Path(f"/proc/{host_pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if "pids" in names.split(","):
            v1 = cgroup_v1.CGROUP_MOUNT / "pids" / path.strip("/") / "pids.events"
            return v1 if v1.exists() else None
    v2 = cgroup_v2.own_path("\n".join(lines))
    mount = cgroup_v2.mount_point(Path("/proc/self/mountinfo").read_text()) if v2 else None
    if mount is None or v2 is None:
        return None
    found = mount / v2.strip("/") / "pids.events"
    return found if found.exists() else None
