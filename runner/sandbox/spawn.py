"""How the local backend starts a sandbox's processes: through a reaper, from one thread.

Process trees of one local sandbox (host view):
    controller ─ reaper ─ bwrap ─ holder          the sandbox: pid 1 of its namespaces, for its lifetime
    controller ─ reaper ─ ipykernel               the kernel, joined to the holder's namespaces; one per (re)start
"""
from __future__ import annotations

import concurrent.futures
import json
import queue
import subprocess
import sys
import threading
from typing import Any

# What every process that puts a kernel into a sandbox runs (the reaper below, and the kernel
# template's children: runner/sandbox/template.py). `enter` joins the namespaces of a
# running sandbox (the holder's): the user namespaces from the outermost one this process owns
# inwards (bubblewrap nests two: the other namespaces belong to the outer one, so each is
# joined as soon as the user namespace that owns it has been). `confine`, in the child that
# becomes the kernel, drops to the sandbox uid, every capability and any way to regain one.
# Resource limits are set there, after the namespaces are joined: RLIMIT_NPROC counts
# processes per user namespace, so in a sandbox's own user namespace it is that sandbox's
# budget alone, while set before the fork it would count every process of the user.
SANDBOX_ENTRY = r"""
import ctypes, fcntl, os, resource, signal, sys
libc = ctypes.CDLL(None, use_errno=True)


def fail(what):
    print(f"eegbench reaper: {what}: {os.strerror(ctypes.get_errno())}", file=sys.stderr, flush=True)
    sys.exit(113)


def join_cgroups(paths):
    for path in paths:
        with open(path, "w") as f:
            f.write(str(os.getpid()))


def enter(pid):
    def same(name, fd):  # already a member (the sandbox did not make it): nothing to join
        return os.fstat(fd).st_ino == os.stat(f"/proc/self/ns/{name}").st_ino

    names = ("ipc", "uts", "net", "cgroup", "pid", "mnt")
    fds = {n: os.open(f"/proc/{pid}/ns/{n}", os.O_RDONLY) for n in names}
    users, fd = [], os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    while not same("user", fd):
        users.insert(0, fd)
        fd = fcntl.ioctl(fd, 0xB702)  # NS_GET_PARENT
    os.close(fd)  # our own user namespace
    pending = [n for n in names if not same(n, fds[n])]
    for user in [None, *users]:
        if user is not None and libc.setns(user, 0x10000000) != 0:  # CLONE_NEWUSER
            fail("joining the sandbox's user namespace")
        pending = [n for n in pending if libc.setns(fds[n], 0) != 0]
    if pending:
        fail("joining the sandbox's " + ", ".join(pending) + " namespace(s)")
    for fd in [*fds.values(), *users]:
        os.close(fd)


def drop_privileges(uid):
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the last capability)
    if os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        fail("setting no_new_privs")


def confine(cfg):
    if cfg.get("enter"):
        os.chdir(cfg["cwd"])
        os.setsid()
        drop_privileges(cfg["uid"])
    for name, value in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    # Die with the reaper. After the privilege drop: a change of uid clears it.
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)


def shell_status(raw):
    # A wait status as a shell gives it: the exit code, or 128 + the signal that killed it.
    code = os.waitstatus_to_exitcode(raw)
    return code if code >= 0 else 128 - code


def wait_all(child):
    # Reap every descendant (a subreaper inherits the orphans); the child's status.
    status = 0
    while True:
        try:
            pid, raw = os.wait()
        except ChildProcessError:
            return status
        if pid == child:
            status = shell_status(raw)
"""

# For a process that waits on its children and must notice the controller's death (the
# sandbox's holder, bwrap.py; a forked kernel's reaper, template.py): a poll that wakes when a
# child exits (SIGCHLD through the signal wake-up fd) or when nobody reads this process's
# stdout any more (POLLERR on fd 1, a pipe to the controller).
CHILD_WATCH = r"""
import os, select, signal


def child_watch():
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    poll = select.poll()
    poll.register(1, 0)
    poll.register(wake_r, select.POLLIN)
    return poll, wake_r
"""

# The first process of every sandbox process tree (run with `python -I -S -c`). It joins the
# cgroups before anything else runs, so every sandbox process is born inside the limits; it
# makes itself and its children the host's first choice for the OOM killer, so a sandbox
# never takes the controller down with it; it dies with the controller; and it is a child
# subreaper, so that nothing it starts becomes a zombie of the host's pid 1. It exits with
# its child's status once every descendant has been reaped. With "enter", its child joins
# the namespaces of a running sandbox (the holder's) instead of making new ones, and runs the
# kernel there with the environment given.
REAPER = SANDBOX_ENTRY + r"""
import json
cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != cfg["parent"]:
    sys.exit(112)  # the controller died while we started
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
join_cgroups(cfg["cgroup_procs"])
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("1000")
if cfg.get("enter"):
    enter(cfg["enter"])
child = os.fork()
if child == 0:
    try:
        confine(cfg)
        env = cfg.get("env")
        os.execvpe(argv[0], argv, os.environ if env is None else env)
    finally:
        os._exit(127)
sys.exit(wait_all(child))
"""


def reaper_argv(parent: int, cgroup_procs: list[str], argv: list[str]) -> list[str]:
    """`argv` run under the reaper: it joins `cgroup_procs` and dies with `parent`."""
    return _under_reaper({"parent": parent, "cgroup_procs": cgroup_procs, "rlimits": {}}, argv)


def entering_reaper_argv(parent: int, cgroup_procs: list[str], holder: int, *, uid: int, cwd: str,
                         env: dict[str, str], rlimits: dict[str, int], argv: list[str]) -> list[str]:
    """`argv` run by a child of the reaper inside the namespaces of the process `holder`, as
    `uid` (from root; a user is mapped to it by the sandbox's user namespace), without
    capabilities and with no_new_privs, in `cwd`, with exactly `env` and `rlimits`."""
    cfg = {"parent": parent, "cgroup_procs": cgroup_procs, "enter": holder, "uid": uid, "cwd": cwd,
           "env": env, "rlimits": rlimits}
    return _under_reaper(cfg, argv)


def _under_reaper(cfg: dict[str, Any], argv: list[str]) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", REAPER, json.dumps(cfg), *argv]


_Job = tuple[list[str], dict[str, Any], "concurrent.futures.Future[subprocess.Popen[Any]]"]


class Spawner:
    """Starts every sandbox process from one long-lived thread.

    --die-with-parent is PR_SET_PDEATHSIG, which fires when the *thread* that forked the
    process exits, not the process: a controller worker thread that finishes would take its
    sandbox down with it. This thread lives as long as the controller process.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """subprocess.Popen(argv, **kwargs), forked by the spawner thread."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="eegbench-spawner", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future[subprocess.Popen[Any]] = concurrent.futures.Future()
        self._jobs.put((argv, kwargs, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            argv, kwargs, future = self._jobs.get()
            try:
                future.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - hand every failure back to the caller
                future.set_exception(exc)


SPAWNER = Spawner()
