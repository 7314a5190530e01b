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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import FrameType, TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from runner.config import RunConfig
from runner.log import instance_log
from runner.models.base import Model
from runner.paradigms.base import Episode, Paradigm
from runner.paradigms.loop import InstanceOutcome
from runner.run.executors.base import Attempt, Executor
from runner.run.records import EpochInstance, ResultRecord, TranscriptRecord, epoch_of, key_of, plain_instance
from runner.run.store import RunStore
from runner.run.warm_pool import WarmPool
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Backend, Sandbox, SandboxError, SandboxSpec
from runner.sandbox.procfs import start_time
from runner.scoring.scorer import Scorer
from runner.transcript import InfraEvent
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
    """What a run is made of, built by `eegbench eval` from the RunConfig."""

    model: Model
    paradigm: Paradigm
    backend: Backend
    executor: Executor
    scorer: Scorer
    data_root: Path


class Scheduler:
    """Runs instances through the executor; the executor's `Job`."""

    def __init__(self, config: RunConfig, store: RunStore, parts: RunParts, console: Console | None = None) -> None:
        self.config = config
        self.store = store
        self.parts = parts
        self.console = console or Console(stderr=True)
        self.stop = threading.Event()
        self._active: dict[str, Sandbox] = {}  # by entry key
        self._lock = threading.Lock()
        # --warm-pool: the next instances' sandboxes start while the current ones run.
        warm = config.warm_pool and parts.paradigm.needs_sandbox
        self.pool = WarmPool(parts.backend.start, config.jobs) if warm else None
        self._prefetched: set[str] = set()  # entry keys
        self.sandbox_waits: dict[str, float] = {}  # entry key -> seconds its run waited for a sandbox
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
            workspaces.remove_tree(self._scratch_dir())  # first: the summary's write may find the disk full
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
            self._close_active()  # sandboxes a worker took from the pool meanwhile
            what = "instances" if self.config.epochs == 1 else "instance epochs"
            raise Interrupted(f"stopped: {tally.done} of {tally.total} {what} finished and kept") from exc
        finally:
            self._close_pool()

    # -- Job: the executor's callbacks ---------------------------------------------------------

    def progress(self, running: int, upcoming: list[Instance]) -> None:
        """Refresh the bar; warm the sandboxes of the next instances."""
        self._tally.running = running
        if self.pool is not None:
            for instance in upcoming:
                self._prefetch(instance)
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
        self.stop.set()
        self._close_active()
        self.parts.model.close()  # unblocks sessions waiting on a model server
        self._close_pool()

    # -- one instance ---------------------------------------------------------------------

    def work(self, instance: Instance) -> Attempt | None:
        """Sandbox, session, the paradigm's loop, teardown and retained artifacts of one
        epoch of one instance (an EpochInstance; a plain Instance is its epoch 1)."""
        key = key_of(instance)
        started, began = time.time(), time.monotonic()
        self.store.begin_instance(key, self.parts.paradigm.name)
        events: list[InfraEvent] = []

        def on_event(event: InfraEvent) -> None:
            events.append(event)
            self.store.append_event(key, event)
            log.warning("%s: %s: %s", key, event.kind, event.detail)

        with self._lock:
            self._prefetched.discard(key)
        workspace = self._scratch_path(key)
        with instance_log(self.store.log_path(key), key):
            log.info("%s: started (%s, %s)", key, self.parts.paradigm.name, self.parts.backend.name)
            try:
                outcome = self._attempt(instance, workspace, on_event)
                artifacts = self.store.retain_artifacts(key, workspace)
            finally:
                workspaces.remove(workspace)
            log.info("%s: %s after %d turn(s)", key, outcome.status, len(outcome.turns))
        if self.stop.is_set():
            return None  # interrupted mid-instance: record nothing, it reruns on resume
        return Attempt(instance, outcome, artifacts, time.monotonic() - began, events, started)

    def finish(self, attempt: Attempt) -> ResultRecord:
        """Score the attempt, write its audit record, then append its results line."""
        key, epoch, outcome = key_of(attempt.instance), epoch_of(attempt.instance), attempt.outcome
        instance = plain_instance(attempt.instance)
        score = self._score(attempt) if outcome.status != "infra_error" else None
        transcript = TranscriptRecord(
            case_id=instance.case_id, epoch=epoch, status=outcome.status, error=outcome.error,
            messages=outcome.messages, turns=outcome.turns, events=attempt.events, paradigm=self.parts.paradigm.name,
            started_at=attempt.started_at, controller_pid=os.getpid(), controller_start=start_time(os.getpid()),
        )
        self.store.write_instance(key, instance, transcript, outcome.report, attempt.artifacts, score)
        record = _result_record(instance, epoch, outcome, score, attempt.duration_s)
        self.store.append_result(record)
        return record

    def _score(self, attempt: Attempt) -> InstanceScore:
        manifest = [a.as_manifest() for a in attempt.artifacts]
        artifacts_dir = self.store.artifacts_dir(key_of(attempt.instance))
        instance = plain_instance(attempt.instance)
        return self.parts.scorer.score(instance, attempt.outcome.report, artifacts_dir, manifest)

    def _attempt(self, unit: Instance, workspace: Path,
                 on_event: Callable[[InfraEvent], None]) -> InstanceOutcome:
        key, paradigm = key_of(unit), self.parts.paradigm
        # The model sees the unit (it may reply per epoch); the paradigm, the plain instance.
        episode = Episode(instance=plain_instance(unit), session=self.parts.model.session(unit),
                          controls=self.config.controls, data_root=self.parts.data_root,
                          should_stop=self.stop.is_set, on_turn=lambda turn: self.store.append_turn(key, turn),
                          on_event=on_event)
        if not paradigm.needs_sandbox:
            workspaces.create(workspace, 0)
            return paradigm.run(episode)
        try:
            sandbox = self._sandbox(unit, workspace)
        except SandboxError as exc:
            episode.on_event(InfraEvent(kind="sandbox_failure", detail=f"start failed: {exc}"))
            return InstanceOutcome("infra_error", None, [], [], f"sandbox start failed: {exc}")
        with self._lock:
            self._active[key] = sandbox
        if self.stop.is_set():  # stopped while it started: the teardown may have run already
            sandbox.close()
        try:
            return paradigm.run(replace(episode, sandbox=sandbox))
        finally:
            with self._lock:
                self._active.pop(key, None)
            sandbox.close()

    def _spec(self, unit: Instance, workspace: Path) -> SandboxSpec:
        # The spec's case id is the entry key: the warm pool holds sandboxes by it, and
        # backends label sandboxes with it.
        return SandboxSpec(
            run_id=self.store.run_id,
            case_id=key_of(unit),
            data_root=self.parts.data_root,
            inputs=tuple(unit.agent_input.input_paths()),
            workspace=workspace,
            limits=self.config.sandbox_limits(),
            libraries=self.parts.paradigm.libraries,
        )

    def _prefetch(self, unit: Instance) -> None:
        key = key_of(unit)
        with self._lock:
            if key in self._prefetched or self.stop.is_set() or self.pool is None:
                return
            self._prefetched.add(key)
        try:
            self.pool.prefetch(self._spec(unit, self._scratch(key)))
        except SandboxError as exc:  # the workspace: the instance's own start will say why
            log.warning("%s: no warm sandbox: %s", key, exc)

    def _sandbox(self, unit: Instance, workspace: Path) -> Sandbox:
        """The entry's sandbox: the warm one if prefetched, else started now."""
        key, began = key_of(unit), time.monotonic()
        sandbox = None
        if self.pool is not None:
            sandbox, _ = self.pool.take(key)
        if sandbox is None:
            sandbox = self.parts.backend.start(self._spec(unit, self._scratch(key)))
        self.sandbox_waits[key] = time.monotonic() - began
        log.info("%s: sandbox ready after %.2f s", key, self.sandbox_waits[key])
        return sandbox

    def _scratch_path(self, key: str) -> Path:
        # The pid keeps two controllers that reuse a run name from sharing a workspace; the
        # entry key keeps two epochs of one case from sharing one.
        return self._scratch_dir() / key

    def _scratch_dir(self) -> Path:
        return workspaces.SCRATCH_ROOT / f"{os.getpid()}-{self.store.run_id}"

    def _scratch(self, key: str) -> Path:
        """A fresh workspace of --workspace-mb for the entry; SandboxError when it cannot be made."""
        path = self._scratch_path(key)
        workspaces.create(path, self.config.resources.workspace_mb)
        return path

    def _close_pool(self) -> None:
        """Tear down sandboxes the pool started that no instance took, and their workspaces."""
        if self.pool is None:
            return
        self.pool.close()
        with self._lock:
            unused, self._prefetched = set(self._prefetched), set()
        for key in unused:
            workspaces.remove(self._scratch_path(key))

    def _close_active(self) -> None:
        with self._lock:
            boxes = list(self._active.values())
        for box in boxes:
            try:
                box.close()
            except Exception as exc:  # noqa: BLE001 - teardown must go on for the others
                log.error("sandbox teardown of %s failed: %s", box.spec.case_id, exc)


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
        prompt_tokens=sum(t.usage.prompt_tokens or 0 for t in outcome.turns),
        completion_tokens=sum(t.usage.completion_tokens or 0 for t in outcome.turns),
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
