"""Kernels forked from a template (local backend): the science stack imported once, not per kernel.

A cold kernel is a new Python that imports ipykernel, numpy, scipy, pandas, matplotlib, mne
and yasa before the model's code can use them: about 4 CPU-s per instance, most of an oracle
instance's cost. A template is one such Python, started once per kernel environment with
those modules imported (and their numba code loaded from the compile cache); every kernel is
a fork of it, so that it starts with the stack in memory, shared copy-on-write.

Process trees (host view):
    controller ─ template                              imports done; forks on request
    template ─ kernel reaper ─ ipykernel               one per (re)start; the kernel in the sandbox

The kernel reaper is the forked child: it does what spawn.REAPER does for a cold kernel, with
the same code (spawn.SANDBOX_ENTRY): it joins the sandbox's cgroups, then the holder's
namespaces, and forks the kernel, which drops to the sandbox uid, capabilities and all
(no_new_privs, rlimits), closes every descriptor of the template's, takes exactly the
environment a cold kernel gets and reseeds numpy's global generator. Isolation is the cold
kernel's: the same namespaces, cgroups, uid and mounts, and the template itself is never
reachable from a sandbox. What the template imported is at the same paths inside (bwrap's
env_view()), so later imports and data files resolve as in a cold kernel.

The kernel reaper does not die with the template: it dies when nobody reads the kernel's log
any more (the controller died), so a template that dies takes no running kernel with it; it
is replaced at the next start, and the start that found it dead is retried. A template that
cannot start (or runs threads, which a fork would not copy) makes the backend start kernels
cold, with one warning in the run log: slower, never different.
"""
from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from typing import IO, Any

from runner.sandbox import spawn
from runner.sandbox.base import SandboxError
from runner.sandbox.bootstrap import KERNEL_DEFINITIONS, KERNEL_JIT_SOURCE, PRELOAD_ENV, SCIENCE_STACK

log = logging.getLogger(__name__)

START_TIMEOUT_S = 300.0  # the imports, on a loaded machine
REPLY_TIMEOUT_S = 60.0  # a fork is milliseconds; the template may be paging its imports back in
LOG_LINES = 40
# What a template imports: the science stack and the kernel itself.
TEMPLATE_IMPORTS = (*SCIENCE_STACK, "ipykernel.kernelapp", "ipykernel.ipkernel")

# The template's main program, after kernel_jit.py, bootstrap.KERNEL_DEFINITIONS,
# spawn.SANDBOX_ENTRY and spawn.CHILD_WATCH. argv[1]: {"parent": the controller's pid, "control": the socket's fd}.
TEMPLATE_MAIN = r"""
import atexit, gc, json, socket, traceback

setup = json.loads(sys.argv[1])
libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: dies with the controller
if os.getppid() != setup["parent"]:
    sys.exit(112)
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("1000")  # the host's first choice for the OOM killer, as every sandbox process
install_from_env()
_drop_cwd_from_path()
_preload(os.environ.pop("EEGBENCH_PRELOAD", ""))
gc.collect()  # not gc.freeze(): a kernel's gc.get_objects() must see what it imported, as a cold one does
control = socket.socket(fileno=setup["control"])


def reap(*_):
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def kernel_reaper(request, log_w, status_w):
    # The forked child: spawn.REAPER's work, then the kernel's parent until it exits.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    control.close()
    os.setsid()
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    join_cgroups(request["cgroup_procs"])
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log_w, 1)
    os.dup2(log_w, 2)
    os.close(null)
    os.close(log_w)
    enter(request["enter"])
    kernel = os.fork()
    if kernel == 0:
        try:
            become_kernel(request, status_w)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(127)
    sys.exit(watch(kernel, status_w))


def become_kernel(request, status_w):
    os.close(status_w)
    confine(request)
    if os.getppid() != 0:  # the reaper, outside our pid namespace, shows as 0
        os._exit(112)  # it died while we started: the holder adopted us
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # nothing of the template's
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0:0] = request["path"]
    sys.argv = request["argv"]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # the template's state would repeat in every kernel
    _install_output_cap(int(sys.argv.pop(1)))
    code = 0
    try:
        _launch()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def watch(kernel, status_w):
    # Reap until nothing is left; kill the kernel when nobody reads its log (the controller
    # died); then leave the kernel's status (as a shell gives it) on the status pipe.
    poll, wake_r = child_watch()
    status = 0
    while True:
        try:
            while True:
                pid, raw = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    break
                if pid == kernel:
                    status = shell_status(raw)
        except ChildProcessError:
            break
        events = poll.poll()
        if any(fd == 1 for fd, _ in events):
            poll.unregister(1)
            try:
                os.killpg(kernel, signal.SIGKILL)
            except OSError:
                pass
        if any(fd == wake_r for fd, _ in events):
            os.read(wake_r, 4096)
    os.write(status_w, b"%d\n" % status)
    return status


signal.signal(signal.SIGCHLD, reap)
tasks = len(os.listdir("/proc/self/task"))
control.sendall(json.dumps({"ready": True, "tasks": tasks, "modules": len(sys.modules)}).encode())
while True:
    message, fds, _, _ = socket.recv_fds(control, 1 << 20, 2)
    if not message:
        break  # the controller is done with this template
    request = json.loads(message)
    sys.stdout.flush()
    sys.stderr.flush()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # the pid stays ours until pidfd_open
    try:
        child = os.fork()
        if child == 0:
            try:
                kernel_reaper(request, *fds)
            except SystemExit as exc:
                os._exit(exc.code if isinstance(exc.code, int) else 1)
            except BaseException:
                traceback.print_exc()
            os._exit(113)
        pidfd = os.pidfd_open(child)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for fd in fds:
        os.close(fd)
    socket.send_fds(control, [json.dumps({"pid": child}).encode()], [pidfd])
    os.close(pidfd)
    reap()
"""

