"""A worker node's pre-flight: can it run this run's instances exactly as the driver would?

Before an executor places work on a machine it compares the machine's fingerprint with the
driver's: the code (a hash of the harness's sources), the sandbox backend (usable here), the
kernel environment (the Docker image id, or the library versions of the local venv) and the
inputs (sha256 of every input file the run's instances name). A node that differs gets no
work, and the run log says why. The pre-flight also collects sandboxes and workspaces left
behind by crashed runs on that node.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.core.fileio import sha256_file
from runner.core.paths import PROJECT_ROOT
from runner.run.environment import library_versions
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Backend

# What the harness runs with: a node whose copy differs would score or sandbox differently.
CODE_DIRS = ("runner", "validation", "braintools", "eegtools", "reference_scripts", "reference_plans", "kernel_image")
CODE_SUFFIXES = (".py", ".json", ".txt", ".md", ".toml", ".yaml", ".yml", "Dockerfile")
SHOWN = 3  # differing inputs named in the reason


@dataclass(frozen=True)
class Fingerprint:
    """What must be equal on the driver and a node."""

    code: str
    kernel: dict[str, str]
    inputs: dict[str, str]  # input path -> sha256 (None-free: missing files are "missing")


@dataclass
class NodeCheck:
    """One node's pre-flight result; `problems` empty means it may take work."""

    node: str
    problems: list[str] = field(default_factory=list)
    stale_collected: int = 0

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def code_hash(root: Path = PROJECT_ROOT) -> str:
    """sha256 over the harness's source files (paths and contents, in path order)."""
    digest = hashlib.sha256()
    for folder in CODE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.name.endswith(CODE_SUFFIXES) and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()


def input_hashes(data_root: Path, paths: Iterable[str]) -> dict[str, str]:
    """sha256 of each input under `data_root`; "missing" for an absent file."""
    hashes: dict[str, str] = {}
    for rel in sorted(set(paths)):
        path = data_root / rel
        hashes[rel] = sha256_file(path) if path.is_file() else "missing"
    return hashes


def kernel_fingerprint(described: Mapping[str, Any]) -> dict[str, str]:
    """The sandbox backend's name and what its kernels run, from the backend's `describe()`:
    the image id for Docker, the installed library versions for the local venv."""
    if "image_id" in described:
        return {"backend": str(described["name"]), "image_id": str(described["image_id"])}
    return {"backend": str(described["name"]), **library_versions()}


def fingerprint(described: Mapping[str, Any], data_root: Path, inputs: Iterable[str]) -> Fingerprint:
    """This machine's fingerprint for a run whose backend describes itself as `described`."""
    return Fingerprint(code=code_hash(), kernel=kernel_fingerprint(described), inputs=input_hashes(data_root, inputs))


def check_node(node: str, backend: Backend, needs_sandbox: bool, data_root: Path, expected: Fingerprint) -> NodeCheck:
    """Compare this machine with the driver's fingerprint; collect stale sandboxes. The
    backend is asked once (for Docker, one daemon query)."""
    check = NodeCheck(node=node)
    described = backend.describe()
    if needs_sandbox and not described["available"]:
        check.problems.append(f"sandbox backend {backend.name} cannot run here: {described['detail']}")
    if described["available"]:
        check.stale_collected = backend.collect_stale() + workspaces.collect_stale()
    here = fingerprint(described, data_root, expected.inputs)
    if here.code != expected.code:
        check.problems.append(f"code differs from the driver's (sources hash {here.code[:12]} vs {expected.code[:12]}): "
                              "check out the same revision on every node")
    kernel = sorted(k for k in set(here.kernel) | set(expected.kernel) if here.kernel.get(k) != expected.kernel.get(k))
    if kernel:
        shown = ", ".join(f"{k} {here.kernel.get(k)} vs {expected.kernel.get(k)}" for k in kernel[:SHOWN])
        check.problems.append(f"kernel environment differs: {shown}")
    inputs = [rel for rel, sha in expected.inputs.items() if here.inputs.get(rel) != sha]
    if inputs:
        shown = ", ".join(f"{rel} ({here.inputs.get(rel, 'missing')[:12]})" for rel in inputs[:SHOWN])
        more = f" and {len(inputs) - SHOWN} more" if len(inputs) > SHOWN else ""
        check.problems.append(f"{len(inputs)} input file(s) under {data_root} differ from the driver's: {shown}{more} "
                              "(run `make data` on the node, or share one data folder with EEGBENCH_DATA)")
    return check
