"""The executor contract: how a run's instances are spread over workers.

The scheduler is the `Job`. In this process, `work` runs one instance (sandbox start, the
loop, teardown, the artifacts it left) and returns an `Attempt`; `finish` scores it and
records it in the run directory. On other machines, a worker builds its own InstanceRunner
from `worker_spec()` and returns a Bundle (runner/run/bundle.py), which `record` writes and
scores on the driver; `lost` records an instance whose worker died. Scoring, results.jsonl
and resume stay with the driver. An executor decides where instances run and calls back
`progress` and `result` from the driving thread. A new executor is one module with an
`Executor` subclass and one `register` line in executors/__init__.py.
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Protocol

from runner.run.attempt import Attempt
from runner.run.records import ResultRecord
from validation.instance import Instance

if TYPE_CHECKING:
    from runner.run.bundle import Bundle, WorkerSpec
    from runner.run.preflight import Fingerprint


class Job(Protocol):
    """The scheduler's side of an executor."""

    def work(self, instance: Instance) -> Attempt | None:
        """Run one instance; None when the run was stopped meanwhile (nothing recorded)."""

    def finish(self, attempt: Attempt) -> ResultRecord:
        """Score and record a finished attempt."""

    def record(self, bundle: Bundle) -> ResultRecord:
        """Write, score and record an attempt a remote worker made."""

    def lost(self, instance: Instance, reason: str, duration_s: float) -> ResultRecord:
        """Record `instance` as infra_error: its worker died mid-instance."""

    def worker_spec(self) -> WorkerSpec:
        """What a remote worker builds its parts from."""

    def fingerprint(self, instances: list[Instance]) -> Fingerprint:
        """The driver's code, kernel environment and input hashes for `instances`, which a
        remote node must match to take work (runner/run/preflight.py)."""

    def progress(self, running: int, upcoming: list[Instance]) -> None:
        """How many run now, and the next ones to start (for the warm pool and the bar)."""

    def result(self, record: ResultRecord | None) -> None:
        """One instance is done (None: stopped before it finished)."""

    def abort(self) -> None:
        """The run is being stopped: unblock running work (close sandboxes and the model)."""


class Executor(ABC):
    """Runs `job.work` then `job.finish` for every instance, at most `jobs` at a time."""

    name: str

    @abstractmethod
    def run(self, instances: list[Instance], jobs: int, job: Job, stop: threading.Event) -> None:
        """Return when every instance is done. On KeyboardInterrupt, or an error a job raised
        (ModelSetupError stops the run), set `stop`, call `job.abort()`, wait for running work
        to return, and re-raise."""