TEMPLATE_PROGRAM = KERNEL_JIT_SOURCE + KERNEL_DEFINITIONS + spawn.SANDBOX_ENTRY + spawn.CHILD_WATCH + TEMPLATE_MAIN


class TemplateDied(SandboxError):
    """The template exited or stopped answering; a new one takes its place."""


class ForkedKernel:
    """A kernel reaper forked by a template, seen as the subset of subprocess.Popen the local
    sandbox uses: its pid, its output, its exit status, kill."""

    def __init__(self, pid: int, pidfd: int, log_r: int, status_r: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.stdout: IO[bytes] = os.fdopen(log_r, "rb", buffering=0)
        self._pidfd = pidfd
        self._status = os.fdopen(status_r, "rb", buffering=0)
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        """The reaper's exit status once it has exited (the kernel's), else None."""
        return self._settle(0.0)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the reaper to exit; subprocess.TimeoutExpired after `timeout` seconds."""
        code = self._settle(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"kernel reaper {self.pid}", timeout or 0.0)
        return code

    def kill(self) -> None:
        """SIGKILL the reaper (through its pidfd: never another process that got its pid)."""
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except (OSError, ValueError):
                pass

    def _settle(self, timeout: float | None) -> int | None:
        # The reaper writes its status and exits; end of file without one: it was killed.
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            ready, _, _ = select.select([self._status], [], [], timeout)
            if not ready:
                return None
            text = self._status.read(64) or b""
            self.returncode = int(text) if text.strip() else -signal.SIGKILL
            self._status.close()
            os.close(self._pidfd)
            return self.returncode


class KernelTemplate:
    """One template process: started with `env` by `python` (a path valid on the host and in
    every sandbox), forking kernel reapers on request."""

    def __init__(self, python: str, env: dict[str, str]) -> None:
        self.python, self.env = python, env
        self.tasks = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the template and wait until its imports are done (SandboxError otherwise)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        setup = json.dumps({"parent": os.getpid(), "control": theirs.fileno()})
        try:
            self._proc = spawn.SPAWNER.popen(
                [self.python, "-c", TEMPLATE_PROGRAM, setup], pass_fds=(theirs.fileno(),), env=self.env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True)  # the controller's Ctrl-C must not reach it
        finally:
            theirs.close()
        self._control = ours
        threading.Thread(target=self._read_log, args=(self._proc,), daemon=True).start()
        ours.settimeout(START_TIMEOUT_S)
        try:
            ready = json.loads(ours.recv(4096) or b"{}")
        except (OSError, ValueError) as exc:
            ready = {"error": str(exc)}
        if not ready.get("ready"):
            self.close()
            raise SandboxError(f"the kernel template did not start ({ready.get('error', 'it exited')}): {self.log_tail()}")
        self.tasks = int(ready["tasks"])
        if self.tasks != 1:  # a fork copies one thread: the others' locks would stay held
            self.close()
            raise SandboxError(f"the kernel template runs {self.tasks} threads after its imports; forks need one")

    def fork(self, request: dict[str, Any]) -> ForkedKernel:
        """A new kernel reaper for `request` (spawn's reaper settings, the kernel's env, argv
        and sys.path entries); TemplateDied when the template is gone."""
        log_r, log_w = os.pipe()
        status_r, status_w = os.pipe()
        with self._lock:
            control = self._control
            try:
                if control is None:
                    raise OSError("closed")
                control.settimeout(REPLY_TIMEOUT_S)
                socket.send_fds(control, [json.dumps(request).encode()], [log_w, status_w])
                message, fds, _, _ = socket.recv_fds(control, 4096, 1)
            except OSError as exc:
                message, fds = b"", []
                self._log.append(f"(control socket: {exc})")
            finally:
                os.close(log_w)
                os.close(status_w)
        if not message or len(fds) != 1:
            for fd in [log_r, status_r, *fds]:
                os.close(fd)
            raise TemplateDied(f"the kernel template is gone: {self.log_tail()}")
        return ForkedKernel(int(json.loads(message)["pid"]), fds[0], log_r, status_r)

    def alive(self) -> bool:
        """Whether the template process runs."""
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """End the template (its forked kernels live on, each until its sandbox closes)."""
        with self._lock:
            if self._control is not None:
                self._control.close()  # end of file: the template exits
                self._control = None
        proc = self._proc
        if proc is None:
            return
        try:
            proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5.0)

    def log_tail(self) -> str:
        """The template's last lines of output."""
        return "\n".join(self._log) or "(no output)"

    def _read_log(self, proc: subprocess.Popen[bytes]) -> None:
        out = proc.stdout
        if out is None:
            return
        for raw in iter(lambda: out.readline(4096), b""):
            self._log.append(raw.decode("utf-8", "replace").rstrip("\n"))
        out.close()


class Templates:
    """A backend's templates, one per template environment, each started at its first use.

    `fork` returns None when kernels must start cold here (the template could not start):
    said once in the run log, never an error of the instance.
    """

    def __init__(self) -> None:
        self._templates: dict[tuple[str, tuple[tuple[str, str], ...]], KernelTemplate] = {}
        self._failed: str | None = None
        self._lock = threading.Lock()

    def fork(self, python: str, template_env: dict[str, str], request: dict[str, Any]) -> ForkedKernel | None:
        """A kernel reaper forked by the template that `python` runs with `template_env`
        (started, or replaced once when found dead, as needed)."""
        key = (python, tuple(sorted(template_env.items())))
        for attempt in range(2):
            template = self._template(key)
            if template is None:
                return None
            try:
                return template.fork(request)
            except TemplateDied as exc:
                log.warning("kernel template died; starting a new one%s: %s",
                            "" if attempt == 0 else " (again)", exc)
                self._drop(key, template)
        return None

    def _template(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> KernelTemplate | None:
        python, env = key[0], dict(key[1])
        with self._lock:
            if self._failed is not None:
                return None
            template = self._templates.get(key)
            if template is not None and template.alive():
                return template
            if template is not None:
                log.warning("kernel template died; starting a new one: %s", template.log_tail())
                template.close()
            started = time.monotonic()
            template = KernelTemplate(python, {**env, PRELOAD_ENV: ",".join(TEMPLATE_IMPORTS)})
            try:
                template.start()
            except (SandboxError, OSError) as exc:
                self._failed = str(exc)
                log.warning("kernels start cold (each imports for itself): %s", exc)
                return None
            log.info("kernel template ready in %.1f s", time.monotonic() - started)
            self._templates[key] = template
            return template

    def _drop(self, key: tuple[str, tuple[tuple[str, str], ...]], template: KernelTemplate) -> None:
        with self._lock:
            if self._templates.get(key) is template:
                del self._templates[key]
        template.close()

    def close(self) -> None:
        """End every template."""
        with self._lock:
            templates, self._templates = list(self._templates.values()), {}
        for template in templates:
            template.close()


# One per controller process, like spawn.SPAWNER: every local backend's sandboxes share them.
TEMPLATES = Templates()
