"""Owner records of sandbox state dirs, and collection of what crashed controllers left.

A state dir is named <controller pid>-<hex>. The local backend writes owner.json into it:
the controller's pid and start time (a reused pid is not the owner), the sandbox's cgroups
and its processes with their start times, so that a later run can kill and remove exactly
what a dead controller left, and nothing of a live one.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from runner.sandbox import cgroups, procfs
from runner.sandbox.base import SandboxSpec

OWNER_FILE = "owner.json"
STALE_UNOWNED_S = 60.0  # a sandbox dir without owner.json older than this is garbage


def owner_record(spec: SandboxSpec) -> dict[str, Any]:
    """A fresh owner record for a sandbox this controller process is creating."""
    return {
        "controller_pid": os.getpid(),
        "controller_start": procfs.start_time(os.getpid()),
        "run_id": spec.run_id,
        "case_id": spec.case_id,
        "created": time.time(),
        "cgroups": {},
        "processes": [],
    }


def write_owner(box: Path, owner: dict[str, Any]) -> None:
    """Replace owner.json atomically: a collector never reads half a record."""
    path = box / OWNER_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(owner))
    tmp.replace(path)


def read_owner(box: Path) -> dict[str, Any] | None:
    """The box's owner record, None when missing or unreadable."""
    try:
        data = json.loads((box / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def process_records(pids: list[int]) -> list[list[int | None]]:
    """[pid, start time] pairs: what remove_box may kill later, reuse of the pid excepted."""
    return [[p, procfs.start_time(p)] for p in pids]


def _controller_alive(owner: dict[str, Any]) -> bool:
    return procfs.same_process(owner.get("controller_pid"), owner.get("controller_start"))


def remove_box(box: Path, owner: dict[str, Any] | None) -> None:
    """Kill whatever a sandbox dir records, remove its cgroups and the dir itself."""
    owner = owner or {}
    for pid, start in reversed(owner.get("processes", [])):  # namespace init first
        if procfs.same_process(pid, start):
            procfs.kill(pid)
    cgroups.remove(owner.get("cgroups", {}))
    shutil.rmtree(box, ignore_errors=True)


def _name_pid_alive(box: Path) -> bool:
    """Box dirs are named <controller pid>-<hex>: a dead pid means nobody is creating it."""
    pid = box.name.split("-", 1)[0]
    return not pid.isdigit() or procfs.exists(pid)


def _younger_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime < seconds
    except OSError:
        return True  # vanished meanwhile: another collector got it


def collect_stale(state_dir: Path) -> int:
    """Remove sandbox dirs (with their processes and cgroups) whose controller is gone, then
    cgroups whose dir is gone; return how many."""
    removed = 0
    if state_dir.is_dir():
        for box in state_dir.iterdir():
            owner = read_owner(box)
            if owner is not None and _controller_alive(owner):
                continue
            if owner is None and _name_pid_alive(box) and _younger_than(box, STALE_UNOWNED_S):
                continue  # possibly being created right now by a live controller
            remove_box(box, owner)
            removed += 1
    return removed + cgroups.collect_stale(state_dir)


def remove_dirs_of_dead_controllers(state_dir: Path) -> None:
    """Remove state dirs whose controller pid (the name's prefix) no longer exists."""
    for box in procfs.named_after_dead_pids(state_dir):
        shutil.rmtree(box, ignore_errors=True)


def own_boxes(state_dir: Path) -> set[str]:
    """This controller process's sandbox dirs (other processes on the machine may run sandboxes)."""
    return {str(p) for p in state_dir.glob(f"{os.getpid()}-*")}
