"""Instance workspaces, each bounded by a file system of its own.

The model's code could otherwise write to /workspace without limit, onto the host's disk.
A bounded workspace is one of two file systems, by who runs the controller (`kind`):
- root: an ext4 file system in a sparse image file of `size_mb`, loop-mounted at the host's
  workspace directory before the sandbox starts, which both backends bind-mount. The image
  sits beside the directory, outside every sandbox, and costs only what is written.
- anyone else (loop mounts need root): a tmpfs of `size_mb` that bubblewrap mounts in the
  sandbox's own mount namespace. It is memory, counted against the sandbox's memory limit,
  and lives as long as the sandbox (kernel restarts keep it); before the sandbox is torn down,
  `harvest` copies its file_check/ out into the host's workspace directory.
Either way a cell that writes past the bound gets ENOSPC ("No space left on device") in its
observation, and the host's disk never fills.

Layout: SCRATCH_ROOT/<controller pid>-<run id>/<entry key>       the workspace (ext4: mount point)
                                             /<entry key>.img   its image (ext4 only)
A controller that died leaves both; `collect_stale` unmounts and removes them.
"""
from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from runner.core.settings import WORKSPACE_MIN_MB
from runner.sandbox import procfs
from runner.sandbox.base import SandboxError
from runner.sandbox.layout import FILE_CHECK_DIR, SANDBOX_UID, ensure_private_dir, user_dir

log = logging.getLogger(__name__)

SCRATCH_ROOT = user_dir() / "work"
TOOL_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
Kind = Literal["dir", "ext4", "tmpfs"]


def kind(size_mb: int) -> Kind:
    """What a workspace of `size_mb` is here: an unbounded directory (0), a loop-mounted
    ext4 (a root controller), or a tmpfs inside the sandbox (anyone else)."""
    if size_mb == 0:
        return "dir"
    return "ext4" if os.geteuid() == 0 else "tmpfs"


def image_of(path: Path) -> Path:
    """The image file backing the workspace at `path`."""
    return path.with_name(path.name + ".img")


def create(path: Path, size_mb: int) -> None:
    """A fresh, empty workspace at `path`: bounded to `size_mb` MB, unbounded when 0.

    SandboxError when the bounded file system cannot be made (see `check_bounded`)."""
    if SCRATCH_ROOT in path.parents:
        ensure_private_dir(SCRATCH_ROOT)
    remove(path)
    path.mkdir(parents=True)
    if kind(size_mb) != "ext4":
        return  # a tmpfs is the sandbox's to mount; the directory receives its harvest
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
    checks this before it starts. 0 (unbounded) and a tmpfs (the sandbox's) are always
    possible."""
    if kind(size_mb) != "ext4":
        return
    missing = [t for t in ("mkfs.ext4", "mount", "umount") if shutil.which(t, path=TOOL_ENV["PATH"]) is None]
    if missing:
        raise SandboxError(f"a bounded workspace needs {', '.join(missing)} (e2fsprogs, mount); "
                           "or pass --workspace-mb 0 for an unbounded one")
    ensure_private_dir(SCRATCH_ROOT)
    probe = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-probe-", dir=SCRATCH_ROOT)) / "ws"
    try:
        create(probe, WORKSPACE_MIN_MB)
    finally:
        remove(probe)
        shutil.rmtree(probe.parent, ignore_errors=True)


def harvest(sandbox_root: Path, workspace: Path, budget_bytes: int) -> list[str]:
    """Copy <sandbox_root>/workspace/file_check/ (a tmpfs workspace, seen through the holder's
    /proc/<pid>/root) into <workspace>/file_check/; return what was not copied, and why.

    Hostile code wrote it: nothing is followed. Each directory is opened relative to its
    parent with O_NOFOLLOW; symlinks are recreated as symlinks and FIFOs as FIFOs (what
    run.artifacts records of them, unread), other special files are left; regular files are
    copied while their sizes sum to at most `budget_bytes` (a sparse file or hard links could
    otherwise make a copy far larger than the tmpfs). Run it once the model's processes are
    gone."""
    skipped: list[str] = []
    dest = workspace / FILE_CHECK_DIR
    dest.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        top = os.open(sandbox_root / "workspace", flags)
    except OSError as exc:
        return [f"the sandbox's workspace is gone ({exc.strerror})"]
    try:
        source = os.open(FILE_CHECK_DIR, flags, dir_fd=top)
    except OSError as exc:
        os.close(top)
        return [] if exc.errno == 2 else [f"{FILE_CHECK_DIR}/ is not a directory ({exc.strerror})"]
    os.close(top)
    _copy_tree(source, dest, [budget_bytes], skipped, FILE_CHECK_DIR)
    return skipped


def _copy_tree(src_fd: int, dest: Path, budget: list[int], skipped: list[str], rel: str) -> None:
    """Copy the directory open at src_fd into dest (consumes src_fd)."""
    try:
        names = sorted(os.listdir(src_fd))
        for name in names:
            _copy_entry(src_fd, name, dest, budget, skipped, f"{rel}/{name}")
    finally:
        os.close(src_fd)


def _copy_entry(src_fd: int, name: str, dest: Path, budget: list[int], skipped: list[str], rel: str) -> None:
    st = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
    target = dest / name
    if stat.S_ISDIR(st.st_mode):
        target.mkdir(exist_ok=True)
        _copy_tree(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=src_fd), target,
                   budget, skipped, rel)
    elif stat.S_ISLNK(st.st_mode):
        target.symlink_to(os.readlink(name, dir_fd=src_fd))
    elif stat.S_ISFIFO(st.st_mode):
        os.mkfifo(target)
    elif not stat.S_ISREG(st.st_mode):
        skipped.append(f"{rel}: a special file")
    elif st.st_size > budget[0]:
        skipped.append(f"{rel}: {st.st_size} bytes, past what the workspace holds")
    else:
        budget[0] -= st.st_size
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=src_fd)
        with os.fdopen(fd, "rb") as reader, open(target, "wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)


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
    stale = procfs.named_after_dead_pids(root)
    for run_dir in stale:
        remove_tree(run_dir)
    return len(stale)


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
