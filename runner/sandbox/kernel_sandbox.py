"""What the local and Docker backends share: a sandboxed ipykernel reached over ipc sockets.

A `KernelSandbox` owns one host state dir <state dir>/<controller pid>-<hex> whose sock/ is
mounted at /kernel, the kernel client, and the lifecycle skeleton: prepare (state dir,
workspace, connection file), launch (start the kernel, connect, wait until it answers),
execute (cell.py's policy), contain (fork bombs), close. A backend fills in how its kernel
process is started, observed and stopped; a `KernelBackend` how a sandbox is built.
"""
from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path

from jupyter_client.blocking.client import BlockingKernelClient

from runner.core.transcript import Observation
from runner.sandbox import cell, kernel, procfs, stale
from runner.sandbox.base import Backend, Limits, Sandbox, SandboxError, SandboxSpec
from runner.sandbox.bootstrap import PRELOAD_READY_S
from runner.sandbox.layout import (
    INSIDE_SOCKET_DIR,
    SANDBOX_UID,
    ensure_private_dir,
    input_mounts,
    library_mounts,
    prepare_workspace,
)

CLOSE_WAIT_S = 1.0  # ipykernel sometimes hangs on shutdown: wait this long, then kill

KernelCommand = Callable[[str, Limits], list[str]]


def kill_strays(roots: list[int], kernel_pid: int, client: BlockingKernelClient | None) -> int:
    """Kill every descendant of `roots` (a namespace's init, and the kernel when it is not
    the init's descendant) but the kernel; return how many.

    Children of killed copies are re-parented to the init; repeat, since a copy not yet
    killed may fork meanwhile. The kernel's direct children become zombies it never waits
    for: have it reap them (pids as the kernel sees them). For backends whose sandbox
    processes are visible from the host.
    """
    killed: set[int] = set()
    direct: set[int] = set()
    for _ in range(100):
        found = [p for root in roots for p in procfs.descendants(root)]
        strays = [p for p in found if p != kernel_pid and procfs.running(p)]
        if not strays:
            break
        direct |= {procfs.ns_pid(p) or 0 for p in procfs.children(kernel_pid)}
        for pid in strays:
            procfs.kill(pid)
        killed |= set(strays)
        time.sleep(0.005)
    direct.discard(0)
    if direct and client is not None:
        kernel.reap_children(client, sorted(direct))
    return len(killed)


