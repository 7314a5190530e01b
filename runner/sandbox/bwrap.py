"""The bubblewrap command of a local sandbox, and the /etc files it binds (pure: unit-testable).

New pid/net/ipc/uts/cgroup namespaces (and user namespaces, for a controller that is not
root); nothing of the host file system but /usr, the Python installation and a few generated
/etc files; /input read-only with only the instance's files; /workspace writable (the host's
workspace directory, or a size-bounded tmpfs of the sandbox's own); private, size-bounded
/tmp and /dev/shm; an unprivileged uid without capabilities; an empty environment but the
one layout.sandbox_env makes.

bwrap runs the holder (HOLDER) as pid 1 of the namespaces: it only reaps orphans, for as long
as the sandbox lives. The kernel joins its namespaces (spawn.py), so that a kernel restart
keeps the sandbox, and a tmpfs workspace with it. As pid 1 the holder cannot be signalled
from inside the sandbox: the model's code can kill its kernel, never the sandbox.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path, PurePosixPath

from runner.sandbox.base import SandboxSpec
from runner.sandbox.layout import (
    FILE_CHECK_DIR,
    INPUT_ROOT,
    INSIDE_SOCKET_DIR,
    SANDBOX_UID,
    WORKSPACE,
    ensure_private_dir,
    input_mounts,
    jit_cache_mount,
    kernel_env,
    library_mounts,
    user_dir,
)
from runner.sandbox.spawn import CHILD_WATCH

ETC_FILES = ("passwd", "group", "hosts")  # generated per sandbox
HOST_ETC_FILES = ("ld.so.cache", "localtime", "fonts")  # fonts: fontconfig complains without it


def system_binds() -> list[str]:
    """/usr read-only, and the top-level bin/lib dirs as they are here (symlinks on merged-/usr)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def in_virtualenv() -> bool:
    """Whether the controller runs from a virtualenv (then mounted at env_view()/venv)."""
    return sys.prefix != sys.base_prefix


def env_view() -> Path:
    """Where a sandbox sees the kernel environment (the virtualenv, the compile cache): a path
    the host has too, as symlinks in this user's directory, so that a kernel forked from a
    template (runner/sandbox/template.py) that imported its modules on the host finds every
    file it imported at the same path inside. Not the virtualenv's own path: it usually lies
    in the project directory, and that directory (with the ground truth beside it) must not
    even appear in the sandbox. One per virtualenv, so that two checkouts never share it."""
    digest = hashlib.sha256(os.path.realpath(sys.prefix).encode()).hexdigest()[:10]
    return user_dir() / f"kenv-{digest}"


def venv_inside() -> str:
    """The virtualenv's path inside the sandbox (and, through a symlink, on the host)."""
    return str(env_view() / "venv")


def jit_root() -> str:
    """The compile cache's path inside the sandbox (and, through a symlink, on the host)."""
    return str(env_view() / "jit")


def link_env_view(jit_cache: Path | None) -> None:
    """Point the host's env_view() symlinks at this virtualenv and at `jit_cache` (if any)."""
    view = env_view()
    ensure_private_dir(view)
    links = {"venv": sys.prefix if in_virtualenv() else None, "jit": jit_cache}
    for name, target in links.items():
        if target is None:
            continue
        link, target_s = view / name, os.path.abspath(target)
        if os.path.islink(link) and os.readlink(link) == target_s:
            continue
        staged = view / f".{name}.{os.getpid()}"
        staged.unlink(missing_ok=True)
        os.symlink(target_s, staged)
        os.replace(staged, link)  # atomic: a template starting meanwhile sees one or the other


