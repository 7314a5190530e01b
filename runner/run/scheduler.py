"""Running a set of instances: parallel jobs, resume, progress, and a clean stop.

Each instance gets its own sandbox, model session and scratch workspace; the scheduler is
the one place that starts and tears them down, so a Ctrl-C, a SIGTERM or a crash of one
instance never leaves a kernel behind or a half-written result.
"""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from runner.config import RunConfig
from runner.fileio import write_atomic, write_json
from runner.models.base import Model
from runner.paradigms.codeact import run_codeact
from runner.paradigms.loop import InstanceOutcome
from runner.paradigms.hybrid import LIBRARIES, run_hybrid
from runner.paradigms.toolbox import Toolbox
from runner.paradigms.tools import run_tools
from runner.run.store import ResultRecord, RunStore, retain_artifacts
from runner.run.warm_pool import WarmPool
from runner.sandbox.base import Backend, Sandbox, SandboxError, SandboxSpec
from runner.scoring.scorer import Scorer
from validation.instance import Instance, dump_instance

SCRATCH_ROOT = Path(tempfile.gettempdir()) / "eegbench-work"


class Interrupted(Exception):
    """The run was stopped by Ctrl-C or SIGTERM; finished instances are kept."""


@dataclass
class Tally:
    total: int
    done: int = 0
    infra: int = 0
    running: int = 0
    scores: list[float] = field(default_factory=list)

    def line(self) -> str:
        mean = f"{sum(self.scores) / len(self.scores):.1f}" if self.scores else "-"
        return (
            f"done {self.done}/{self.total}  infra errors {self.infra}  "
            f"running {self.running}  mean score {mean}"
        )


