"""The `local` backend: one ipykernel per instance inside bubblewrap, no Docker needed.

Isolation is bwrap.py's command line; memory, pids and CPU limits come from cgroups
(cgroups.py), or from rlimits when no cgroup is writable here.

Process trees of one sandbox (host view, see spawn.py and template.py):
    controller ─ reaper ─ bwrap ─ holder      pid 1 of the sandbox's namespaces, from start to close
    template ─ reaper ─ ipykernel             joined to the holder's namespaces; one per (re)start
    controller ─ reaper ─ ipykernel           the same, started cold (no template here)
A kernel restart kills the kernel's tree and the orphans the holder adopted, never the holder:
the sandbox, its tmpfs workspace included, outlives every kernel. Closing kills the holder,
and with the namespace's pid 1 the kernel kills everything left in it; the cgroup sweep
afterwards catches anything that escaped.

On-disk state, one directory per sandbox under STATE_DIR (layout.state_dir):
    <STATE_DIR>/<controller pid>-<hex>/owner.json   who owns it, its cgroups and processes (stale.py)
                                      /etc/         generated passwd, group, hosts
                                      /sock/        bind-mounted at /kernel: sockets + kernel.json
"""
from __future__ import annotations

import logging
import os
import platform
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from runner.sandbox import bwrap, cgroupfs, cgroups, kernel, procfs, spawn, stale
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Limits, SandboxError, SandboxSpec
from runner.sandbox.bootstrap import PRELOAD_ENV
from runner.sandbox.kernel_jit import JIT_CACHE_ENV, JIT_CACHE_WRITE_ENV
from runner.sandbox.kernel_sandbox import KernelBackend, KernelCommand, KernelSandbox
from runner.sandbox.layout import (
    LIBRARY_ROOT,
    SANDBOX_UID,
    WORKSPACE,
    ensure_private_dir,
    kernel_env,
    sandbox_env,
    state_dir,
    user_dir,
)
from runner.sandbox.template import TEMPLATES, ForkedKernel, Templates

log = logging.getLogger(__name__)

STATE_DIR = state_dir("sbx")
LOG_LINES = 40  # the kernel's output kept for a start that failed
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}  # the reapers'; bwrap clears it anyway
HOLDER_START_S = 30.0  # bwrap sets up a sandbox in well under a second on an idle machine
# RLIMIT_NPROC counts processes per user namespace from Linux 5.14: each sandbox of a user who
# is not root has its own user namespace, hence its own process budget, without cgroups.
NPROC_PER_USER_NAMESPACE = (5, 14)


