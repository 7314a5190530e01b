"""Running a set of instances: resume, progress, warm sandboxes, and a clean stop.

The unit of work is one epoch of one instance (records.EpochInstance, an Instance, so every
executor carries it unchanged), named by its entry key: `<case_id>` for epoch 1,
`<case_id>@<k>` after. Epoch 1 of every instance runs first, then epoch 2, ..., so a stopped
run holds whole epochs; resume runs the missing (case, epoch) pairs. Sandboxes, scratch
directories, the warm pool and the controller log are per entry key: two epochs of one case
never share a workspace.

The scheduler is the one place that starts and tears down each instance's sandbox and model
session, so a Ctrl-C, a SIGTERM or a crash of one instance never leaves a kernel behind or a
half-written result. Where the instances run is the executor's business
(runner/run/executors); what a model does in one is the paradigm's (runner/paradigms).
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import FrameType, TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from runner.core.config import RunConfig
from runner.core.transcript import InfraEvent
from runner.paradigms.loop import InstanceOutcome
from runner.run.attempt import Attempt
from runner.run.bundle import Bundle, WorkerSpec
from runner.run.executors.base import Executor
from runner.run.instance import InstanceParts, InstanceRunner
from runner.run.preflight import Fingerprint, fingerprint
from runner.run.records import (
    EpochInstance,
    ResultRecord,
    TranscriptRecord,
    epoch_of,
    key_of,
    plain_instance,
    token_totals,
)
from runner.run.store import RunStore
from runner.sandbox.procfs import start_time
from runner.scoring.scorer import Scorer
from validation.instance import Instance
from validation.scoring import InstanceScore

log = logging.getLogger(__name__)


class Interrupted(Exception):
    """The run was stopped by Ctrl-C or SIGTERM; finished instances are kept."""


@dataclass
class Tally:
    """The progress line's numbers."""

    total: int
    done: int = 0
    infra: int = 0
    running: int = 0
    scores: list[float] = field(default_factory=list)

    def line(self) -> str:
        """done, infrastructure errors, running, mean score."""
        mean = f"{sum(self.scores) / len(self.scores):.1f}" if self.scores else "-"
        return (
            f"done {self.done}/{self.total}  infra errors {self.infra}  "
            f"running {self.running}  mean score {mean}"
        )


@dataclass(frozen=True)
class RunParts:
    """What a run is made of, built by `eegbench eval` from the RunConfig: what this
    process runs instances with, where they run, and how they are scored."""

    instance: InstanceParts
    executor: Executor
    scorer: Scorer


