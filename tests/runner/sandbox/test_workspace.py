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


@pytest.mark.parametrize("euid, size_mb, kind", [(0, 0, "dir"), (1000, 0, "dir"), (0, 64, "ext4"), (1000, 64, "tmpfs")])
def test_a_bounded_workspace_is_ext4_for_root_and_a_tmpfs_for_anyone_else(monkeypatch, euid, size_mb, kind):
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    assert workspace.kind(size_mb) == kind


def test_a_tmpfs_workspace_needs_no_probe_or_tools(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(workspace, "TOOL_ENV", {"PATH": str(tmp_path / "nothing")})  # no mkfs, no mount
    workspace.check_bounded(2048)
    ws = tmp_path / "run" / "case"
    workspace.create(ws, 2048)  # the directory that receives the harvest
    assert ws.is_dir() and not workspace.image_of(ws).exists()


def sandbox_root(tmp_path: Path) -> Path:
    """A stand-in for /proc/<holder>/root: what hostile code left in /workspace/file_check."""
    root = tmp_path / "root"
    check = root / "workspace" / "file_check"
    (check / "sub" / "deeper").mkdir(parents=True)
    (check / "result.txt").write_text("artifact")
    (check / "sub" / "deeper" / "plot.png").write_bytes(b"\x89PNG")
    (check / "escape").symlink_to("/etc/passwd")
    (check / "escape_dir").symlink_to("/etc")
    os.mkfifo(check / "pipe")
    (root / "workspace" / "scratch.bin").write_bytes(b"not an artifact")
    return root


def test_harvest_copies_file_check_and_follows_nothing(tmp_path):
    dest = tmp_path / "host-ws"
    assert workspace.harvest(sandbox_root(tmp_path), dest, 2**20) == []
    check = dest / "file_check"
    assert (check / "result.txt").read_text() == "artifact"
    assert (check / "sub" / "deeper" / "plot.png").read_bytes() == b"\x89PNG"
    assert os.readlink(check / "escape") == "/etc/passwd" and (check / "escape").is_symlink()
    assert (check / "escape_dir").is_symlink() and not (check / "escape_dir" / "passwd").is_symlink()
    assert (check / "pipe").is_fifo()
    assert sorted(p.name for p in dest.iterdir()) == ["file_check"]  # the rest of /workspace stays behind


def test_harvest_stops_at_the_workspace_size(tmp_path):
    root = tmp_path / "root"
    check = root / "workspace" / "file_check"
    check.mkdir(parents=True)
    (check / "a.bin").write_bytes(b"a" * 600)
    with open(check / "sparse.bin", "wb") as f:  # far larger than any tmpfs could hold
        f.truncate(2**40)
    for i in range(3):  # hard links: one file's blocks, three copies' bytes
        os.link(check / "a.bin", check / f"link{i}.bin")
    skipped = workspace.harvest(root, tmp_path / "host-ws", 1000)
    copied = sorted(p.name for p in (tmp_path / "host-ws" / "file_check").iterdir())
    assert copied == ["a.bin"] and len(skipped) == 4, (copied, skipped)
    assert all("past what the workspace holds" in s for s in skipped)


def test_harvest_of_a_vanished_sandbox_says_so(tmp_path):
    assert workspace.harvest(tmp_path / "gone", tmp_path / "ws", 100) == [
        "the sandbox's workspace is gone (No such file or directory)"]
    (tmp_path / "root" / "workspace").mkdir(parents=True)
    (tmp_path / "root" / "workspace" / "file_check").symlink_to("/etc")
    assert "is not a directory" in workspace.harvest(tmp_path / "root", tmp_path / "ws", 100)[0]
