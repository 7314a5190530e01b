"""Bounded workspaces: an ext4 image loop-mounted at the workspace, removed without a trace."""
import os
from pathlib import Path

import pytest

from runner.sandbox import procfs, workspace
from runner.sandbox.base import SandboxError
from runner.sandbox.layout import SANDBOX_UID


def test_unbounded_workspace_is_a_plain_directory(tmp_path):
    ws = tmp_path / "run" / "case"
    workspace.create(ws, 0)
    assert ws.is_dir() and not workspace.is_mounted(ws) and not workspace.image_of(ws).exists()
    workspace.remove(ws)
    workspace.remove(ws)  # idempotent
    assert not ws.exists()


def test_mountinfo_escapes_are_undone():
    assert workspace._unescape(r"/tmp/a\040b\011c\134d") == "/tmp/a b\tc\\d"


def test_nothing_is_mounted_under_a_missing_dir():
    assert workspace.mounts_under(Path("/nonexistent-eegbench")) == []


def _dead_pid() -> int:
    return next(p for p in range(4_000_000, 4_100_000) if not procfs.exists(p))


@pytest.mark.integration  # loop mounts: root, as in CI
class TestBounded:
    def test_workspace_is_its_own_file_system_of_the_size_asked(self, tmp_path):
        ws = tmp_path / "run" / "case"
        workspace.create(ws, 32)
        try:
            st = os.statvfs(ws)
            assert workspace.is_mounted(ws)
            assert 24 <= st.f_blocks * st.f_frsize / 2**20 <= 32
            assert os.listdir(ws) == []  # no lost+found for the model to wonder about
            assert ws.stat().st_uid == SANDBOX_UID
            assert workspace.image_of(ws).stat().st_blocks * 512 < 4 * 2**20  # sparse
        finally:
            workspace.remove(ws)
        assert not ws.exists() and not workspace.image_of(ws).exists()
        assert not workspace.mounts_under(tmp_path)

    def test_scratch_of_a_dead_controller_is_unmounted_and_removed(self, tmp_path):
        live = tmp_path / f"{os.getpid()}-run" / "case"
        dead = tmp_path / f"{_dead_pid()}-run" / "case"
        for ws in (live, dead):
            workspace.create(ws, 16)
        try:
            assert workspace.collect_stale(tmp_path) == 1
            assert not dead.parent.exists() and workspace.is_mounted(live)
        finally:
            workspace.remove_tree(live.parent)
        assert not workspace.mounts_under(tmp_path)

    def test_a_failed_mkfs_leaves_nothing(self, tmp_path, monkeypatch):
        monkeypatch.setattr(workspace, "TOOL_ENV", {"PATH": str(tmp_path / "nothing")})
        ws = tmp_path / "case"
        with pytest.raises(SandboxError, match="cannot make a 16 MB workspace"):
            workspace.create(ws, 16)
        assert not ws.exists() and not workspace.image_of(ws).exists()