class Scheduler:
    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        model: Model,
        backend: Backend,
        data_root: Path,
        console: Console | None = None,
        scorer: Scorer | None = None,
    ) -> None:
        self.config = config
        self.scorer = scorer or Scorer("rules", None, None, None)
        self.store = store
        self.model = model
        self.backend = backend
        self.data_root = Path(data_root)
        self.console = console or Console(stderr=True)
        self.stop = threading.Event()
        self._active: dict[str, Sandbox] = {}
        self._lock = threading.Lock()
        # --warm-pool: the next instances' sandboxes start while the current ones run.
        # The tools paradigm starts no sandbox, so there is nothing to warm.
        self.pool = WarmPool(self.backend.start, config.jobs) if config.warm_pool and config.paradigm != "tools" else None
        self._prefetched: set[str] = set()
        self.sandbox_waits: dict[str, float] = {}  # case id -> seconds its run waited for a sandbox

    # -- the run --------------------------------------------------------------------------
    def run(self, instances: list[Instance]) -> list[ResultRecord]:
        finished = self.store.finished()
        pending = [i for i in instances if i.case_id not in finished]
        if finished:
            self.console.print(f"resuming {self.store.run_id}: {len(finished)} finished, {len(pending)} to run")
        tally = Tally(total=len(instances), done=len(instances) - len(pending))
        tally.scores = [r.score for r in finished.values() if r.score is not None]
        with _signals_raise_interrupt():
            self._run_pending(pending, tally)
        return self.store.results()

    def _run_pending(self, pending: list[Instance], tally: Tally) -> None:
        progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("{task.fields[status]}"),
            console=self.console, transient=False,
        )
        pool = ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix="instance")
        try:
            with progress:
                bar = progress.add_task(self.store.run_id, total=tally.total, completed=tally.done, status=tally.line())
                self._drive(pool, pending, tally, lambda: progress.update(bar, completed=tally.done, status=tally.line()))
        except KeyboardInterrupt as exc:
            self.stop.set()
            self._close_active()
            self.model.close()  # unblocks sessions waiting on a model server
            self._close_pool()
            pool.shutdown(wait=True, cancel_futures=True)
            self._close_active()  # sandboxes a worker took from the pool meanwhile
            raise Interrupted(f"stopped: {tally.done} of {tally.total} instances finished and kept") from exc
        finally:
            self._close_pool()
        pool.shutdown(wait=True)

    def _drive(self, pool, pending, tally, refresh) -> None:
        queue = list(reversed(pending))
        running: dict[Future, str] = {}
        while queue or running:
            while queue and len(running) < self.config.jobs:
                inst = queue.pop()
                running[pool.submit(self.run_instance, inst)] = inst.case_id
            if self.pool is not None:
                for inst in queue[-self.config.jobs:]:  # the next ones to run (popped from the end)
                    self._prefetch(inst)
            tally.running = len(running)
            refresh()
            done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                running.pop(future)
                record = future.result()
                if record is None:
                    continue
                tally.done += record.status != "infra_error"
                tally.infra += record.status == "infra_error"
                if record.score is not None:
                    tally.scores.append(record.score)
        tally.running = 0
        refresh()

    # -- one instance ---------------------------------------------------------------------
    def run_instance(self, instance: Instance) -> ResultRecord | None:
        started = time.monotonic()
        audit = self.store.reset_instance(instance.case_id)
        with self._lock:
            warm = instance.case_id in self._prefetched
            self._prefetched.discard(instance.case_id)
        workspace = self._scratch_path(instance.case_id) if warm else self._scratch(instance.case_id)
        try:
            outcome = self._attempt(instance, workspace)
            artifacts = retain_artifacts(workspace, audit / "artifacts")
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        if self.stop.is_set():
            return None  # interrupted mid-instance: record nothing, it reruns on resume
        return self._finish(instance, outcome, artifacts, audit, time.monotonic() - started)

    def _spec(self, instance: Instance, workspace: Path) -> SandboxSpec:
        hybrid = self.config.paradigm == "hybrid"
        return SandboxSpec(
            run_id=self.store.run_id,
            case_id=instance.case_id,
            data_root=self.data_root,
            inputs=tuple(instance.agent_input.input_paths()),
            workspace=workspace,
            limits=self.config.sandbox_limits(),
            libraries=LIBRARIES if hybrid else (),
        )

    def _prefetch(self, instance: Instance) -> None:
        with self._lock:
            if instance.case_id in self._prefetched or self.stop.is_set():
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
            sandbox = self.backend.start(self._spec(instance, workspace))
        self.sandbox_waits[instance.case_id] = time.monotonic() - began
        return sandbox

    def _attempt(self, instance: Instance, workspace: Path) -> InstanceOutcome:
        if self.config.paradigm == "tools":  # no sandbox: the tools run in this process
            session = self.model.session(instance)
            toolbox = Toolbox(instance, self.data_root, self.config.controls.tool_budget_tokens)
            return run_tools(instance, session, toolbox, self.config.controls, should_stop=self.stop.is_set)
        try:
            sandbox = self._sandbox(instance, workspace)
        except SandboxError as exc:
            return InstanceOutcome("infra_error", None, [], [], f"sandbox start failed: {exc}")
        with self._lock:
            self._active[instance.case_id] = sandbox
        if self.stop.is_set():  # stopped while it started: the teardown may have run already
            sandbox.close()
        try:
            session = self.model.session(instance)
            run = run_hybrid if self.config.paradigm == "hybrid" else run_codeact
            return run(instance, session, sandbox, self.config.controls, should_stop=self.stop.is_set)
        finally:
            with self._lock:
                self._active.pop(instance.case_id, None)
            sandbox.close()

    def _finish(self, instance, outcome: InstanceOutcome, artifacts, audit: Path, duration: float) -> ResultRecord:
        scored = outcome.status != "infra_error"
        write_atomic(audit / "instance.json", dump_instance(instance))  # what was scored, for audit and re-scoring
        score = self.scorer.score(instance, outcome.report, audit / "artifacts", artifacts) if scored else None
        write_json(audit / "transcript.json", {
            "case_id": instance.case_id,
            "status": outcome.status,
            "error": outcome.error,
            "messages": outcome.messages,
            "turns": [t.model_dump(mode="json") for t in outcome.turns],
        })
        write_atomic(audit / "report.md", outcome.report or "")
        write_json(audit / "artifacts.json", artifacts)
        if score is not None:
            write_json(audit / "score.json", score.model_dump(mode="json"))
        record = ResultRecord(
            case_id=instance.case_id,
            task_id=instance.task_id,
            bench_subset=instance.meta_info.bench_subset,
            difficulty=instance.meta_info.difficulty,
            status=outcome.status,
            score=score.score if score is not None else None,
            rounds=len(outcome.turns),
            prompt_tokens=sum(t.usage.prompt_tokens or 0 for t in outcome.turns),
            completion_tokens=sum(t.usage.completion_tokens or 0 for t in outcome.turns),
            duration_s=round(duration, 3),
            error=outcome.error,
            unscored=score.unscored if score is not None else [],
            violations=len(score.violations) if score is not None else 0,
        )
        self.store.append_result(record)
        return record

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
            except Exception as exc:  # teardown must go on for the others
                self.console.print(f"[red]sandbox teardown failed: {exc}")


class _signals_raise_interrupt:
    """SIGTERM behaves like Ctrl-C, so both take the same clean-stop path."""

    def __enter__(self):
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._raise)
        return self

    @staticmethod
    def _raise(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
