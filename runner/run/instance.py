"""One instance's work, where the sandbox and the model loop live: sandbox start (warm or
cold), the paradigm's loop, teardown and the artifacts it left.

An `InstanceRunner` is built once per worker: the scheduler holds one for its threads, and
each Ray actor (runner/run/executors/ray_actor.py) holds its own, with its own backend and
model. What an instance produces goes to a `Recorder`: the run store itself when the run
directory is on this machine (turns stream into it as they happen), or a bundle the driver
writes later (runner/run/bundle.py), so both executors leave the same files.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from runner.core.config import RunConfig
from runner.core.log import instance_log
from runner.core.transcript import InfraEvent, Turn
from runner.models.base import Model
from runner.paradigms.base import Episode, Paradigm
from runner.paradigms.loop import InstanceOutcome
from runner.run.attempt import Attempt
from runner.run.records import ArtifactEntry, key_of, plain_instance
from runner.run.warm_pool import WARM_IMPORTS, WarmPool
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Backend, JitCacheMount, Sandbox, SandboxError, SandboxSpec
from validation.instance import Instance

log = logging.getLogger(__name__)


class Recorder(Protocol):
    """Where an instance's audit trail goes while it runs (RunStore has these methods)."""

    def begin_instance(self, key: str, paradigm: str) -> None:
        """A fresh, unfinished entry for `key`."""

    def append_turn(self, key: str, turn: Turn) -> None:
        """One turn, as it happens."""

    def append_event(self, key: str, event: InfraEvent) -> None:
        """One infrastructure event (retry, restart, sandbox failure)."""

    def log_path(self, key: str) -> Path:
        """Where the entry's controller.log is written."""

    def retain_artifacts(self, key: str, workspace: Path) -> list[ArtifactEntry]:
        """Keep what the model left in the workspace's file_check/."""


@dataclass(frozen=True)
class InstanceParts:
    """What a worker runs instances with; each worker builds its own."""

    model: Model
    paradigm: Paradigm
    backend: Backend
    data_root: Path
    jit_cache: JitCacheMount | None = None  # the kernels' compile cache on this machine