def python_binds() -> list[tuple[str, str]]:
    """(host, inside) trees the kernel's Python needs: the base installation at its own path,
    a virtualenv at venv_inside()."""
    trees = {sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    binds = [(t, t) for t in sorted(trees) if not _under(t, ["/usr"])]
    if in_virtualenv():
        binds.append((sys.prefix, venv_inside()))
    return binds


def kernel_python() -> str:
    """The project's interpreter as seen inside the sandbox (and through env_view() on the host)."""
    if not in_virtualenv():
        return sys.executable
    # normpath: an interpreter started by a relative path (../venv/bin/python) keeps the "..";
    # resolve() would follow the venv's symlink out of it
    executable = Path(os.path.normpath(os.path.abspath(sys.executable)))
    return f"{venv_inside()}/{executable.relative_to(os.path.normpath(sys.prefix)).as_posix()}"


def _under(path: str, trees: list[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


def _dirs_for(path: str, made: set[str]) -> list[str]:
    """--dir options creating the parents of `path` as 0755: bwrap makes them 0700 otherwise,
    and the unprivileged kernel could not traverse them."""
    args: list[str] = []
    parts = PurePosixPath(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d not in made:
            made.add(d)
            args += ["--perms", "0755", "--dir", d]
    return args


def input_binds(spec: SandboxSpec, made: set[str]) -> list[str]:
    """Each input file read-only at /input/<rel>; /input exists even without inputs."""
    args: list[str] = []
    for host, inside in input_mounts(spec):
        args += _dirs_for(inside, made) + ["--ro-bind", str(host), inside]
    if INPUT_ROOT not in made:
        args += ["--perms", "0755", "--dir", INPUT_ROOT]
    return args


def library_binds(spec: SandboxSpec, made: set[str]) -> list[str]:
    """Each library package read-only under LIBRARY_ROOT, which goes on PYTHONPATH."""
    mounts = library_mounts(spec)
    if not mounts:
        return []
    args: list[str] = []
    for host, inside in mounts:
        args += _dirs_for(inside, made) + ["--ro-bind", str(host), inside]
    return args


# pid 1 of a sandbox. It reaps orphans, woken by SIGCHLD through the signal wake-up fd; as
# the namespace's init it gets no other signal from inside the sandbox (the kernel drops
# those whose action is the default). It exits, and the kernel then kills everything in the
# sandbox, as soon as nobody reads its output any more (POLLERR on stdout, a pipe to the
# controller): the controller died. bwrap's parent-death signal does not reach it as root,
# where setpriv's change of uid cleared that signal.
HOLDER = CHILD_WATCH + r"""
watch, wake_r = child_watch()
print(READY, flush=True)
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    if any(fd == 1 for fd, _ in watch.poll()):
        break
    os.read(wake_r, 4096)
"""
HOLDER_READY = "eegbench-holder-ready"  # the holder's one line of output: the sandbox is set up


def holder_command(python: str) -> list[str]:
    """The holder's command line inside the sandbox."""
    return [python, "-I", "-S", "-c", f"READY = {HOLDER_READY!r}\n{HOLDER}"]


def bwrap_argv(spec: SandboxSpec, box_dir: Path, command: list[str], as_root: bool,
               workspace_tmpfs_mb: int = 0) -> list[str]:
    """The whole bwrap command line running `command` (the holder) as pid 1 of a sandbox for
    `spec`; box_dir holds the generated etc/ and the socket dir sock/ (mounted at /kernel).
    /workspace is a tmpfs of `workspace_tmpfs_mb` MB, or with 0 the spec's workspace dir."""
    made: set[str] = set()
    argv = [
        "bwrap",
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv", "--as-pid-1",
    ]
    if not as_root:  # a user namespace maps the unprivileged caller; no setpriv needed
        argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
    for key, value in kernel_env(spec, kernel_python(), jit_root()).items():
        argv += ["--setenv", key, value]
    argv += system_binds()
    argv += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        argv += ["--ro-bind", str(box_dir / "etc" / name), f"/etc/{name}"]
    for name in HOST_ETC_FILES:
        if os.path.exists(f"/etc/{name}"):
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    # Sized tmpfs: it is memory, and with rlimits alone nothing else would bound it.
    tmpfs_size = str(spec.limits.memory_mb * 1024 * 1024)
    argv += [
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "1777", "--size", tmpfs_size, "--tmpfs", "/tmp",
        "--perms", "1777", "--size", tmpfs_size, "--tmpfs", "/dev/shm",
        *workspace_mount(spec, workspace_tmpfs_mb),
        "--bind", str(box_dir / "sock"), INSIDE_SOCKET_DIR,
    ]
    # After /tmp's tmpfs: env_view() is under the temp dir, and the tmpfs would hide it (whose
    # mode, 1777, --dir must not change).
    made |= {"/tmp", "/dev", "/dev/shm"}
    for host, inside in python_binds():
        argv += _dirs_for(inside, made) + ["--ro-bind", host, inside]
    argv += input_binds(spec, made)
    argv += library_binds(spec, made)
    for cache, inside, read_only in jit_cache_mount(spec, jit_root()):
        argv += _dirs_for(inside, made) + ["--ro-bind" if read_only else "--bind", str(cache), inside]
    # The root and the directories bwrap made on it (/etc, /input, /opt...) belong to the
    # sandbox uid when a user namespace maps the controller's user to it: read-only for all.
    argv += ["--remount-ro", "/", "--chdir", WORKSPACE]
    if as_root:  # bwrap as root keeps capabilities and uid 0: drop both for good
        argv += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return argv + command


def workspace_mount(spec: SandboxSpec, tmpfs_mb: int) -> list[str]:
    """/workspace and its file_check/: a tmpfs of `tmpfs_mb` MB (counted against the sandbox's
    memory), or the spec's host directory when 0."""
    if not tmpfs_mb:
        return ["--bind", os.path.abspath(spec.workspace), WORKSPACE]
    return ["--perms", "0755", "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", WORKSPACE,
            "--perms", "0755", "--dir", f"{WORKSPACE}/{FILE_CHECK_DIR}"]


def probe_argv(as_root: bool) -> list[str]:
    """A bwrap call that only succeeds where bwrap can create the namespaces sandboxes need,
    with the options they use (a sized tmpfs, the command as pid 1)."""
    probe = ["bwrap", "--unshare-pid", "--unshare-net", "--as-pid-1", *system_binds(),
             "--proc", "/proc", "--dev", "/dev", "--size", str(1024 * 1024), "--tmpfs", "/tmp", "true"]
    if not as_root:
        probe[1:1] = ["--unshare-user"]
    return probe


def write_etc(etc: Path) -> None:
    """The sandbox's passwd, group and hosts: root and the sandbox uid, localhost only."""
    etc.mkdir(exist_ok=True)
    uid = SANDBOX_UID
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"sandbox:x:{uid}:{uid}:eegbench sandbox:/workspace:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nsandbox:x:{uid}:\n")
    (etc / "hosts").write_text("127.0.0.1 localhost sandbox\n::1 localhost\n")
    for f in etc.iterdir():
        f.chmod(0o644)
