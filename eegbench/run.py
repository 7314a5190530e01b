"""The eegbench run behind one Inspect task: a run directory like `eegbench eval`'s, opened
at the task's first sample (when Inspect's model is known) and filled one sample at a time.

Each sample is one epoch of one instance (Inspect's `--epochs` are eegbench's epochs). It runs
in a worker thread, at most `jobs` at once, through the scheduler's own `work` and `finish`:
the same sandbox, loop, controls, audit trail and scorer as `eegbench eval`, so `eegbench logs`,
`show`, `report` and `verify` read the run. A task given the run name of an earlier one resumes
it: an entry already finished there is not run again (an infra_error one is).
"""
from __future__ import annotations

import atexit
import contextlib
import threading
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from rich.console import Console

from eegbench.model import InspectModel
from runner.commands.evaluate import instance_record, parts_around, prepare_sandbox
from runner.core.config import RunConfig, default_run_id
from runner.core.paths import Environment
from runner.run.records import EpochInstance, ResultRecord
from runner.run.scheduler import Scheduler
from runner.run.store import RunStore
from validation.errors import InfrastructureError
from validation.instance import Instance


@dataclass(frozen=True)
class Selection:
    """What a task runs: every instance loaded, the ones selected, and the task's arguments."""

    every: list[Instance]
    instances: list[Instance]
    arguments: dict[str, Any]


class InspectRun:
    """One eegbench run behind an Inspect task."""

    def __init__(self, config: RunConfig, env: Environment, selection: Selection, *, named: bool) -> None:
        """`named` False: the run is named at its opening, after Inspect's model (config.run_id
        is a placeholder)."""
        self.config = config
        self.named = named
        self.env = env
        self.selection = selection
        self.by_case = {i.case_id: i for i in selection.instances}
        self.scheduler: Scheduler | None = None
        self._opening = anyio.Lock()
        self._slots = anyio.CapacityLimiter(config.jobs)
        self._epochs = threading.Lock()
        self._owned = contextlib.ExitStack()

    async def run(self, case_id: str, epoch: int, model: str) -> ResultRecord:
        """Run one epoch of one instance (or take its finished entry); InfrastructureError
        when it ended as infra_error."""
        async with self._opening:
            if self.scheduler is None:
                self.scheduler = await anyio.to_thread.run_sync(self._open, model)
        unit = EpochInstance.of(self.by_case[case_id], epoch)
        record = await anyio.to_thread.run_sync(self._run, self.scheduler, unit, limiter=self._slots)
        if record.status == "infra_error":  # a sample error: Inspect's --retry-on-error runs it again
            raise InfrastructureError(f"{unit.key}: infra_error: {record.error}")
        return record

    @property
    def store(self) -> RunStore:
        """The run directory (once the first sample opened it)."""
        if self.scheduler is None:
            raise RuntimeError("the eegbench run is not open yet")
        return self.scheduler.store

    def _open(self, model: str) -> Scheduler:
        name = f"inspect:{model}"
        run_id = self.config.run_id if self.named else "inspect-" + default_run_id(model, self.config.paradigm)
        config = self.config.model_copy(update={"model": name, "run_id": run_id})
        console = Console(quiet=True)  # Inspect owns the terminal; run.json records the choices
        root = self.env.paths.data_root
        sandbox = prepare_sandbox(config, self.env, console)
        parts, environment = self._owned.enter_context(
            parts_around(InspectModel(model), sandbox, config, self.env, root, console, evaluated=None))
        store = RunStore(self.env.paths.runs_dir / run_id)
        store.open(config, {**environment, **instance_record(self.env, self.selection.every, self.selection.instances),
                            "inspect_task_args": self.selection.arguments})
        atexit.register(self.close)
        return Scheduler(config, store, parts, console)

    def _run(self, scheduler: Scheduler, unit: EpochInstance) -> ResultRecord:
        finished = scheduler.store.finished().get(unit.key)
        if finished is not None and finished.status != "infra_error":
            return finished
        with self._epochs:
            scheduler.store.record_epochs(unit.epoch)
        attempt = scheduler.work(unit)
        if attempt is None:  # the run is closing (the process is exiting): nothing recorded
            raise InfrastructureError(f"{unit.key}: the run was stopped")
        record = scheduler.finish(attempt)
        scheduler.store.write_summary()
        return record

    def close(self) -> None:
        """Stop running instances, remove the scratch space, write the summary, close the scorer."""
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            scheduler.abort()
            scheduler.runner.remove_scratch()
            scheduler.store.write_summary()
        self._owned.close()
