"""The base image's rootfs is archived and removed safely, the way kernel_image/build.sh does it
(kernel_image/archive_rootfs.sh): what debootstrap can leave mounted in its target (the host's
proc, a bind mount of a host directory at dev) is unmounted first, so the tarball holds only
the rootfs's own files, and `rm -rf` of the rootfs never reaches the host's mounted directory.

Real mounts, so root is needed: without it the tests fail (CI runs as root; a skip would pass).
"""
from __future__ import annotations

import os
import re
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "kernel_image/archive_rootfs.sh"  # relative: build.sh runs it from the project root
FAKE_FILES = {"./etc/os-release": "ID=debian\n", "./usr/bin/x": "#!/bin/sh\n"}
MARKER = "host-marker"


@dataclass(frozen=True)
class FakeRootfs:
    path: Path  # proc and dev mounted in it, as debootstrap may leave them
    host_dir: Path  # the bind mount's source: a host directory that must survive


def mount_points() -> list[str]:
    """Field 5 of /proc/self/mountinfo, its octal escapes (\\040 for a space...) decoded."""
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4]) for line in lines]


def mounted_under(root: Path) -> list[str]:
    root = root.resolve()
    return [m for m in mount_points() if m == str(root) or m.startswith(f"{root}/")]


def unmount_all(root: Path) -> None:
    # Deepest first; lazy, so that a test's failure never leaves a busy mount behind.
    for point in sorted(mounted_under(root), key=lambda p: p.count("/"), reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def run_script(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", SCRIPT, *map(str, args)], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120)


@contextmanager
def fake_rootfs(tmp_path: Path) -> Iterator[FakeRootfs]:
    # In the test's body, not a fixture: without root the test fails (an error at setup is not a failure).
    if os.geteuid() != 0:
        pytest.fail("tests/kernel_image/test_base_archive.py must run as root: it mounts proc and a bind mount")
    root = tmp_path / "rootfs"
    for name, text in FAKE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "proc").mkdir()
    (root / "dev").mkdir()
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (host_dir / MARKER).write_text("the host's\n")
    try:
        subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
        subprocess.run(["mount", "--bind", str(host_dir), str(root / "dev")], check=True)
        # The bug needs these live: a pid directory under proc, the marker seen through dev.
        assert (root / "proc" / "self").exists() and (root / "dev" / MARKER).exists()
        yield FakeRootfs(root, host_dir)
    finally:
        unmount_all(tmp_path)


def test_the_archive_holds_the_rootfs_files_and_nothing_mounted_in_it(tmp_path: Path) -> None:
    out = tmp_path / "base.tar"
    with fake_rootfs(tmp_path) as rootfs:
        done = run_script(rootfs.path, out)
        assert done.returncode == 0, done.stderr[-2000:]
        assert mounted_under(rootfs.path) == []
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert set(FAKE_FILES) <= set(names), names
    assert not [n for n in names if re.match(r"\./proc/\d+(/|$)", n)], "the host's processes were archived"
    assert not [n for n in names if n.endswith(MARKER)], "the bind mount's files were archived"
    assert out.is_file() and not Path(f"{out}.part").exists()


def test_removing_the_rootfs_leaves_the_host_directory_mounted_in_it_intact(tmp_path: Path) -> None:
    with fake_rootfs(tmp_path) as rootfs:
        # As build.sh removes a leftover rootfs: unmount, then `rm -rf`.
        done = run_script("--unmount-only", rootfs.path)
        assert done.returncode == 0, done.stderr[-2000:]
        removed = subprocess.run(["rm", "-rf", str(rootfs.path)], capture_output=True, text=True)
        assert (rootfs.host_dir / MARKER).is_file(), "rm -rf reached the host's directory through the mount"
        assert removed.returncode == 0, removed.stderr[-2000:]
        assert not rootfs.path.exists() and mounted_under(rootfs.path) == []
