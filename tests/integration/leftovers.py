"""What runs of given (finished or killed) controllers may have left on the machine.

A controller names everything it makes after its pid: sandbox state dirs
`<user dir>/{sbx,dkr}/<pid>-<hex>`, cgroups `<parent>/eegbench/<pid>-<hex>` (in every v1
hierarchy, or in the delegated v2 cgroup), scratch workspaces `<user dir>/work/<pid>-<run>`
(loop-mounted when bounded) and Docker containers labelled `eegbench.controller=<pid>`; every
process it starts for itself (workers, their resource tracker, servers) inherits its mark
`EEGBENCH_CONTROLLER=<pid>:<start>` in its environment. Once those controllers are gone,
each of these is a leak, unless the next run's stale collection removed it. Only the named
controllers are looked at: other runs on the machine (parallel test workers) keep theirs.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from runner.run.orphans import controller_of
from runner.sandbox import cgroup_v1, cgroups, procfs
from runner.sandbox.layout import state_dir
from runner.sandbox.workspace import SCRATCH_ROOT, mounts_under

STATE_DIRS = (state_dir("sbx"), state_dir("dkr"))


def leftovers(controllers: Iterable[int]) -> list[str]:
    """Every process, state dir, cgroup, scratch dir, mount and container of the controllers."""
    pids = set(controllers)
    found = [f"process {pid}" for pid in sorted(sandbox_processes(pids))]
    found += [f"worker process {pid} ({_command(pid)})" for pid in sorted(worker_processes(pids))]
    for pid in sorted(pids):
        found += [f"state dir {p}" for d in STATE_DIRS for p in d.glob(f"{pid}-*")]
        found += [f"cgroup {p}" for p in cgroup_dirs(pid)]
        found += [f"scratch dir {p}" for p in SCRATCH_ROOT.glob(f"{pid}-*")]
    found += [f"mount {p}" for p in mounts_under(SCRATCH_ROOT) if _owner(p) in pids]
    return found + docker_containers(pids)


def assert_nothing_left(controllers: Iterable[int], wait_s: float = 5.0) -> None:
    """Fail naming each leftover; killed processes get `wait_s` to be reaped."""
    pids = set(controllers)
    deadline = time.monotonic() + wait_s
    while (found := leftovers(pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not found, f"left behind by controllers {sorted(pids)}: {found}"


def cgroup_dirs(pid: int) -> list[Path]:
    """The controller's sandbox cgroups: under eegbench/ of the hierarchy root and of the
    cgroup the controller (a child of this process) was started in, or of the v2 cgroup."""
    chosen = cgroups.hierarchy()
    parents = {*cgroup_v1.parents().values(), *cgroup_v1.CGROUP_MOUNT.glob(f"*/{cgroup_v1.CGROUP_GROUP}")}
    if chosen.v2 is not None:
        parents = {chosen.v2.group}
    return sorted(p for parent in parents for p in parent.glob(f"{pid}-*"))


def _owner(mount: Path) -> int | None:
    """The controller pid a scratch mount belongs to (`<pid>-<run>/<entry>`), if any."""
    parts = mount.relative_to(SCRATCH_ROOT).parts
    head = parts[0].split("-", 1)[0] if parts else ""
    return int(head) if head.isdigit() else None


def sandbox_processes(controllers: set[int]) -> set[int]:
    """Pids of sandbox processes (reaper, bwrap, kernel) started by the given controllers.

    Every sandbox's reapers name their controller: their config holds `"parent": PID`; bwrap's
    workspace bind is under <scratch>/PID-RUN. Other runs on the machine are not counted."""
    scratch = str(SCRATCH_ROOT)
    markers = [m for pid in controllers for m in (f'"parent": {pid},'.encode(), f"{scratch}/{pid}-".encode())]
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if any(m in cmdline for m in markers):
            found.add(int(entry.name))
    return found


def worker_processes(controllers: set[int]) -> set[int]:
    """Pids of live processes that inherited the mark of one of the controllers: what the
    controller started for itself (a sandbox gets an environment of its own)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in controllers and procfs.running(int(entry.name)):
            mark = controller_of(int(entry.name))
            if mark is not None and mark[0] in controllers:
                found.add(int(entry.name))
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "gone"


def docker_containers(controllers: set[int]) -> list[str]:
    """Containers (running or not) that the controllers' docker sandboxes left."""
    if not state_dir("dkr").exists():
        return []  # no docker sandbox of this user ever ran on this machine
    import docker

    client = docker.from_env()
    try:
        return [f"container {c['Id'][:12]} of {pid}" for pid in controllers
                for c in client.api.containers(all=True, filters={"label": f"eegbench.controller={pid}"})]
    finally:
        client.close()
