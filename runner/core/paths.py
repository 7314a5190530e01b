"""Where things are, and the environment variables eegbench reads: read once, passed down.

`Environment.from_os()` is called by the command-line entry point (and, on a Ray node, by the
worker, for that node's own data folder, endpoint key and RAY_ADDRESS) and handed to whatever
needs a path or a variable, so no module reads its settings from `os.environ` or computes the
project root on its own, and a test can build an `Environment` pointing anywhere. What still
touches `os.environ` elsewhere sets it up for a child process, not to read a setting: one
thread per numerical library (benchmark/numerics.py, truth/pool.py), the controller's mark
on its workers (run/orphans.py), the llama.cpp server's token (models/local_server.py) and
the sandbox's own environment (sandbox/).

Variables: EEGBENCH_RUNS (runs directory), EEGBENCH_DATA (recordings cache),
EEGBENCH_LOCAL_INSTANCES (instances built from local datasets), and the model-endpoint
variables (EEGBENCH_BASE_URL, EEGBENCH_API_KEY, EEGBENCH_<ROLE>_..., OPENAI_...), which stay
in `variables` and are never written to a run directory.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from validation.errors import UserError

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def check_writable(path: Path, source: str, variable: str) -> None:
    """UserError naming `source`=path, the directory at fault and the fix, when this user could
    not create or write `path`: a file in its way, or a directory it may not write (someone
    else's). The nearest existing directory decides."""
    blocker = next((p for p in (path, *path.parents) if p.exists()), None)
    if blocker is None:
        return
    if not blocker.is_dir():
        raise UserError(f"{source}={path}: {blocker} is not a directory")
    if not os.access(blocker, os.W_OK | os.X_OK):
        raise UserError(f"{source}={path}: {blocker} is not writable by uid {os.geteuid()} (it belongs to uid "
                        f"{blocker.stat().st_uid}): set {variable} to a directory of yours, or make it writable")


@dataclass(frozen=True)
class Paths:
    """The folders a command works with."""

    project_root: Path = PROJECT_ROOT
    runs_dir: Path = PROJECT_ROOT / "runs"
    data_root: Path = PROJECT_ROOT / "data"
    local_instances: Path = PROJECT_ROOT / "instances" / "local"

    @property
    def instances_dir(self) -> Path:
        """The committed benchmark: task specs, manifests and instance files."""
        return self.project_root / "instances"

    @property
    def cache_dir(self) -> Path:
        """Caches of the project (truth results, scoring replies, wheels); never in a sandbox."""
        return self.project_root / ".cache"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], project_root: Path = PROJECT_ROOT) -> Paths:
        """Defaults under the project root, moved by EEGBENCH_RUNS / _DATA / _LOCAL_INSTANCES."""
        def moved(name: str, default: Path) -> Path:
            value = environ.get(name)
            return Path(value).expanduser().resolve() if value else default

        return cls(
            project_root=project_root,
            runs_dir=moved("EEGBENCH_RUNS", project_root / "runs"),
            data_root=moved("EEGBENCH_DATA", project_root / "data"),
            local_instances=moved("EEGBENCH_LOCAL_INSTANCES", project_root / "instances" / "local"),
        )


@dataclass(frozen=True)
class Environment:
    """Paths plus a snapshot of the environment variables (endpoint URLs and keys)."""

    paths: Paths = field(default_factory=Paths)
    variables: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_os(cls) -> Environment:
        """The process environment, read once."""
        variables = dict(os.environ)
        return cls(paths=Paths.from_environ(variables), variables=variables)

    def get(self, name: str) -> str | None:
        """One variable, None when unset or empty."""
        return self.variables.get(name) or None