class Scheduler:
    """Runs instances through the executor; the executor's `Job`."""

    def __init__(self, config: RunConfig, store: RunStore, parts: RunParts, console: Console | None = None,
                 variables: Mapping[str, str] | None = None) -> None:
        """`variables`: the endpoint's environment variables, for workers on other machines."""
        self.config = config
        self.store = store
        self.parts = parts
        self.console = console or Console(stderr=True)
        self.variables = dict(variables or {})
        self.runner = InstanceRunner(config, store.run_id, parts.instance, warm_slots=config.jobs)
        self.stop = self.runner.stop
        self._tally = Tally(total=0)
        self._refresh: Callable[[], None] = _nothing

    # -- the run --------------------------------------------------------------------------

    def run(self, instances: list[Instance]) -> list[ResultRecord]:
        """Run every epoch of every instance not finished yet; write summary.json however the
        run ends."""
        finished = self.store.finished()
        units = work_units(instances, self.config.epochs)
        pending = [u for u in units if u.key not in finished]
        done = [finished[u.key] for u in units if u.key in finished]
        if finished:
            self.console.print(f"resuming {self.store.run_id}: {len(done)} finished, {len(pending)} to run")
        self._say_later_epochs(finished)
        self._tally = Tally(total=len(units), done=len(done), scores=[r.score for r in done if r.score is not None])
        try:
            with _signals_raise_interrupt():
                self._run_pending(pending)
        finally:
            self.runner.remove_scratch()  # first: the summary's write may find the disk full
            self.store.write_summary()
        return self.store.results()

    def _say_later_epochs(self, finished: dict[str, ResultRecord]) -> None:
        """A rerun with fewer epochs than the run holds runs none of the later ones: say so."""
        later = max((r.epoch for r in finished.values()), default=1)
        if later > self.config.epochs:
            self.console.print(f"run {self.store.run_id} holds epochs up to {later}; --epochs {self.config.epochs} "
                               "runs no new epoch (the later ones are kept)")

    def _run_pending(self, pending: list[EpochInstance]) -> None:
        progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("{task.fields[status]}"),
            console=self.console, transient=False,
        )
        tally = self._tally
        try:
            with progress:
                bar: TaskID = progress.add_task(self.store.run_id, total=tally.total, completed=tally.done,
                                                status=tally.line())
                self._refresh = partial(_update, progress, bar, tally)
                self.parts.executor.run(list(pending), self.config.jobs, self, self.stop)
        except KeyboardInterrupt as exc:
            self.runner.close_active()  # sandboxes a worker took from the pool meanwhile
            what = "instances" if self.config.epochs == 1 else "instance epochs"
            raise Interrupted(f"stopped: {tally.done} of {tally.total} {what} finished and kept") from exc
        finally:
            self.runner.close_pool()

    # -- Job: the executor's callbacks ---------------------------------------------------------

    def progress(self, running: int, upcoming: list[Instance]) -> None:
        """Refresh the bar; warm the sandboxes of the next instances."""
        self._tally.running = running
        for instance in upcoming:
            self.runner.prefetch(instance)
        self._refresh()

    def result(self, record: ResultRecord | None) -> None:
        """Count a finished instance."""
        if record is None:
            return
        self._tally.done += record.status != "infra_error"
        self._tally.infra += record.status == "infra_error"
        if record.score is not None:
            self._tally.scores.append(record.score)

    def abort(self) -> None:
        """Unblock running work: close its sandboxes, the model and the warm pool."""
        self.runner.abort()

    # -- one instance ---------------------------------------------------------------------

    def work(self, instance: Instance) -> Attempt | None:
        """One epoch of one instance in this process, its audit trail streaming into the store."""
        return self.runner.work(instance, self.store)

    def finish(self, attempt: Attempt) -> ResultRecord:
        """Score the attempt, write its audit record, then append its results line."""
        key, epoch, outcome = key_of(attempt.instance), epoch_of(attempt.instance), attempt.outcome
        instance = plain_instance(attempt.instance)
        score = self._score(attempt) if outcome.status != "infra_error" else None
        transcript = TranscriptRecord(
            case_id=instance.case_id, epoch=epoch, status=outcome.status, error=outcome.error,
            messages=outcome.messages, turns=outcome.turns, events=attempt.events, paradigm=self.parts.instance.paradigm.name,
            started_at=attempt.started_at, controller_pid=os.getpid(), controller_start=start_time(os.getpid()),
        )
        self.store.write_instance(key, instance, transcript, outcome.report, attempt.artifacts, score)
        record = _result_record(instance, epoch, outcome, score, attempt.duration_s)
        self.store.append_result(record)
        return record

    def record(self, bundle: Bundle) -> ResultRecord:
        """An attempt made on another machine: write its audit trail as it would have
        streamed here, then score and record it."""
        self.store.begin_instance(bundle.key, bundle.paradigm)
        self.store.write_retained(bundle.key, bundle.log_text, bundle.files)
        return self.finish(bundle.attempt)

    def lost(self, instance: Instance, reason: str, duration_s: float) -> ResultRecord:
        """The worker running `instance` was lost (a node or actor died): infra_error,
        retried on resume."""
        key = key_of(instance)
        self.store.begin_instance(key, self.parts.instance.paradigm.name)
        event = InfraEvent(kind="worker_lost", detail=reason)
        self.store.append_event(key, event)
        log.warning("%s: %s", key, reason)
        outcome = InstanceOutcome("infra_error", None, [], [], reason)
        return self.finish(Attempt(instance, outcome, [], duration_s, [event], time.time() - duration_s))

    def worker_spec(self) -> WorkerSpec:
        """What a worker on another machine needs to build its own InstanceRunner."""
        return WorkerSpec(config=self.config, run_id=self.store.run_id, data_root=self.parts.instance.data_root,
                          variables=self.variables)

    def fingerprint(self, instances: list[Instance]) -> Fingerprint:
        """This machine's fingerprint for `instances`: what every remote node must match."""
        inputs = sorted({p for i in instances for p in i.agent_input.input_paths()})
        parts = self.parts.instance
        return fingerprint(parts.backend.describe(), parts.data_root, inputs)

    def _score(self, attempt: Attempt) -> InstanceScore:
        manifest = [a.as_manifest() for a in attempt.artifacts]
        artifacts_dir = self.store.artifacts_dir(key_of(attempt.instance))
        instance = plain_instance(attempt.instance)
        return self.parts.scorer.score(instance, attempt.outcome.report, artifacts_dir, manifest)

    @property
    def sandbox_waits(self) -> dict[str, float]:
        """Entry key -> seconds its run waited for a sandbox (threads executor)."""
        return self.runner.sandbox_waits


def work_units(instances: list[Instance], epochs: int) -> list[EpochInstance]:
    """Every epoch of every instance, epoch-major: all of epoch 1 first, then epoch 2, ..."""
    return [EpochInstance.of(instance, epoch) for epoch in range(1, epochs + 1) for instance in instances]


def _result_record(instance: Instance, epoch: int, outcome: InstanceOutcome, score: InstanceScore | None,
                   duration_s: float) -> ResultRecord:
    return ResultRecord(
        case_id=instance.case_id,
        epoch=epoch,
        task_id=instance.task_id,
        bench_subset=instance.meta_info.bench_subset,
        difficulty=instance.meta_info.difficulty,
        status=outcome.status,
        score=score.score if score is not None else None,
        rounds=len(outcome.turns),
        **token_totals(outcome.turns),
        duration_s=round(duration_s, 3),
        error=outcome.error,
        unscored=score.unscored if score is not None else [],
        violations=len(score.violations) if score is not None else 0,
    )


def _update(progress: Progress, bar: TaskID, tally: Tally) -> None:
    progress.update(bar, completed=tally.done, status=tally.line())


def _nothing() -> None:
    return None


class _signals_raise_interrupt:
    """SIGINT and SIGTERM both take the clean-stop path (KeyboardInterrupt). SIGINT is set
    explicitly: a run started in the background of a non-interactive shell (`make eval &`,
    nohup) inherits SIGINT ignored, and Python then installs no Ctrl-C handler of its own."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> _signals_raise_interrupt:
        self._previous: dict[int, signal.Handlers] = {}
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._raise)  # type: ignore[assignment]
        return self

    @staticmethod
    def _raise(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
