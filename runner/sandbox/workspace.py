"""Instance workspaces on the host, each bounded by a file system of its own.

The model's code can write to /workspace without limit otherwise, and the workspace lives on
the host's disk. So a bounded workspace is an ext4 file system in a sparse image file of
`size_mb`, loop-mounted at the workspace directory before the sandbox starts. Both backends
bind-mount that directory, so a cell that writes past the bound gets ENOSPC ("No space left
on device") in its observation, on either backend, and the host's disk never fills. The
image sits beside the directory, outside every sandbox, and costs only what is written.

Layout: SCRATCH_ROOT/<controller pid>-<run id>/<entry key>       the mount point (the workspace)
                                             /<entry key>.img   its image
A controller that died leaves both; `collect_stale` unmounts and removes them.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from runner.sandbox import procfs
from runner.sandbox.base import SandboxError
from runner.sandbox.layout import SANDBOX_UID
from runner.settings import WORKSPACE_MIN_MB

SCRATCH_ROOT = Path(tempfile.gettempdir()) / "eegbench-work"
TOOL_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


def image_of(path: Path) -> Path:
    """The image file backing the workspace at `path`."""
    return path.with_name(path.name + ".img")


def create(path: Path, size_mb: int) -> None:
    """A fresh, empty workspace at `path`: bounded to `size_mb` MB, unbounded when 0.

    SandboxError when the bounded file system cannot be made (see `check_bounded`)."""
    remove(path)
    path.mkdir(parents=True)
    if size_mb == 0:
        return
    image = image_of(path)
    try:
        with open(image, "wb") as f:
            f.truncate(size_mb * 1024 * 1024)  # sparse: blocks are spent only as files are written
        owner = f"{SANDBOX_UID}:{SANDBOX_UID}" if os.geteuid() == 0 else f"{os.geteuid()}:{os.getegid()}"
        _run(["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal",
              "-E", f"root_owner={owner},lazy_itable_init=1", str(image)])
        _run(["mount", "-o", "loop,nosuid,nodev", str(image), str(path)])
        (path / "lost+found").rmdir()  # the model's workspace starts empty
    except (OSError, SandboxError) as exc:
        remove(path)
        raise SandboxError(f"cannot make a {size_mb} MB workspace at {path}: {exc}") from None


def remove(path: Path) -> None:
    """Unmount the workspace if mounted, then delete it and its image; idempotent."""
    if is_mounted(path):
        _unmount(path)
    shutil.rmtree(path, ignore_errors=True)
    image_of(path).unlink(missing_ok=True)


def check_bounded(size_mb: int) -> None:
    """SandboxError naming the cause when a `size_mb` workspace cannot be made here; the run
    checks this before it starts. 0 (unbounded) is always possible."""
    if size_mb == 0:
        return
    missing = [t for t in ("mkfs.ext4", "mount", "umount") if shutil.which(t, path=TOOL_ENV["PATH"]) is None]
    if missing:
        raise SandboxError(f"a bounded workspace needs {', '.join(missing)} (e2fsprogs, mount); "
                           "or pass --workspace-mb 0 for an unbounded one")
    if os.geteuid() != 0:
        raise SandboxError("a bounded workspace is a loop-mounted file system, which needs root; "
                           "run as root or pass --workspace-mb 0 for an unbounded workspace")
    SCRATCH_ROOT.mkdir(parents=True, exist_ok=True)
    probe = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-probe-", dir=SCRATCH_ROOT)) / "ws"
    try:
        create(probe, WORKSPACE_MIN_MB)
    finally:
        remove(probe)
        shutil.rmtree(probe.parent, ignore_errors=True)


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or below `root`, deepest first (from /proc/self/mountinfo)."""
    prefix = str(root).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    points = [_unescape(line.split()[4]) for line in lines]
    found = {Path(p) for p in points if p == str(root) or p.startswith(prefix)}
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def is_mounted(path: Path) -> bool:
    """Whether `path` itself is a mount point."""
    return Path(os.path.abspath(path)) in mounts_under(Path(os.path.abspath(path)))


def collect_stale(root: Path = SCRATCH_ROOT) -> int:
    """Unmount and remove the scratch dirs of controllers that died; return how many."""
    if not root.is_dir():
        return 0
    removed = 0
    for run_dir in root.iterdir():
        pid = run_dir.name.split("-", 1)[0]
        if not pid.isdigit() or procfs.exists(pid):
            continue
        remove_tree(run_dir)
        removed += 1
    return removed


def remove_tree(run_dir: Path) -> None:
    """Remove a run's scratch dir with every workspace still mounted in it."""
    for point in mounts_under(run_dir):
        _unmount(point)
    shutil.rmtree(run_dir, ignore_errors=True)


def _unmount(path: Path) -> None:
    # Lazy as a last resort: a process of a sandbox being torn down may still hold a file.
    # The loop device is released (autoclear) once the last user lets go.
    done = subprocess.run(["umount", str(path)], capture_output=True, text=True, env=TOOL_ENV, check=False)
    if done.returncode != 0:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, env=TOOL_ENV, check=False)


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, env=TOOL_ENV, check=False, timeout=60)
    if done.returncode != 0:
        raise SandboxError(f"{argv[0]} failed: {(done.stderr or done.stdout).strip()[-300:]}")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
