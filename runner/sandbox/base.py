"""The sandbox contract every backend implements.

A backend starts one isolated kernel per instance. The controller talks to it only through
`Sandbox`: execute code, and the lifecycle calls (alive, interrupt, hard_kill, oom_killed,
close). Timeout handling (interrupt, grace, hard kill, restart) is shared by all backends and
lives in runner/sandbox/cell.py.

Besides what the controller uses, a backend answers a few host-side questions (which host
processes a sandbox has, what of it is left after close, what state this controller process
holds, which command starts the kernel): runner/sandbox/conformance/ asks them to hold every
registered backend to the same isolation and teardown checks.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.core.settings import SandboxLimits
from runner.core.transcript import Observation
from runner.sandbox.bootstrap import kernel_argv
from validation.errors import InfrastructureError


class SandboxError(InfrastructureError, RuntimeError):
    """The sandbox could not be started or reached: an infrastructure failure, not the model's."""


# What a sandbox enforces (memory, pids, CPUs; per-execution timeout, grace, output budget);
# the type and its defaults live with the run's other settings.
Limits = SandboxLimits


@dataclass(frozen=True)
class SandboxSpec:
    """What one instance's sandbox holds: its inputs, its workspace, its limits, its libraries."""

    run_id: str
    case_id: str
    data_root: Path  # host directory holding the inputs
    inputs: tuple[str, ...]  # data-root-relative files, mounted read-only at /input/<path>
    workspace: Path  # host directory mounted read-write at /workspace
    limits: Limits = field(default_factory=Limits)
    # Host package directories mounted read-only at LIBRARY_ROOT/<dir name> and put on the
    # kernel's sys.path (hybrid paradigm: `import eegtools`).
    libraries: tuple[Path, ...] = ()
    # The kernel environment's numba compile cache (runner/sandbox/jit_cache.py), mounted at
    # JIT_CACHE_ROOT: read-only for a kernel, writable only for the setup that builds it.
    jit_cache: JitCacheMount | None = None
    # Modules the kernel imports before it answers (the warm pool's kernels start with the
    # science stack imported, so the model's first imports cost nothing).
    preload: tuple[str, ...] = ()


@dataclass(frozen=True)
class JitCacheMount:
    """A host directory holding compiled numba code for one backend's kernels on this CPU."""

    host: Path
    writable: bool = False


class Sandbox(ABC):
    """One running, isolated kernel. Use as a context manager; `close` tears everything down."""

    spec: SandboxSpec

    @abstractmethod
    def execute(self, code: str, timeout_s: float | None = None) -> Observation:
        """Run one cell under the spec's timeout (or `timeout_s` when that is shorter: the time
        left before the instance deadline) and output budget; never raises for model errors."""

    @abstractmethod
    def alive(self) -> bool:
        """Whether the kernel process is running (False once closed)."""

    @abstractmethod
    def interrupt(self) -> None:
        """Send the running cell a KeyboardInterrupt (SIGINT to the kernel)."""

    @abstractmethod
    def hard_kill(self) -> None:
        """Kill the kernel and every process of the sandbox; the sandbox can be restarted."""

    @abstractmethod
    def oom_killed(self) -> bool:
        """Whether the current (or just-died) kernel was killed for exceeding the memory limit."""

    @abstractmethod
    def close(self) -> None:
        """Tear down processes and host state, keep the workspace; idempotent."""

    @abstractmethod
    def enforcement(self) -> dict[str, str]:
        """How each resource limit holds in this sandbox: 'memory', 'pids', 'cpu' and
        'workspace', each to its mechanism, '' where that limit does not hold here."""

    # -- host-side inspection (runner/sandbox/conformance) --

    @property
    @abstractmethod
    def kernel_pid(self) -> int | None:
        """The kernel's host pid while it runs (None when unknown or not running)."""

    @abstractmethod
    def host_pids(self) -> list[int]:
        """Host pids of every process of the sandbox right now (its init, kernel, children)."""

    @abstractmethod
    def leftovers(self) -> list[str]:
        """What of this sandbox still exists on the host besides the workspace; [] once closed."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Backend(ABC):
    """A way to run sandboxes (bubblewrap, Docker); registered by name in runner.sandbox.BACKENDS."""

    name: str
    # Whether a controller that is not root can bound /workspace (the local backend: a tmpfs
    # inside the sandbox). A root controller's bounded workspace is a loop-mounted ext4.
    tmpfs_workspace = False

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """Whether this backend can run here, and why (for the run log)."""

    @abstractmethod
    def start(self, spec: SandboxSpec) -> Sandbox:
        """Start a sandbox whose kernel answers; raise SandboxError otherwise."""

    def describe(self) -> dict[str, Any]:
        """What run.json records about the backend (the Docker backend adds its image)."""
        ok, why = self.available()
        return {"name": self.name, "available": ok, "detail": why}

    def shared_process_budget(self) -> str | None:
        """Why concurrent sandboxes would share one process budget here (so that one's fork
        bomb could fail another's cells); None when each sandbox has its own."""
        return None

    @abstractmethod
    def collect_stale(self) -> int:
        """Remove leftovers (processes, cgroups, socket dirs) of runs that died; return how many."""

    # -- the kernel command and host-side inspection (runner/sandbox/conformance) --

    @abstractmethod
    def kernel_python(self) -> str:
        """The interpreter that runs the kernel, as a path inside the sandbox."""

    def kernel_command(self, conn_inside: str, limits: Limits) -> list[str]:
        """The kernel's command line inside the sandbox (replaceable per backend instance)."""
        return kernel_argv(self.kernel_python(), conn_inside, limits.output_budget_chars)

    @abstractmethod
    def own_state(self) -> set[str]:
        """Host state (dirs, containers) that this controller process's sandboxes hold now."""