class KernelSandbox(Sandbox):
    """One sandboxed ipykernel: the lifecycle skeleton, with the backend's parts abstract."""

    def __init__(self, spec: SandboxSpec, state_dir: Path, kernel_command: KernelCommand) -> None:
        self.spec = spec
        self.name = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.box = state_dir / self.name
        self.sock = self.box / "sock"
        self.conn_inside = f"{INSIDE_SOCKET_DIR}/{kernel.KERNEL_CONNECTION_FILE}"
        self._as_root = os.geteuid() == 0
        self._kernel_command = kernel_command
        self._key = kernel.new_key()
        self._client: BlockingKernelClient | None = None
        self._init_pid: int | None = None  # host pids, when the controller can see them
        self._kernel_pid: int | None = None
        self._lock = threading.RLock()
        self._closed = False

    # -- what a backend provides --

    def _populate_box(self) -> None:
        """Write the backend's own files into the new state dir (before anything else exists)."""

    @abstractmethod
    def _create(self) -> None:
        """Acquire the backend's resources once the host dirs exist (cgroups, a container)."""

    @abstractmethod
    def _start_kernel(self) -> None:
        """Start the kernel process; launch() then connects and waits until it answers."""

    @abstractmethod
    def _after_ready(self) -> None:
        """Look up what only exists once the kernel runs (its pids, its cgroup counters)."""

    @abstractmethod
    def _running(self) -> bool:
        """Whether the kernel process (or container) runs, closed or not."""

    @abstractmethod
    def _wait_exit(self, timeout_s: float) -> None:
        """Wait up to timeout_s for the kernel to exit by itself."""

    @abstractmethod
    def _release(self) -> None:
        """Stop the kernel for good (close): kill it, or remove its container."""

    def _remove_host_state(self) -> None:
        """Remove host state outside the state dir (close): the local backend's cgroups."""

    @abstractmethod
    def _pids_limit_hit(self) -> bool:
        """Whether the process limit was hit since the last call."""

    def _stray_roots(self) -> list[int]:
        """The processes whose descendants contain() may kill: the namespace's init."""
        return [self._init_pid] if self._init_pid else []

    @abstractmethod
    def log_tail(self) -> str:
        """The kernel's last lines of output, for a start that failed."""

    @abstractmethod
    def exit_code(self) -> int | None:
        """The dead kernel's exit code (None while it runs or when unknown)."""

    # -- setup --

    def prepare(self) -> None:
        """Create the on-disk state, workspace, connection file and backend resources."""
        kernel.socket_dir_ok(self.sock, INSIDE_SOCKET_DIR)
        input_mounts(self.spec)  # SandboxError naming the case and the input, before anything exists
        library_mounts(self.spec)
        ensure_private_dir(self.box.parent)
        self.box.mkdir(mode=0o700)
        self._populate_box()
        self.sock.mkdir(mode=0o700)
        prepare_workspace(self.spec.workspace, self._as_root)
        if self._as_root:
            os.chown(self.sock, SANDBOX_UID, SANDBOX_UID)
        self.conn_inside = kernel.write_kernel_connection_file(self.sock, INSIDE_SOCKET_DIR, self._key)
        self._create()

    def launch(self) -> None:
        """Start the kernel and wait until it answers (SandboxError with its output otherwise)."""
        with self._lock:
            if self._closed:
                raise SandboxError(f"{self.spec.case_id}: sandbox already closed")
            kernel.remove_socket_files(self.sock)
            self._start_kernel()
            if self._client is not None:
                self._client.stop_channels()
            self._client = kernel.connect(self.sock, self._key)
            try:
                kernel.wait_ready(self, kernel.READY_TIMEOUT_S + (PRELOAD_READY_S if self.spec.preload else 0))
            except SandboxError as exc:
                self.hard_kill()
                raise SandboxError(f"{self.spec.case_id}: {exc}; kernel output tail:\n{self.log_tail()}") from None
            self._after_ready()

    # -- KernelHost --

    @property
    def client(self) -> BlockingKernelClient:
        """The connected kernel client; SandboxError before the first launch."""
        if self._client is None:
            raise SandboxError(f"{self.spec.case_id}: sandbox not started")
        return self._client

    @property
    def kernel_pid(self) -> int | None:
        """The kernel's host pid while it runs."""
        return self._kernel_pid

    def alive(self) -> bool:
        """Whether the kernel runs (never once the sandbox is closed)."""
        return not self._closed and self._running()

    def restart(self) -> None:
        """A fresh kernel after hard_kill (or death), in the same sandbox."""
        self.hard_kill()
        self.launch()

    def contain(self, sweep: bool = False) -> int:
        """After the process limit was hit (a fork bomb), kill every process but init and kernel."""
        roots = self._stray_roots()
        if not self._kernel_pid or not roots:
            return 0
        if not (self._pids_limit_hit() or sweep):
            return 0
        return kill_strays(roots, self._kernel_pid, self._client)

    # -- Sandbox --

    def execute(self, code: str, timeout_s: float | None = None) -> Observation:
        """Run one cell (cell.run_cell); a close() racing it gives an infra_error observation."""
        limits = self.spec.limits
        if timeout_s is not None and timeout_s < limits.exec_timeout_s:
            limits = limits.model_copy(update={"exec_timeout_s": max(0.1, round(timeout_s, 3))})
        return cell.run_cell_unless_closed(self, code, limits, lambda: self._closed)

    def close(self) -> None:
        """Ask the kernel to exit, stop it for good, remove the host state; keep the workspace."""
        self._closed = True
        with self._lock:
            if self._client is not None and self._running():
                kernel.shutdown(self._client)
                self._wait_exit(CLOSE_WAIT_S)
            self._release()
            if self._client is not None:
                self._client.stop_channels()
                self._client = None
            self._remove_host_state()
            shutil.rmtree(self.box, ignore_errors=True)


class KernelBackend(Backend):
    """A backend of KernelSandboxes, with their state dirs under `state_dir`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir

    @abstractmethod
    def _new_sandbox(self, spec: SandboxSpec) -> KernelSandbox:
        """A sandbox object for spec, not yet prepared."""

    def _usable(self) -> tuple[bool, str]:
        """Whether start() may go ahead (the Docker backend skips the daemon round trip)."""
        return self.available()

    def _setup_errors(self) -> tuple[type[BaseException], ...]:
        """Errors of prepare/launch that mean the setup failed (wrapped in SandboxError)."""
        return (OSError,)

    def start(self, spec: SandboxSpec) -> KernelSandbox:
        """Prepare and launch a sandbox; on any failure tear it down and raise."""
        ok, why = self._usable()
        if not ok:
            raise SandboxError(f"{spec.case_id}: {self.name} sandbox unavailable: {why}")
        box = self._new_sandbox(spec)
        try:
            box.prepare()
            box.launch()
        except self._setup_errors() as exc:
            box.close()
            raise SandboxError(f"{spec.case_id}: {self.name} sandbox setup failed: {exc}") from exc
        except BaseException:
            box.close()
            raise
        return box

    def own_state(self) -> set[str]:
        """This controller process's sandbox dirs."""
        return stale.own_boxes(self.state_dir)
