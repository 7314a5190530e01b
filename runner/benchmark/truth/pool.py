"""The pool reference scripts (and their mutants) run in: spawned workers, one BLAS/OpenMP
thread each, numba code from the local compile cache."""
from __future__ import annotations

import multiprocessing
import os
import sysconfig
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from runner.core.fileio import progress_bar
from runner.core.paths import Paths
from runner.sandbox import jit_cache, kernel_jit
from validation.worker_lifetime import die_with_parent

_COLUMNS = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def run_pinned(call: Callable[..., Any], calls: list[tuple[Any, ...]], jobs: int, progress: bool, label: str,
               on_result: Callable[[int, Future[Any]], Any], project_root: Path) -> list[Any]:
    """`call(*args)` for each args of `calls` in a pool of spawned workers with pinned BLAS
    threads (they die with this process), under a progress bar named `label`. The workers load
    numba code from the project's compile cache for the local backend when it is ready (`make
    setup` builds it; without it each worker compiles antropy's functions, ~9 CPU-s). Each finished
    future goes to `on_result(index, future)`, whose return value is the item's result (it may
    cache it, keep an error, or re-raise); an exception there drops the queued calls and
    propagates. Results in the order of `calls`; no worker starts when there is no call."""
    if not calls:
        return []
    results: list[Any] = [None] * len(calls)
    context = multiprocessing.get_context("spawn")
    workers = max(1, min(jobs, len(calls)))
    compiled = jit_cache.host_cache(Paths(project_root=Path(project_root)).cache_dir)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=pin_threads,
                             initargs=(os.getpid(), str(compiled) if compiled else None)) as pool, progress_bar(progress, *_COLUMNS) as bar:
        bar_task = bar.add_task(label, total=len(calls)) if bar else None
        futures = {pool.submit(call, *args): index for index, args in enumerate(calls)}
        try:
            for future in as_completed(futures):
                index = futures[future]
                results[index] = on_result(index, future)
                if bar is not None and bar_task is not None:
                    bar.advance(bar_task)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # fail fast: drop queued calls
            raise
    return results


def default_jobs() -> int:
    """Worker processes for the reference scripts: one per CPU."""
    return os.cpu_count() or 1



def pin_threads(controller: int, compiled: str | None) -> None:
    """Initialise a spawned script worker: die with the controller, one thread per library,
    numba code read from the compile cache `compiled` (never written) when one is given."""
    # Runs first in each spawned worker, before any script imports numpy or numba.
    die_with_parent(controller)
    for name in THREAD_VARS:
        os.environ[name] = "1"
    if compiled:
        kernel_jit.install(compiled, sysconfig.get_paths()["purelib"], writable=False)
