"""The cgroup facade's choices, on this machine and on stand-ins: which hierarchy holds the
sandboxes, and when a controller is re-run in a delegated systemd scope to get one."""
from __future__ import annotations

import os

import pytest

from runner.sandbox import cgroup_v1, cgroup_v2, cgroups
from runner.sandbox.cgroups import Hierarchy

NOT_DELEGATED = "cgroup v2: /user.slice/user-1000.slice/session-3.scope is not delegated to this process"


@pytest.fixture
def v2_user(monkeypatch):
    """A user on a pure cgroup v2 machine, in a login session's scope, with systemd reachable."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cgroup_v1, "own_cgroup", lambda controller: None)
    monkeypatch.setattr(cgroups, "hierarchy", lambda: Hierarchy(0, NOT_DELEGATED))
    monkeypatch.setattr(cgroup_v2, "systemd_reachable", lambda euid, environ=None: True)
    monkeypatch.setattr(cgroups, "_scope_asked", False)


def test_a_user_outside_any_delegated_cgroup_is_rerun_in_a_scope(v2_user):
    argv = ["/usr/bin/python3", "-m", "runner.cli", "eval", "--jobs", "2"]
    assert cgroups.scope_command(argv, {}) == [
        "systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--", *argv]


def test_the_rerun_trusts_its_scope_and_is_not_rerun_again(v2_user):
    assert cgroups.scope_command(["eegbench"], {cgroups.SCOPE_MARKER: "1"}) is None
    assert cgroups._scope_asked is True


def test_the_marker_0_turns_the_rerun_off(v2_user):
    assert cgroups.scope_command(["eegbench"], {cgroups.SCOPE_MARKER: "0"}) is None
    assert cgroups._scope_asked is False


@pytest.mark.parametrize("case", ["v1 machine", "cgroup found", "other reason", "no systemd"])
def test_no_rerun_where_a_scope_would_not_help(v2_user, monkeypatch, case):
    if case == "v1 machine":
        monkeypatch.setattr(cgroup_v1, "own_cgroup", lambda controller: "/")
    elif case == "cgroup found":
        monkeypatch.setattr(cgroups, "hierarchy", lambda: Hierarchy(2, "cgroup v2 under /x.scope"))
    elif case == "other reason":
        monkeypatch.setattr(cgroups, "hierarchy", lambda: Hierarchy(0, "cgroup v2 at /sys/fs/cgroup does not offer memory"))
    else:
        monkeypatch.setattr(cgroup_v2, "systemd_reachable", lambda euid, environ=None: False)
    assert cgroups.scope_command(["eegbench"], {}) is None


def test_this_machine_puts_sandboxes_in_cgroup_v1_as_root_and_says_why_not_otherwise():
    chosen = cgroups.hierarchy()
    if os.geteuid() == 0:
        assert chosen.version == 1 and cgroups.limits_mechanism() == "cgroup v1"
        assert set(cgroups.planned("1-a")) == {"memory", "pids", "cpu"}
    else:
        assert chosen.version == 0 and cgroups.limits_mechanism().startswith("rlimits (no writable cgroup: ")
        assert cgroups.planned("1-a") == {}
        with pytest.raises(PermissionError):
            cgroups.create("1-a", None)  # type: ignore[arg-type]


def test_a_v2_sandbox_is_one_cgroup_with_its_counters(tmp_path):
    box = tmp_path / "1-a"
    box.mkdir()
    (box / "memory.events").write_text("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n")
    (box / "pids.events").write_text("max 5\n")
    (box / "cgroup.procs").write_text("11\n12\n")
    groups = {cgroups.UNIFIED: str(box)}
    assert cgroups.oom_kills(groups) == 1 and cgroups.pids_max_hits(groups) == 5
    assert cgroups.members(groups) == [11, 12] and not cgroups.cpu_limited(groups)
    (box / "cpu.max").write_text("100000 100000\n")
    assert cgroups.cpu_limited(groups)
