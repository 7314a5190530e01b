"""Running a set of instances: resume, progress, warm sandboxes, and a clean stop.

The scheduler is the one place that starts and tears down each instance's sandbox and model
session, so a Ctrl-C, a SIGTERM or a crash of one instance never leaves a kernel behind or a
half-written result. Where the instances run is the executor's business
(runner/run/executors); what a model does in one is the paradigm's (runner/paradigms).
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
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
from runner.run.records import ResultRecord, TranscriptRecord
from runner.run.store import RunStore
from runner.run.warm_pool import WarmPool
from runner.sandbox.base import Backend, Sandbox, SandboxError, SandboxSpec
from runner.sandbox.procfs import start_time
from runner.scoring.scorer import Scorer
from runner.transcript import InfraEvent
from validation.instance import Instance
from validation.scoring import InstanceScore

SCRATCH_ROOT = Path(tempfile.gettempdir()) / "eegbench-work"
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
        self._active: dict[str, Sandbox] = {}
        self._lock = threading.Lock()
        # --warm-pool: the next instances' sandboxes start while the current ones run.
        warm = config.warm_pool and parts.paradigm.needs_sandbox
        self.pool = WarmPool(parts.backend.start, config.jobs) if warm else None
        self._prefetched: set[str] = set()
        self.sandbox_waits: dict[str, float] = {}  # case id -> seconds its run waited for a sandbox
        self._tally = Tally(total=0)
        self._refresh: Callable[[], None] = _nothing

    # -- the run --------------------------------------------------------------------------

    def run(self, instances: list[Instance]) -> list[ResultRecord]:
        """Run what is not finished yet; write summary.json however the run ends."""
        finished = self.store.finished()
        pending = [i for i in instances if i.case_id not in finished]
        if finished:
            self.console.print(f"resuming {self.store.run_id}: {len(finished)} finished, {len(pending)} to run")
        self._tally = Tally(total=len(instances), done=len(instances) - len(pending),
                            scores=[r.score for r in finished.values() if r.score is not None])
        try:
            with _signals_raise_interrupt():
                self._run_pending(pending)
        finally:
            self.store.write_summary()
        return self.store.results()

    def _run_pending(self, pending: list[Instance]) -> None:
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
                self.parts.executor.run(pending, self.config.jobs, self, self.stop)
        except KeyboardInterrupt as exc:
            self._close_active()  # sandboxes a worker took from the pool meanwhile
            raise Interrupted(f"stopped: {tally.done} of {tally.total} instances finished and kept") from exc
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
        """Sandbox, session, the paradigm's loop, teardown and retained artifacts."""
        case_id = instance.case_id
        started, began = time.time(), time.monotonic()
        self.store.begin_instance(case_id, self.parts.paradigm.name)
        events: list[InfraEvent] = []

        def on_event(event: InfraEvent) -> None:
            events.append(event)
            self.store.append_event(case_id, event)
            log.warning("%s: %s: %s", case_id, event.kind, event.detail)

        with self._lock:
            warm = case_id in self._prefetched
            self._prefetched.discard(case_id)
        workspace = self._scratch_path(case_id) if warm else self._scratch(case_id)
        with instance_log(self.store.log_path(case_id), case_id):
            log.info("%s: started (%s, %s)", case_id, self.parts.paradigm.name, self.parts.backend.name)
            try:
                outcome = self._attempt(instance, workspace, on_event)
                artifacts = self.store.retain_artifacts(case_id, workspace)
            finally:
                shutil.rmtree(workspace, ignore_errors=True)
            log.info("%s: %s after %d turn(s)", case_id, outcome.status, len(outcome.turns))
        if self.stop.is_set():
            return None  # interrupted mid-instance: record nothing, it reruns on resume
        return Attempt(instance, outcome, artifacts, time.monotonic() - began, events, started)

    def finish(self, attempt: Attempt) -> ResultRecord:
        """Score the attempt, write its audit record, then append its results line."""
        instance, outcome = attempt.instance, attempt.outcome
        score = self._score(attempt) if outcome.status != "infra_error" else None
        transcript = TranscriptRecord(
            case_id=instance.case_id, status=outcome.status, error=outcome.error, messages=outcome.messages,
            turns=outcome.turns, events=attempt.events, paradigm=self.parts.paradigm.name,
            started_at=attempt.started_at, controller_pid=os.getpid(), controller_start=start_time(os.getpid()),
        )
        self.store.write_instance(instance, transcript, outcome.report, attempt.artifacts, score)
        record = _result_record(instance, outcome, score, attempt.duration_s)
        self.store.append_result(record)
        return record

    def _score(self, attempt: Attempt) -> InstanceScore:
        manifest = [a.as_manifest() for a in attempt.artifacts]
        artifacts_dir = self.store.artifacts_dir(attempt.instance.case_id)
        return self.parts.scorer.score(attempt.instance, attempt.outcome.report, artifacts_dir, manifest)

    def _attempt(self, instance: Instance, workspace: Path,
                 on_event: Callable[[InfraEvent], None]) -> InstanceOutcome:
        paradigm = self.parts.paradigm
        episode = Episode(instance=instance, session=self.parts.model.session(instance), controls=self.config.controls,
                          data_root=self.parts.data_root, should_stop=self.stop.is_set,
                          on_turn=lambda turn: self.store.append_turn(instance.case_id, turn),
                          on_event=on_event)
        if not paradigm.needs_sandbox:
            return paradigm.run(episode)
        try:
            sandbox = self._sandbox(instance, workspace)
        except SandboxError as exc:
            episode.on_event(InfraEvent(kind="sandbox_failure", detail=f"start failed: {exc}"))
            return InstanceOutcome("infra_error", None, [], [], f"sandbox start failed: {exc}")
        with self._lock:
            self._active[instance.case_id] = sandbox
        if self.stop.is_set():  # stopped while it started: the teardown may have run already
            sandbox.close()
        try:
            return paradigm.run(replace(episode, sandbox=sandbox))
        finally:
            with self._lock:
                self._active.pop(instance.case_id, None)
            sandbox.close()

    def _spec(self, instance: Instance, workspace: Path) -> SandboxSpec:
        return SandboxSpec(
            run_id=self.store.run_id,
            case_id=instance.case_id,
            data_root=self.parts.data_root,
            inputs=tuple(instance.agent_input.input_paths()),
            workspace=workspace,
            limits=self.config.sandbox_limits(),
            libraries=self.parts.paradigm.libraries,
        )

    def _prefetch(self, instance: Instance) -> None:
        with self._lock:
            if instance.case_id in self._prefetched or self.stop.is_set() or self.pool is None:
                return
            self._prefetched.add(instance.case_id)
        self.pool.prefetch(self._spec(instance, self._scratch(instance.case_id)))

    def _sandbox(self, instance: Instance, workspace: Path) -> Sandbox:
        """The instance's sandbox: the warm one if prefetched, else started now."""
        began = time.monotonic()
        sandbox = None
        if self.pool is not None:
            sandbox, _ = self.pool.take(instance.case_id)
        if sandbox is None:
            sandbox = self.parts.backend.start(self._spec(instance, workspace))
        self.sandbox_waits[instance.case_id] = time.monotonic() - began
        log.info("%s: sandbox ready after %.2f s", instance.case_id, self.sandbox_waits[instance.case_id])
        return sandbox

    def _scratch_path(self, case_id: str) -> Path:
        # The pid keeps two controllers that reuse a run name from sharing a workspace.
        return SCRATCH_ROOT / f"{os.getpid()}-{self.store.run_id}" / case_id

    def _scratch(self, case_id: str) -> Path:
        path = self._scratch_path(case_id)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def _close_pool(self) -> None:
        """Tear down sandboxes the pool started that no instance took, and their workspaces."""
        if self.pool is None:
            return
        self.pool.close()
        with self._lock:
            unused, self._prefetched = set(self._prefetched), set()
        for case_id in unused:
            shutil.rmtree(self._scratch_path(case_id), ignore_errors=True)

    def _close_active(self) -> None:
        with self._lock:
            boxes = list(self._active.values())
        for box in boxes:
            try:
                box.close()
            except Exception as exc:  # noqa: BLE001 - teardown must go on for the others
                log.error("sandbox teardown of %s failed: %s", box.spec.case_id, exc)


def _result_record(instance: Instance, outcome: InstanceOutcome, score: InstanceScore | None,
                   duration_s: float) -> ResultRecord:
    return ResultRecord(
        case_id=instance.case_id,
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
