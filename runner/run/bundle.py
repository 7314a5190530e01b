"""What a worker on another machine sends back for one instance, and what it starts from.

A remote worker cannot write the run directory, which lives on the driver. It records an
instance into a `BundleRecorder` (the Recorder of runner/run/instance.py) and returns a
`Bundle`: the attempt (outcome, turns, events), its controller.log and the bytes of the
artifacts it retained. The driver writes the bundle where a thread would have written as it
went (`Scheduler.record`), then scores it, so both executors leave the same run directory.
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.core.config import RunConfig
from runner.core.transcript import InfraEvent, Turn
from runner.run.artifacts import retain_artifacts
from runner.run.attempt import Attempt
from runner.run.records import ArtifactEntry


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a remote worker needs to build its own model, backend and paradigm."""

    config: RunConfig
    run_id: str
    data_root: Path
    # The endpoint's URLs and key-file paths (runner/models/credentials.shareable), never a
    # key: each worker reads the key from its own node's environment.
    variables: Mapping[str, str] = field(default_factory=dict)
    # The run's endpoint limiter when every worker must share one (runner/models/ratelimit.py's
    # Limiter; on Ray a proxy to one actor), else None: each worker's model paces itself.
    limiter: Any = None


@dataclass
class Bundle:
    """One instance's attempt with its audit files, as a worker returns it."""

    key: str
    paradigm: str
    attempt: Attempt
    log_text: str
    files: list[tuple[str, bytes]]  # retained artifacts: path under artifacts/, content


class BundleRecorder:
    """A Recorder that keeps one instance's audit trail in memory (turns and events are in
    the attempt; the stream file is only for watching a local run)."""

    def __init__(self, scratch: Path) -> None:
        scratch.mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix="bundle-", dir=scratch))
        self.files: list[tuple[str, bytes]] = []

    def begin_instance(self, key: str, paradigm: str) -> None:
        """Nothing to write: the driver begins the entry when the bundle arrives."""

    def append_turn(self, key: str, turn: Turn) -> None:
        """The attempt carries the turns."""

    def append_event(self, key: str, event: InfraEvent) -> None:
        """The attempt carries the events."""

    def log_path(self, key: str) -> Path:
        """A worker-local controller.log, read back by `bundle`."""
        return self._dir / "controller.log"

    def retain_artifacts(self, key: str, workspace: Path) -> list[ArtifactEntry]:
        """Copy file_check/ as a local run would, then hold the bytes for the driver."""
        copied = self._dir / "artifacts"
        manifest = retain_artifacts(workspace, copied)
        self.files = [(p.relative_to(copied).as_posix(), p.read_bytes())
                      for p in sorted(copied.rglob("*")) if p.is_file() and not p.is_symlink()]
        return manifest

    def bundle(self, key: str, paradigm: str, attempt: Attempt) -> Bundle:
        """The finished instance; the recorder's files are removed."""
        log = self.log_path(key)
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        return Bundle(key=key, paradigm=paradigm, attempt=attempt, log_text=text, files=self.files)

    def remove(self) -> None:
        """Its temporary files."""
        shutil.rmtree(self._dir, ignore_errors=True)
