"""The `local` backend: one ipykernel per instance inside bubblewrap, no Docker needed.

Isolation is bwrap.py's command line; memory, pids and CPU limits come from cgroup v1
(cgroups.py), or from rlimits when cgroups are not writable here.

Process tree of one sandbox (host view, see spawn.py):
    controller ─ reaper ─ bwrap (outer) ─ bwrap (pid 1 of the namespace) ─ ipykernel
Killing the namespace's pid 1 makes the kernel kill everything in the namespace, which is
what hard_kill relies on; the cgroup sweep afterwards catches anything that escaped.

On-disk state, one directory per sandbox under STATE_DIR (layout.state_dir):
    <STATE_DIR>/<controller pid>-<hex>/owner.json   who owns it, its cgroups and processes (stale.py)
                                      /etc/         generated passwd, group, hosts
                                      /sock/        bind-mounted at /kernel: sockets + kernel.json
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import Any

from runner.sandbox import bwrap, cgroups, kernel, procfs, spawn, stale
from runner.sandbox.base import SandboxSpec
from runner.sandbox.kernel_sandbox import KernelBackend, KernelCommand, KernelSandbox
from runner.sandbox.layout import SANDBOX_UID, state_dir

STATE_DIR = state_dir("sbx")
LOG_LINES = 40  # the kernel's output kept for a start that failed
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}  # the reaper's; bwrap clears it anyway


def _wait(proc: subprocess.Popen[Any], timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


class LocalSandbox(KernelSandbox):
    """A bubblewrap sandbox: its processes, cgroups and owner record."""

    def __init__(self, spec: SandboxSpec, state_dir: Path, kernel_command: KernelCommand) -> None:
        super().__init__(spec, state_dir, kernel_command)
        self.cgroups: dict[str, str] = {}
        self.limits_via = "rlimits"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: deque[str] = deque(maxlen=LOG_LINES)
        self._oom_base = 0
        self._pids_max_base = 0
        self._owner = stale.owner_record(spec)

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

    def _launch_argv(self) -> list[str]:
        limits = self.spec.limits
        # Fallback only. RLIMIT_NPROC counts every process of the sandbox uid on the host.
        rlimits = {} if self.cgroups else {
            "RLIMIT_AS": limits.memory_mb * 1024 * 1024, "RLIMIT_NPROC": limits.pids}
        command = self._kernel_command(self.conn_inside, limits)
        argv = bwrap.bwrap_argv(self.spec, self.box, command, self._as_root)
        procs = [str(Path(p) / "cgroup.procs") for p in self.cgroups.values()]
        return spawn.reaper_argv(os.getpid(), procs, rlimits, argv)

    def _start_kernel(self) -> None:
        self._log.clear()
        self._proc = proc = spawn.SPAWNER.popen(
            self._launch_argv(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,  # the controller's Ctrl-C must not reach the kernel
            env=LAUNCH_ENV,
        )
        threading.Thread(target=self._read_log, args=(proc,), daemon=True).start()
        self._record_processes([proc.pid])
        self._oom_base = self._oom_count()
        self._pids_max_base = self._pids_max_count()

    def _after_ready(self) -> None:
        self._find_pids()

    def _read_log(self, proc: subprocess.Popen[bytes]) -> None:
        # A bounded tail: the sandbox can write to this pipe without limit.
        out = proc.stdout
        if out is None:
            return
        for raw in iter(lambda: out.readline(4096), b""):
            self._log.append(raw.decode("utf-8", "replace").rstrip("\n"))
        out.close()

    def log_tail(self) -> str:
        """The last lines the reaper, bwrap and the kernel wrote."""
        return "\n".join(self._log) or "(no output)"

    def _find_pids(self) -> None:
        """reaper -> outer bwrap -> namespace init -> kernel (each has exactly one child)."""
        if self._proc is None:
            return
        chain = [self._proc.pid]
        for _ in range(3):
            kids = procfs.children(chain[-1])
            if not kids:
                break
            chain.append(kids[0])
        self._init_pid = chain[2] if len(chain) > 2 else None
        self._kernel_pid = chain[3] if len(chain) > 3 else None
        self._record_processes(chain[:3])

    def _record_processes(self, pids: list[int]) -> None:
        self._owner["processes"] = stale.process_records(pids)
        stale.write_owner(self.box, self._owner)

    # -- processes --

    def _running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        """The reaper's exit status, which is bwrap's (the kernel's)."""
        return self._proc.poll() if self._proc else None

    def interrupt(self) -> None:
        """SIGINT to the kernel process (through the control channel when its pid is unknown)."""
        if self._kernel_pid and self.alive():
            procfs.kill(self._kernel_pid, signal.SIGINT)
        elif self._client is not None:
            kernel.request_interrupt(self._client)

    def hard_kill(self) -> None:
        """Kill the namespace's init (the kernel kills the rest), then whatever is left."""
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            if self._init_pid is None and proc.poll() is None:
                self._find_pids()  # a start that failed never looked them up
            if self._init_pid and proc.poll() is None:
                procfs.kill(self._init_pid)  # pid 1 of the namespace: the kernel kills the rest
                _wait(proc, 2.0)  # bwrap and then the reaper exit by themselves
            if proc.poll() is None:
                for pid in reversed(procfs.descendants(proc.pid)):
                    procfs.kill(pid)
                _wait(proc, 1.0)  # the reaper reaps them and exits
                proc.kill()
            _wait(proc, 5.0)
            for path in self.cgroups.values():
                cgroups.kill(path)  # anything that escaped the namespace's process tree
            self._init_pid = self._kernel_pid = None

    def _wait_exit(self, timeout_s: float) -> None:
        if self._proc is not None:
            _wait(self._proc, timeout_s)

    def _release(self) -> None:
        self.hard_kill()
        self._proc = None

    def _remove_host_state(self) -> None:
        cgroups.remove(self.cgroups.values())

    # -- limits --

    def _oom_count(self) -> int:
        path = self.cgroups.get("memory")
        return cgroups.counter(Path(path, "memory.oom_control"), "oom_kill") if path else 0

    def _pids_max_count(self) -> int:
        path = self.cgroups.get("pids")
        return cgroups.counter(Path(path, "pids.events"), "max") if path else 0

    def oom_killed(self) -> bool:
        """Whether the memory cgroup counted an OOM kill since the kernel (re)started."""
        return self._oom_count() > self._oom_base

    def _sweep_root(self) -> int | None:
        return self._init_pid or self._kernel_pid

    def _pids_limit_hit(self) -> bool:
        if self.cgroups:
            hits = self._pids_max_count()
            hit, self._pids_max_base = hits > self._pids_max_base, hits
            return hit
        # rlimit fallback: no event counter. RLIMIT_NPROC counts all tasks (threads) of the
        # sandbox uid on the host, so the limit is hit when that total reaches it; a bomb
        # whose copies already died leaves zombie children (each holding a slot) instead.
        if procfs.tasks_of_uid(SANDBOX_UID) >= self.spec.limits.pids - 1:
            return True
        return len(procfs.children(self._kernel_pid or 0)) >= max(8, self.spec.limits.pids // 4)

    # -- inspection --

    def host_pids(self) -> list[int]:
        """The pids cgroup's processes (the reaper's tree under the rlimit fallback)."""
        if "pids" in self.cgroups:
            return cgroups.pids(self.cgroups["pids"])
        return [self._proc.pid, *procfs.descendants(self._proc.pid)] if self._proc else []

    def leftovers(self) -> list[str]:
        """The state dir and cgroups, while they exist."""
        found = [str(self.box)] if self.box.exists() else []
        return found + [p for p in self.cgroups.values() if Path(p).exists()]


class LocalBackend(KernelBackend):
    """Sandboxes made with bubblewrap and cgroup v1 on this host."""

    name = "local"

    def __init__(self, state_dir: Path = STATE_DIR) -> None:
        super().__init__(state_dir)
        self._available: tuple[bool, str] | None = None

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
            return False, f"missing executables: {', '.join(missing)} (install bubblewrap and util-linux)"
        done = subprocess.run(bwrap.probe_argv(as_root), check=False, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            return False, f"bubblewrap cannot create namespaces here: {done.stderr.strip()[-300:]}"
        return True, f"bubblewrap {shutil.which('bwrap')}; limits via {cgroups.limits_mechanism()}"

    def shared_process_budget(self) -> str | None:
        """Under the rlimit fallback: RLIMIT_NPROC counts every process of one host uid, and
        every sandbox runs as that uid."""
        mechanism = cgroups.limits_mechanism()
        if not mechanism.startswith("rlimits"):
            return None
        return f"limits via {mechanism}, and RLIMIT_NPROC counts every process of the one sandbox uid"

    def _new_sandbox(self, spec: SandboxSpec) -> LocalSandbox:
        return LocalSandbox(spec, self.state_dir, self.kernel_command)

    def collect_stale(self) -> int:
        """Dirs, processes and cgroups of sandboxes whose controller died."""
        return stale.collect_stale(self.state_dir)

    def kernel_python(self) -> str:
        """The controller's own interpreter, as mounted in the sandbox."""
        return bwrap.kernel_python()
