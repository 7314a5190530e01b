"""The sandbox contract every backend implements.

A backend starts one isolated kernel per instance. The controller talks to it only through
`Sandbox`: execute code, and the lifecycle calls DESIGN.md names (alive, interrupt,
hard_kill, oom_killed, close). Timeout handling (interrupt, grace, hard kill, restart) is
shared by all backends and lives in `runner/sandbox/kernel.py`.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from runner.transcript import Observation
from validation.errors import InfrastructureError


class SandboxError(InfrastructureError, RuntimeError):
    """The sandbox could not be started or reached: an infrastructure failure, not the model's."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 4096
    pids: int = 256
    cpus: float = 1.0
    exec_timeout_s: float = 150.0
    grace_s: float = 5.0  # after an interrupt, before the hard kill
    output_budget_chars: int = 8000


@dataclass(frozen=True)
class SandboxSpec:
    run_id: str
    case_id: str
    data_root: Path  # host directory holding the inputs
    inputs: tuple[str, ...]  # data-root-relative files, mounted read-only at /input/<path>
    workspace: Path  # host directory mounted read-write at /workspace
    limits: Limits = field(default_factory=Limits)
    # Host package directories mounted read-only at LIBRARY_ROOT/<dir name> and put on the
    # kernel's sys.path (hybrid paradigm: `import eegtools`).
    libraries: tuple[Path, ...] = ()


LIBRARY_ROOT = "/opt/eegbench-lib"


def input_mounts(spec: SandboxSpec) -> list[tuple[Path, str]]:
    """(host file, path under /input) for each of the spec's inputs; SandboxError names the
    instance and the input when one is not a data-root-relative path of an existing file."""
    mounts = []
    for rel in spec.inputs:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
            raise SandboxError(f"{spec.case_id}: input path {rel!r} must be relative to the data root")
        host = Path(os.path.abspath(spec.data_root)) / rel
        if not host.is_file():
            raise SandboxError(f"{spec.case_id}: input file {host} does not exist")
        mounts.append((host, "/input/" + "/".join(parts)))
    return mounts


def library_mounts(spec: SandboxSpec) -> list[tuple[Path, str]]:
    """(host package dir, path under LIBRARY_ROOT) for each library; LIBRARY_ROOT goes on the
    kernel's PYTHONPATH. SandboxError names the instance and the library at fault."""
    mounts, names = [], set()
    for lib in spec.libraries:
        host = Path(os.path.abspath(lib))
        if not (host / "__init__.py").is_file():
            raise SandboxError(f"{spec.case_id}: library {host} is not a Python package directory")
        if host.name in names:
            raise SandboxError(f"{spec.case_id}: two libraries named {host.name!r}")
        names.add(host.name)
        mounts.append((host, f"{LIBRARY_ROOT}/{host.name}"))
    return mounts


class Sandbox(ABC):
    """One running, isolated kernel. Use as a context manager; `close` tears everything down."""

    spec: SandboxSpec

    @abstractmethod
    def execute(self, code: str) -> Observation:
        """Run one cell under the spec's timeout and output budget; never raises for model errors."""

    @abstractmethod
    def alive(self) -> bool: ...

    @abstractmethod
    def interrupt(self) -> None: ...

    @abstractmethod
    def hard_kill(self) -> None: ...

    @abstractmethod
    def oom_killed(self) -> bool: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Backend(ABC):
    name: str

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """Whether this backend can run here, and why (for the run log)."""

    @abstractmethod
    def start(self, spec: SandboxSpec) -> Sandbox:
        """Start a sandbox whose kernel answers; raise SandboxError otherwise."""

    def describe(self) -> dict:
        """What run.json records about the backend (the Docker backend adds its image)."""
        ok, why = self.available()
        return {"name": self.name, "available": ok, "detail": why}

    @abstractmethod
    def collect_stale(self) -> int:
        """Remove leftovers (processes, cgroups, socket dirs) of runs that died; return how many."""