def _wait(proc: subprocess.Popen[Any] | ForkedKernel, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


def _tree(pid: int | None) -> list[int]:
    return [pid, *procfs.descendants(pid)] if pid else []


def template_env(limits: Limits, python: str, jit_cache: bool) -> dict[str, str]:
    """The environment a kernel template starts with: a kernel's (sandbox_env), its compile
    cache at bwrap.jit_root() when kernels mount one, and its own files in a private host
    directory (the kernels' paths for them are inside the sandbox, where it never runs)."""
    own = user_dir() / "template"
    env = sandbox_env(limits, python) | {
        "HOME": str(own), "IPYTHONDIR": str(own / "ipython"), "JUPYTER_RUNTIME_DIR": str(own / "jupyter"),
        "MPLCONFIGDIR": str(own / "mpl")}
    if jit_cache:
        env[JIT_CACHE_ENV] = bwrap.jit_root()
    return env


def host_oom_kills() -> int:
    """OOM kills on the whole host so far (/proc/vmstat): what tells a kernel killed for the
    host's memory apart from any other SIGKILL when no cgroup counts them."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


class LocalSandbox(KernelSandbox):
    """A bubblewrap sandbox: its holder, its kernel, its cgroups and owner record."""

    def __init__(self, spec: SandboxSpec, state_dir: Path, kernel_command: KernelCommand,
                 templates: Templates | None = None) -> None:
        super().__init__(spec, state_dir, kernel_command)
        # Kernels fork from a template unless they must start cold: no templates given, the
        # compile cache's build (the only kernel that writes the cache), or no cgroups (below).
        writes_cache = spec.jit_cache is not None and spec.jit_cache.writable
        self._templates = None if writes_cache else templates
        self.cgroups: dict[str, str] = {}
        self.limits_via = "rlimits"
        self._holder: subprocess.Popen[bytes] | None = None  # the holder's reaper
        self._holder_pids: list[int] = []  # its reaper, bwrap, the holder (pid 1 of the sandbox)
        self._holder_ready = threading.Event()
        self._proc: subprocess.Popen[bytes] | ForkedKernel | None = None  # the kernel's reaper
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._oom_base = 0
        self._pids_max_base = 0
        self._owner = stale.owner_record(spec)
        size = spec.limits.workspace_mb
        self._tmpfs_mb = size if workspaces.kind(size) == "tmpfs" else 0

    # -- setup --

    def _populate_box(self) -> None:
        stale.write_owner(self.box, self._owner | {"cgroups": cgroups.planned(self.name)})
        bwrap.write_etc(self.box / "etc")

    def _create(self) -> None:
        try:
            self.cgroups = cgroups.create(self.name, self.spec.limits)
            self.limits_via = "cgroups"
        except OSError as exc:
            self.limits_via = f"rlimits (cgroups not writable: {exc})"
        self._owner["cgroups"] = self.cgroups
        stale.write_owner(self.box, self._owner)

    def _cgroup_procs(self) -> list[str]:
        return [str(Path(p) / "cgroup.procs") for p in self.cgroups.values()]

    def _start_kernel(self) -> None:
        if not self._holder_running():
            self._start_holder()
        self._proc = self._fork_kernel() or self._popen(self._kernel_argv())
        self._record_processes()
        self._oom_base = self._oom_count()
        self._pids_max_base = self._pids_max_count()

    def _kernel_argv(self) -> list[str]:
        """The kernel's reaper, which joins the holder's namespaces to start the kernel."""
        return spawn.entering_reaper_argv(
            os.getpid(), self._cgroup_procs(), self._holder_pids[-1], uid=SANDBOX_UID, cwd=WORKSPACE,
            env=kernel_env(self.spec, bwrap.kernel_python(), bwrap.jit_root()), rlimits=self._rlimits(),
            argv=self._kernel_command(self.conn_inside, self.spec.limits))

    def _fork_kernel(self) -> ForkedKernel | None:
        """The kernel's reaper forked by the template for this sandbox's limits (None: start
        cold). Its settings are _kernel_argv's, its environment the one a cold kernel keeps."""
        if self._templates is None or not self.cgroups:
            # Without cgroups the memory limit is RLIMIT_AS, an address space: a fork's would
            # start with the template's whole stack counted against what the model may allocate.
            return None
        limits, python = self.spec.limits, bwrap.kernel_python()
        bwrap.link_env_view(self.spec.jit_cache.host if self.spec.jit_cache else None)
        popped = (JIT_CACHE_ENV, JIT_CACHE_WRITE_ENV, PRELOAD_ENV)  # what a cold kernel pops
        env = {k: v for k, v in kernel_env(self.spec, python, bwrap.jit_root()).items() if k not in popped}
        request = {
            "cgroup_procs": self._cgroup_procs(), "enter": self._holder_pids[-1], "uid": SANDBOX_UID,
            "cwd": WORKSPACE, "rlimits": self._rlimits(), "env": env,
            "path": [LIBRARY_ROOT] if self.spec.libraries else [],
            "argv": ["-c", *self._kernel_command(self.conn_inside, limits)[3:]],
        }
        own_env = template_env(limits, python, self.spec.jit_cache is not None)
        ensure_private_dir(Path(own_env["HOME"]))
        proc = self._templates.fork(python, own_env, request)
        if proc is not None:
            threading.Thread(target=self._read_log, args=(proc, None), daemon=True).start()
        return proc

    def _rlimits(self) -> dict[str, int]:
        # Fallback only: without cgroups, each kernel process gets the memory limit as its
        # address space, and the sandbox its process budget (per user namespace, see above).
        limits = self.spec.limits
        return {} if self.cgroups else {"RLIMIT_AS": limits.memory_mb * 1024 * 1024, "RLIMIT_NPROC": limits.pids}

    def _holder_argv(self) -> list[str]:
        """The holder's reaper, which starts bwrap, which makes the sandbox around the holder."""
        command = bwrap.holder_command(bwrap.kernel_python())
        argv = bwrap.bwrap_argv(self.spec, self.box, command, self._as_root, self._tmpfs_mb)
        return spawn.reaper_argv(os.getpid(), self._cgroup_procs(), argv)

    def _start_holder(self) -> None:
        """Start the sandbox itself (bwrap and its pid 1) and wait until it is set up."""
        if self._holder is not None:
            log.warning("%s: the sandbox's holder died; starting a new sandbox (the workspace %s)",
                        self.spec.case_id, "is kept" if not self._tmpfs_mb else "starts empty")
            self._stop_holder()
        self._holder_ready.clear()
        self._holder = holder = self._popen(self._holder_argv(), ready=self._holder_ready)
        deadline = time.monotonic() + HOLDER_START_S
        while not self._holder_ready.wait(0.02):
            if holder.poll() is not None or time.monotonic() > deadline:
                self._stop_holder()
                raise SandboxError(f"{self.spec.case_id}: the sandbox did not start: {self.log_tail()}")
        chain = [holder.pid]
        for _ in range(2):  # reaper -> bwrap -> holder, each with exactly one child
            kids = procfs.children(chain[-1])
            if not kids:
                self._stop_holder()
                raise SandboxError(f"{self.spec.case_id}: the sandbox's pid 1 vanished: {self.log_tail()}")
            chain.append(kids[0])
        self._holder_pids = chain
        self._init_pid = chain[-1]

    def _popen(self, argv: list[str], ready: threading.Event | None = None) -> subprocess.Popen[bytes]:
        proc = spawn.SPAWNER.popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,  # the controller's Ctrl-C must not reach the sandbox
            env=LAUNCH_ENV,
        )
        threading.Thread(target=self._read_log, args=(proc, ready), daemon=True).start()
        return proc

    def _after_ready(self) -> None:
        self._find_pids()

    def _read_log(self, proc: subprocess.Popen[bytes] | ForkedKernel, ready: threading.Event | None) -> None:
        # A bounded tail: the sandbox can write to this pipe without limit.
        out = proc.stdout
        if out is None:
            return
        for raw in iter(lambda: out.readline(4096), b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if ready is not None and not ready.is_set() and line == bwrap.HOLDER_READY:
                ready.set()
                continue
            self._log.append(line)
        out.close()

    def log_tail(self) -> str:
        """The last lines the reapers, bwrap and the kernel wrote."""
        return "\n".join(self._log) or "(no output)"

    def _find_pids(self) -> None:
        """The kernel: the only child of its reaper."""
        kids = procfs.children(self._proc.pid) if self._proc else []
        self._kernel_pid = kids[0] if kids else None
        self._record_processes()

    def _record_processes(self) -> None:
        kernel_side = [self._proc.pid] if self._proc else []
        kernel_side += [self._kernel_pid] if self._kernel_pid else []
        self._owner["processes"] = stale.process_records(self._holder_pids + kernel_side)
        stale.write_owner(self.box, self._owner)

    # -- processes --

    def _holder_running(self) -> bool:
        return bool(self._holder_pids) and procfs.running(self._holder_pids[-1])

    def _running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        """The kernel reaper's exit status, which is the kernel's."""
        return self._proc.poll() if self._proc else None

    def interrupt(self) -> None:
        """SIGINT to the kernel process (through the control channel when its pid is unknown)."""
        if self._kernel_pid and self.alive():
            procfs.kill(self._kernel_pid, signal.SIGINT)
        elif self._client is not None:
            kernel.request_interrupt(self._client)

    def _model_processes(self) -> list[int]:
        """The kernel's tree and the orphans the holder adopted: everything the model ran."""
        holder = self._holder_pids[-1] if self._holder_pids else None
        kernel_side = _tree(self._proc.pid)[1:] if self._proc else []
        return kernel_side + procfs.descendants(holder) if holder else kernel_side

    def hard_kill(self) -> None:
        """Kill the kernel and everything it started; the sandbox (its holder) stays."""
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            for _ in range(100):  # killed parents' children are adopted by the holder: again
                victims = [p for p in self._model_processes() if procfs.running(p)]
                if not victims:
                    break
                for pid in victims:
                    procfs.kill(pid)
                time.sleep(0.005)
            _wait(proc, 2.0)  # the reaper reaps the kernel and exits
            if proc.poll() is None:
                proc.kill()
                _wait(proc, 5.0)
            for path in self.cgroups.values():
                cgroupfs.kill(path, keep=set(self._holder_pids))  # anything that escaped the trees
            self._kernel_pid = None

    def _stop_holder(self) -> None:
        """Kill the sandbox's pid 1 (the kernel then kills everything in its namespaces)."""
        holder = self._holder
        if holder is None:
            return
        if self._holder_pids and holder.poll() is None:
            procfs.kill(self._holder_pids[-1])
            _wait(holder, 2.0)  # bwrap and then the reaper exit by themselves
        if holder.poll() is None:
            for pid in reversed(procfs.descendants(holder.pid)):
                procfs.kill(pid)
            _wait(holder, 1.0)
            holder.kill()
        _wait(holder, 5.0)
        self._holder, self._holder_pids, self._init_pid = None, [], None

    def _wait_exit(self, timeout_s: float) -> None:
        if self._proc is not None:
            _wait(self._proc, timeout_s)

    def _release(self) -> None:
        self.hard_kill()
        if self._tmpfs_mb and self._holder_running():
            self._harvest()
        self._stop_holder()
        self._proc = None

    def _harvest(self) -> None:
        """Copy the tmpfs workspace's file_check/ to the host, through the holder's root."""
        root = Path(f"/proc/{self._holder_pids[-1]}/root")
        for note in workspaces.harvest(root, self.spec.workspace, self._tmpfs_mb * 1024 * 1024):
            log.warning("%s: workspace file not kept: %s", self.spec.case_id, note)

    def _remove_host_state(self) -> None:
        cgroups.remove(self.cgroups)

    # -- limits --

    def _oom_count(self) -> int:
        return cgroups.oom_kills(self.cgroups) if self.cgroups else host_oom_kills()

    def _pids_max_count(self) -> int:
        return cgroups.pids_max_hits(self.cgroups) if self.cgroups else 0

    def oom_killed(self) -> bool:
        """Whether the memory cgroup counted an OOM kill since the kernel (re)started; without
        cgroups, whether the kernel died of SIGKILL while the host's OOM killer was at work."""
        if self.cgroups:
            return self._oom_count() > self._oom_base
        return self.exit_code() == 128 + signal.SIGKILL and host_oom_kills() > self._oom_base

    def _stray_roots(self) -> list[int]:
        return [p for p in (self._init_pid, self._kernel_pid) if p]

    def _pids_limit_hit(self) -> bool:
        if self.cgroups:
            hits = self._pids_max_count()
            hit, self._pids_max_base = hits > self._pids_max_base, hits
            return hit
        # rlimit fallback: no event counter. RLIMIT_NPROC counts tasks (threads): those of
        # this sandbox's user namespace, or every one of the sandbox uid's when it has none (a
        # root controller); the limit is hit when that total reaches it. A bomb whose copies
        # already died leaves zombie children (each holding a slot) instead.
        shared = self._as_root
        tasks = procfs.tasks_of_uid(SANDBOX_UID) if shared else procfs.tasks_of(self._sandbox_tree())
        if tasks >= self.spec.limits.pids - 1:
            return True
        return len(procfs.children(self._kernel_pid or 0)) >= max(8, self.spec.limits.pids // 4)

    def _sandbox_tree(self) -> list[int]:
        """Every process inside the sandbox's namespaces: the holder, the kernel, their trees."""
        holder = self._holder_pids[-1] if self._holder_pids else None
        return _tree(holder) + _tree(self._kernel_pid)

    # -- inspection --

    def enforcement(self) -> dict[str, str]:
        """Cgroups (v1 or v2) for memory, pids and CPU; without them, the memory limit bounds
        each process's address space, the process budget is the sandbox's own user
        namespace's (the sandbox uid's, shared, for a root controller), and CPU is not limited."""
        kind = workspaces.kind(self.spec.limits.workspace_mb)
        workspace = {"dir": "", "ext4": "ext4 file system (loop mount)", "tmpfs": "tmpfs in the sandbox"}[kind]
        if self.cgroups:
            version = "cgroup v2" if cgroups.UNIFIED in self.cgroups else "cgroup v1"
            return {"memory": version, "pids": version, "cpu": version if cgroups.cpu_limited(self.cgroups) else "",
                    "workspace": workspace}
        pids = "RLIMIT_NPROC of the sandbox uid (shared)" if self._as_root else "RLIMIT_NPROC per user namespace"
        return {"memory": "RLIMIT_AS per process", "pids": pids, "cpu": "", "workspace": workspace}

    def host_pids(self) -> list[int]:
        """The pids cgroup's processes (the reapers' trees under the rlimit fallback)."""
        if self.cgroups:
            return cgroups.members(self.cgroups)
        holder_side = _tree(self._holder.pid) if self._holder else []
        return holder_side + (_tree(self._proc.pid) if self._proc else [])

    def leftovers(self) -> list[str]:
        """The state dir and cgroups, while they exist."""
        found = [str(self.box)] if self.box.exists() else []
        return found + [p for p in self.cgroups.values() if Path(p).exists()]


def kernel_version() -> tuple[int, int]:
    """The running Linux kernel's (major, minor)."""
    parts = platform.release().split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


def explain_probe_failure(stderr: str, as_root: bool) -> str:
    """What a failed bwrap probe means, and what to do about it."""
    text = stderr.strip()[-300:]
    if "Unknown option" in text or "unrecognized option" in text:
        return f"bubblewrap is too old for eegbench (it needs --size and --as-pid-1: 0.5 or later): {text}"
    if not as_root and any(s in text for s in ("namespace", "uid map", "Operation not permitted", "Permission denied")):
        return ("unprivileged user namespaces are disabled here, and bubblewrap needs them when not run "
                "as root; enable them (sysctl user.max_user_namespaces=15000 and, on Debian before 11, "
                "kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later, AppArmor's "
                "kernel.apparmor_restrict_unprivileged_userns must allow bwrap), run as root, or use "
                f"--sandbox docker. bwrap said: {text}")
    return f"bubblewrap cannot create namespaces here: {text}"


class LocalBackend(KernelBackend):
    """Sandboxes made with bubblewrap and cgroups on this host."""

    name = "local"
    tmpfs_workspace = True
    # Kernels fork from a template (template.py) unless this is False, or kernel_command was
    # replaced on this instance (a conformance check's kernel: it runs as given, cold).
    fork_kernels = True

    def __init__(self, state_dir: Path = STATE_DIR) -> None:
        super().__init__(state_dir)
        self._available: tuple[bool, str] | None = None
        self.templates: Templates = TEMPLATES  # shared by every local backend of this process

    def available(self) -> tuple[bool, str]:
        """Whether bwrap (and setpriv, as root) can create the namespaces here; probed once."""
        if self._available is None:
            self._available = self._probe()
        return self._available

    def _probe(self) -> tuple[bool, str]:
        as_root = os.geteuid() == 0
        tools = ["bwrap"] + (["setpriv"] if as_root else [])
        missing = [t for t in tools if shutil.which(t) is None]
        if missing:
            return False, (f"missing executables: {', '.join(missing)} (install bubblewrap and util-linux: "
                           "`apt-get install bubblewrap` as root)")
        done = subprocess.run(bwrap.probe_argv(as_root), check=False, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            return False, explain_probe_failure(done.stderr, as_root)
        return True, f"bubblewrap {shutil.which('bwrap')}; limits via {cgroups.limits_mechanism()}"

    def shared_process_budget(self) -> str | None:
        """Under the rlimit fallback, RLIMIT_NPROC counts every process of one host uid when the
        sandboxes share it: a root controller's all run as the sandbox uid, and before Linux
        5.14 a user's all count against the user."""
        mechanism = cgroups.limits_mechanism()
        if not mechanism.startswith("rlimits"):
            return None
        if os.geteuid() != 0 and kernel_version() >= NPROC_PER_USER_NAMESPACE:
            return None
        return f"limits via {mechanism}, and RLIMIT_NPROC counts every process of the one sandbox uid"

    def _new_sandbox(self, spec: SandboxSpec) -> LocalSandbox:
        forks = self.fork_kernels and "kernel_command" not in vars(self)
        return LocalSandbox(spec, self.state_dir, self.kernel_command, self.templates if forks else None)

    def collect_stale(self) -> int:
        """Dirs, processes and cgroups of sandboxes whose controller died."""
        return stale.collect_stale(self.state_dir)

    def kernel_python(self) -> str:
        """The controller's own interpreter, as mounted in the sandbox."""
        return bwrap.kernel_python()
