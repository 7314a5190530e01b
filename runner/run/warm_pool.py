"""Warm pool (`eval --warm-pool`): start the next instances' sandboxes while the current ones
run, so sandbox start-up leaves the critical path (published runners start every sandbox
cold).

A sandbox is bound to one instance (its inputs, workspace and case id are fixed at start),
so the pool holds started sandboxes keyed by case id, not interchangeable ones. The
scheduler calls `prefetch` for instances about to run and `take` when one begins; whatever
was started and never taken is closed by `close` (normal end, Ctrl-C, SIGTERM, crash).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from runner.sandbox.base import Sandbox, SandboxError, SandboxSpec
from runner.sandbox.bootstrap import SCIENCE_STACK

# What a warm kernel imports before it answers (SandboxSpec.preload): the science stack, so
# that the model's first imports cost nothing. A cold start imports nothing ahead: there the
# imports would only move from the model's first cell to the instance's start. (A local
# kernel forked from a template has them imported already: runner/sandbox/template.py.)
WARM_IMPORTS = SCIENCE_STACK


class WarmPool:
    """Sandboxes started in the background ahead of their instances, held by case id until taken."""

    def __init__(self, start: Callable[[SandboxSpec], Sandbox], workers: int) -> None:
        self._start = start
        self._executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="warm-pool")
        self._pending: dict[str, Future[Sandbox]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def __contains__(self, case_id: str) -> bool:
        with self._lock:
            return case_id in self._pending

    def prefetch(self, spec: SandboxSpec) -> None:
        """Start the instance's sandbox in the background (once per case id)."""
        with self._lock:
            if self._closed or spec.case_id in self._pending:
                return
            self._pending[spec.case_id] = self._executor.submit(self._start, spec)

    def take(self, case_id: str) -> tuple[Sandbox | None, float]:
        """The prefetched sandbox (waiting for its start if needed) and the seconds waited;
        (None, 0) when it was never prefetched. A failed start raises its SandboxError."""
        with self._lock:
            future = self._pending.pop(case_id, None)
        if future is None:
            return None, 0.0
        began = time.monotonic()
        try:
            sandbox = future.result()
        except SandboxError:
            raise
        except Exception as exc:  # noqa: BLE001 - any start failure is infrastructure
            raise SandboxError(f"{case_id}: warm sandbox start failed: {exc}") from exc
        return sandbox, time.monotonic() - began

    def close(self) -> int:
        """Close every sandbox started and never taken (waiting for starts in flight); return
        how many were closed."""
        with self._lock:
            self._closed = True
            pending, self._pending = list(self._pending.values()), {}
        for future in pending:
            future.cancel()
        closed = 0
        for future in pending:
            if future.cancelled():
                continue
            try:
                sandbox = future.result()
            except Exception:  # noqa: BLE001 - a failed start left nothing to close
                continue
            sandbox.close()
            closed += 1
        self._executor.shutdown(wait=True, cancel_futures=True)
        return closed