class InstanceRunner:
    """Runs instances one call at a time per thread; `abort` unblocks every running one."""

    def __init__(self, config: RunConfig, run_id: str, parts: InstanceParts, *, warm_slots: int,
                 where: str = "") -> None:
        """`where`: where a remote worker runs, for controller.log ("" in the controller)."""
        self.config = config
        self.run_id = run_id
        self.parts = parts
        self.stop = threading.Event()
        self._active: dict[str, Sandbox] = {}  # by entry key
        self._lock = threading.Lock()
        # --warm-pool: the next instances' sandboxes start while the current ones run.
        warm = config.warm_pool and parts.paradigm.needs_sandbox
        self.pool = WarmPool(parts.backend.start, warm_slots) if warm else None
        self._prefetched: set[str] = set()  # entry keys
        self.sandbox_waits: dict[str, float] = {}  # entry key -> seconds its run waited for a sandbox
        self.where = where

    def work(self, unit: Instance, recorder: Recorder) -> Attempt | None:
        """Sandbox, session, the paradigm's loop, teardown and retained artifacts of one
        epoch of one instance (an EpochInstance; a plain Instance is its epoch 1). None when
        the run was stopped meanwhile: nothing is recorded, it reruns on resume."""
        key = key_of(unit)
        started, began = time.time(), time.monotonic()
        recorder.begin_instance(key, self.parts.paradigm.name)
        events: list[InfraEvent] = []

        def on_event(event: InfraEvent) -> None:
            events.append(event)
            recorder.append_event(key, event)
            log.warning("%s: %s: %s", key, event.kind, event.detail)

        with self._lock:
            self._prefetched.discard(key)
        workspace = self._scratch_path(key)
        with instance_log(recorder.log_path(key), key):
            log.info("%s: started (%s, %s)%s", key, self.parts.paradigm.name, self.parts.backend.name, self.where)
            try:
                outcome = self._attempt(unit, workspace, recorder, on_event)
                artifacts = recorder.retain_artifacts(key, workspace)
            finally:
                workspaces.remove(workspace)
            log.info("%s: %s after %d turn(s)", key, outcome.status, len(outcome.turns))
        if self.stop.is_set():
            return None
        return Attempt(unit, outcome, artifacts, time.monotonic() - began, events, started)

    def _attempt(self, unit: Instance, workspace: Path, recorder: Recorder,
                 on_event: Callable[[InfraEvent], None]) -> InstanceOutcome:
        key, paradigm = key_of(unit), self.parts.paradigm
        # The model sees the unit (it may reply per epoch); the paradigm, the plain instance.
        episode = Episode(instance=plain_instance(unit), session=self.parts.model.session(unit),
                          controls=self.config.controls, data_root=self.parts.data_root,
                          should_stop=self.stop.is_set, on_turn=lambda turn: recorder.append_turn(key, turn),
                          on_event=on_event)
        if not paradigm.needs_sandbox:
            workspaces.create(workspace, 0)
            return paradigm.run(episode)
        try:
            sandbox = self._sandbox(unit)
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

    # -- sandboxes and the warm pool --------------------------------------------------------

    def prefetch(self, unit: Instance) -> None:
        """Start the sandbox of an instance about to run (with --warm-pool)."""
        key = key_of(unit)
        with self._lock:
            if key in self._prefetched or self.stop.is_set() or self.pool is None:
                return
            self._prefetched.add(key)
        try:
            self.pool.prefetch(replace(self._spec(unit, self._scratch(key)), preload=WARM_IMPORTS))
        except SandboxError as exc:  # the workspace: the instance's own start will say why
            log.warning("%s: no warm sandbox: %s", key, exc)

    def _spec(self, unit: Instance, workspace: Path) -> SandboxSpec:
        # The spec's case id is the entry key: the warm pool holds sandboxes by it, and
        # backends label sandboxes with it.
        return SandboxSpec(
            run_id=self.run_id,
            case_id=key_of(unit),
            data_root=self.parts.data_root,
            inputs=tuple(unit.agent_input.input_paths()),
            workspace=workspace,
            limits=self.config.sandbox_limits(),
            libraries=self.parts.paradigm.libraries,
            jit_cache=self.parts.jit_cache,
        )

    def _sandbox(self, unit: Instance) -> Sandbox:
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
        # The pid keeps two controllers (or two workers) that reuse a run name from sharing
        # a workspace; the entry key keeps two epochs of one case from sharing one.
        return self.scratch_dir() / key

    def scratch_dir(self) -> Path:
        """This worker's workspaces, removed when the run ends."""
        return workspaces.SCRATCH_ROOT / f"{os.getpid()}-{self.run_id}"

    def _scratch(self, key: str) -> Path:
        """A fresh workspace of --workspace-mb for the entry; SandboxError when it cannot be made."""
        path = self._scratch_path(key)
        workspaces.create(path, self.config.resources.workspace_mb)
        return path

    # -- stopping ---------------------------------------------------------------------------

    def abort(self) -> list[str]:
        """Unblock running work: close its sandboxes, the model and the warm pool; return the
        entry keys whose sandboxes were closed."""
        self.stop.set()
        closed = self.close_active()
        self.parts.model.close()  # unblocks sessions waiting on a model server
        self.close_pool()
        return closed

    def close_pool(self) -> None:
        """Tear down sandboxes the pool started that no instance took, and their workspaces."""
        if self.pool is None:
            return
        self.pool.close()
        with self._lock:
            unused, self._prefetched = set(self._prefetched), set()
        for key in unused:
            workspaces.remove(self._scratch_path(key))

    def close_active(self) -> list[str]:
        """Close every running instance's sandbox; return their entry keys."""
        with self._lock:
            boxes = list(self._active.items())
        for _, box in boxes:
            try:
                box.close()
            except Exception as exc:  # noqa: BLE001 - teardown must go on for the others
                log.error("sandbox teardown of %s failed: %s", box.spec.case_id, exc)
        return [key for key, _ in boxes]

    def remove_scratch(self) -> None:
        """The worker's workspaces (the run is over)."""
        workspaces.remove_tree(self.scratch_dir())
