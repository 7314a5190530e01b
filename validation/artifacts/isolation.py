"""Files the model wrote are read in a separate process, never in the controller.

A crafted EDF or FIF header can make a reader allocate gigabytes or spin; the reading
therefore runs in one long-lived worker process (spawned, so mne is imported once) with
an address-space cap, and every read has a time limit. The worker ends with the controller,
even a SIGKILLed one (validation/worker_lifetime.py). A worker that dies or overruns is
killed and replaced; the field scores 0 with the reason, and the controller carries on.
"""
from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from validation.worker_lifetime import die_with_parent

MEMORY_LIMIT_BYTES = 4 * 1024**3
TIMEOUT_S = 120.0


class MeasureError(RuntimeError):
    """The reader process could not finish (memory cap, crash or timeout)."""


def _limit_worker(controller: int) -> None:
    import os
    import resource

    die_with_parent(controller)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def _measure(path: str, check: str, names: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """Runs in the worker: open the file as its check's kind and measure each field."""
    from validation.artifacts.signal import SignalFile, SignalFileError
    from validation.artifacts.table import TableFile, TableFileError

    try:
        opened = TableFile(Path(path), options) if check == "table_file_match" else SignalFile(Path(path))
    except (SignalFileError, TableFileError) as exc:
        return {"error": str(exc)}
    except MemoryError:
        return {"error": "reading the file exceeded the reader's memory limit"}
    values, unmeasurable, failed = {}, [], {}
    for name in names:
        try:
            values[name] = opened.measure(name)
        except KeyError:
            unmeasurable.append(name)
        except Exception as exc:  # hostile content costs the field only
            failed[name] = type(exc).__name__
    return {"values": values, "unmeasurable": unmeasurable, "failed": failed}


# (path, check, field names, options) -> {"values", "unmeasurable", "failed"} or {"error"}
Job = Callable[[str, str, list[str], dict[str, Any]], dict[str, Any]]


class Reader:
    """One worker at a time; `job` runs in it (a module-level function, for spawn)."""

    def __init__(self, job: Job = _measure, timeout_s: float = TIMEOUT_S) -> None:
        self.job = job
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def measure(self, path: Path, check: str, names: list[str], options: Mapping[str, Any]) -> dict[str, Any]:
        """Measure the named fields of one file in the worker; MeasureError if it fails."""
        plain = {k: v for k, v in (options or {}).items() if isinstance(v, (str, int, float, bool))}
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_limit_worker,
                                                 initargs=(os.getpid(),))
            future = self._pool.submit(self.job, str(path), check, list(names), plain)
            try:
                found: dict[str, Any] = future.result(timeout=self.timeout_s)
                return found
            except FutureTimeout:
                self._discard()
                raise MeasureError(f"reading the file took longer than {self.timeout_s:g} s") from None
            except BrokenProcessPool:
                self._discard()
                raise MeasureError("the reader process died (memory limit or crash)") from None

    def close(self) -> None:
        """Stop the worker process, if one runs."""
        with self._lock:
            self._discard()

    def _discard(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()  # a spinning reader ignores a polite shutdown
        pool.shutdown(wait=True, cancel_futures=True)


READER = Reader()
atexit.register(READER.close)
