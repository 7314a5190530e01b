"""`make bench`: per sandbox backend, sandbox start, cell round trip, yasa's first use in a fresh
kernel with and without the compile cache, kernels started cold, warm and (local) forked from
a template, controller overhead per oracle instance, and oracle throughput at JOBS=1, 2, 4
with and without the warm pool and (local) with and without kernel templates; then
eegtools latency over long recordings (runner/bench/tool_latency.py); then the time the HTML report of
two full-catalog runs takes to build (runner/bench/report_time.py).

Figures are medians (or totals of one run) measured on this machine; reported, never asserted.
The pool's goal: sandbox start adds under 5% to an oracle run's wall time, measured as the
time instances waited for their sandbox over the summed instance wall time.
"""
from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table

from runner.benchmark import catalog
from runner.commands.evaluate import run_parts
from runner.core.config import RunConfig
from runner.core.paths import Environment
from runner.core.settings import SandboxLimits
from runner.run.scheduler import Scheduler
from runner.run.store import RunStore
from runner.run.warm_pool import WARM_IMPORTS
from runner.sandbox import backend_names, get_backend, jit_cache, procfs
from runner.sandbox.base import JitCacheMount, SandboxSpec
from validation.instance import Instance

STARTS = 8
CELLS = 50
ORACLE_SET = ["sa_sleep_metrics"]
THROUGHPUT_SET = ["sa_sleep_metrics"]
THROUGHPUT_JOBS = (1, 2, 4)
EXECUTOR_JOBS = 2  # both cores: one sandbox slot each


ENV = Environment.from_os()


def forks(backend_name: str) -> bool:
    """Whether the backend can fork its kernels from a template (the local one)."""
    return hasattr(type(get_backend(backend_name)), "fork_kernels")


@contextmanager
def kernel_templates(backend_name: str, on: bool) -> Iterator[None]:
    """Kernels of every `backend_name` backend built meanwhile fork from templates, or not."""
    cls = type(get_backend(backend_name))
    saved = getattr(cls, "fork_kernels", None)
    if saved is None:
        yield
        return
    setattr(cls, "fork_kernels", on)
    try:
        yield
    finally:
        setattr(cls, "fork_kernels", saved)


def sandbox_figures(backend_name: str = "local") -> dict[str, float]:
    """Median start-to-first-result and trivial-cell round trip."""
    backend = get_backend(backend_name)
    starts, trips = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(STARTS):
            workspace = Path(scratch) / f"ws{n}"
            workspace.mkdir()
            spec = SandboxSpec("bench", f"start-{n}", ENV.paths.data_root, (), workspace, SandboxLimits())
            began = time.perf_counter()
            with backend.start(spec) as box:
                box.execute("1")
                starts.append(time.perf_counter() - began)
                if n == 0:
                    for _ in range(CELLS):
                        t0 = time.perf_counter()
                        box.execute("1 + 1")
                        trips.append(time.perf_counter() - t0)
    return {"start_to_first_result_s": statistics.median(starts), "trivial_cell_round_trip_ms": 1000 * statistics.median(trips)}


# What the issue measured: `import yasa` and the first call of each antropy feature that
# yasa.SleepStaging uses, in a fresh kernel (the cell's wall time; its CPU-s from the kernel).
FIRST_USE = """
import numpy as np, yasa, antropy as ant
x = np.random.default_rng(0).standard_normal((6, 3000))
ant.hjorth_params(x, axis=1); ant.num_zerocross(x, axis=1); ant.petrosian_fd(x, axis=1)
np.apply_along_axis(ant.perm_entropy, 1, x, normalize=True); np.apply_along_axis(ant.higuchi_fd, 1, x)
"""
FIRST_USE_KERNELS = 3


def jit_figures(backend_name: str) -> dict[str, float]:
    """yasa's first use in fresh kernels with the compile cache and without it (interleaved)."""
    backend = get_backend(backend_name)
    compiled = JitCacheMount(jit_cache.ensure(ENV.paths.cache_dir, backend, ENV.paths.data_root)[0])
    walls: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(2 * FIRST_USE_KERNELS):
            cached = n % 2 == 0
            workspace = Path(scratch) / f"ws{n}"
            workspace.mkdir()
            spec = SandboxSpec("bench", f"jit-{n}", ENV.paths.data_root, (), workspace, SandboxLimits(),
                               jit_cache=compiled if cached else None)
            with backend.start(spec) as box:
                observation = box.execute(FIRST_USE)
            walls[cached].append(observation.duration_s)
            cpus[cached].append(observation.cpu_s or 0.0)
    cached_s, compiled_s = statistics.median(walls[True]), statistics.median(walls[False])
    return {"yasa_first_use_cached_s": cached_s, "yasa_first_use_uncached_s": compiled_s,
            "yasa_first_use_cached_cpu_s": statistics.median(cpus[True]),
            "yasa_first_use_uncached_cpu_s": statistics.median(cpus[False]),
            "yasa_first_use_uncached_over_cached": compiled_s / cached_s}


FIRST_IMPORTS = "import numpy, scipy, pandas, matplotlib, mne, yasa"
KERNELS = 3


def kernel_figures(backend_name: str) -> dict[str, float]:
    """Per started kernel, cold (nothing imported ahead), warm (the warm pool's WARM_IMPORTS) and,
    where the backend has them, forked from a template (interleaved): start to ready, the
    model's first imports, and the kernel's CPU-s and PSS once they are done. A forked
    kernel's CPU-s are its own since the fork (the template's imports are paid once per run)."""
    kinds = ["cold", "warm", *(["forked"] if forks(backend_name) else [])]
    compiled = JitCacheMount(jit_cache.ensure(ENV.paths.cache_dir, get_backend(backend_name), ENV.paths.data_root)[0])
    rows: dict[str, list[tuple[float, float, float, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(len(kinds) * KERNELS):
            kind = kinds[n % len(kinds)]
            workspace = Path(scratch) / f"ws{n}"
            workspace.mkdir()
            spec = SandboxSpec("bench", f"kernel-{n}", ENV.paths.data_root, (), workspace, SandboxLimits(),
                               jit_cache=compiled, preload=WARM_IMPORTS if kind == "warm" else ())
            backend = get_backend(backend_name)
            with kernel_templates(backend_name, kind == "forked"):
                if kind == "forked" and n < len(kinds):  # the template's own start, paid once per run
                    with backend.start(spec):
                        pass
                began = time.perf_counter()
                with backend.start(spec) as box:
                    ready = time.perf_counter() - began
                    imports = box.execute(FIRST_IMPORTS).duration_s
                    pid = box.kernel_pid
                    rows[kind].append((ready, imports, procfs.cpu_seconds(pid) or 0.0, procfs.pss_mb(pid) or 0.0))
    figures: dict[str, float] = {}
    for kind, measured in rows.items():
        for i, name in enumerate(("kernel_start_to_ready_s", "first_imports_s", "kernel_cpu_s", "kernel_pss_mb")):
            figures[f"{kind}_{name}"] = statistics.median(row[i] for row in measured)
    for kind in kinds[1:]:
        figures[f"{kind}_over_cold_kernel_cpu"] = figures[f"{kind}_kernel_cpu_s"] / figures["cold_kernel_cpu_s"]
        figures[f"{kind}_over_cold_kernel_pss"] = figures[f"{kind}_kernel_pss_mb"] / figures["cold_kernel_pss_mb"]
    return figures


def _oracle_run(config: RunConfig, instances: list[Instance] | None = None) -> tuple[Scheduler, RunStore, float]:
    """One oracle run (of the config's selection, unless `instances` are given) in a
    temporary runs directory; returns its scheduler, store and wall time."""
    if instances is None:
        instances = catalog.select(catalog.load_all(), config.selection)
    runs = Path(tempfile.mkdtemp(prefix="eegbench-bench-"))
    store = RunStore(runs / config.run_id)
    with run_parts(config, ENV, ENV.paths.data_root, Console(quiet=True)) as (parts, _):
        store.open(config, {})
        scheduler = Scheduler(config, store, parts, Console(quiet=True))
        began = time.perf_counter()
        scheduler.run(instances)
        wall = time.perf_counter() - began
    return scheduler, store, wall


def oracle_overhead(backend_name: str = "local") -> dict[str, float]:
    """The controller's time per oracle instance beyond the kernel's compute."""
    config = RunConfig(run_id="bench-oracle", model="oracle", selection=ORACLE_SET, sandbox=backend_name)
    _, store, _ = _oracle_run(config)
    records = store.results()
    overheads, walls = [], []
    for r in records:
        turns = store.read_transcript(r.case_id).turns
        compute = sum(t.observation.duration_s for t in turns if t.observation)
        overheads.append(r.duration_s - compute)
        walls.append(r.duration_s)
    shutil.rmtree(store.root.parent, ignore_errors=True)
    return {
        "oracle_instances": len(records),
        "oracle_wall_s": statistics.median(walls),
        "controller_overhead_s": statistics.median(overheads),
        "overhead_share": statistics.median(o / w for o, w in zip(overheads, walls)),
    }


def oracle_throughput(backend_name: str, jobs: int, warm_pool: bool) -> dict[str, float]:
    """One oracle run over THROUGHPUT_SET: instances per minute, and the share of instance
    wall time spent waiting for a sandbox to start (the pool's goal: < 5%)."""
    config = RunConfig(run_id="bench-throughput", model="oracle", selection=THROUGHPUT_SET,
                       jobs=jobs, sandbox=backend_name, warm_pool=warm_pool)
    scheduler, store, wall = _oracle_run(config)
    records = store.results()
    shutil.rmtree(store.root.parent, ignore_errors=True)
    instance_wall = sum(r.duration_s for r in records)
    return {
        "instances": len(records),
        "solutions": sum(r.status == "solution" and r.score == 100.0 for r in records),
        "wall_s": wall,
        "instances_per_min": 60 * len(records) / wall,
        "start_wait_share": sum(scheduler.sandbox_waits.values()) / instance_wall,
    }


def executor_figures() -> dict[str, object]:
    """Thread pool against Ray (a local cluster started for the run, as without RAY_ADDRESS)
    on THROUGHPUT_SET with the local sandbox, measured back to back. Ray's fixed cost is a run
    of no instance (start the cluster, pre-flight, start the actors); its per-instance
    overhead is the median time from dispatch to recorded result beyond the worker's own
    instance time."""
    figures: dict[str, object] = {}
    walls: dict[str, float] = {}
    count = 0
    for executor in ("threads", "ray"):
        config = RunConfig(run_id=f"bench-{executor}", model="oracle", selection=THROUGHPUT_SET,
                           jobs=EXECUTOR_JOBS, executor=executor)
        scheduler, store, walls[executor] = _oracle_run(config)
        records = store.results()
        overheads = getattr(scheduler.parts.executor, "overheads_s", None)
        if overheads:
            figures["ray_overhead_per_instance_s"] = statistics.median(overheads)
        count = len(records)
        shutil.rmtree(store.root.parent, ignore_errors=True)
        figures[f"{executor}_instances_per_min"] = 60 * count / walls[executor]
        figures[f"{executor}_solutions"] = f"{sum(r.score == 100.0 for r in records)}/{count}"
    empty = RunConfig(run_id="bench-ray-empty", model="oracle", jobs=EXECUTOR_JOBS, executor="ray")
    _, store, startup = _oracle_run(empty, [])
    shutil.rmtree(store.root.parent, ignore_errors=True)
    figures["ray_fixed_cost_s"] = startup
    figures["ray_instances_per_min_after_start"] = 60 * count / (walls["ray"] - startup)
    figures["ray_over_threads_throughput"] = walls["threads"] / walls["ray"]
    return figures


def backend_figures(name: str) -> dict[str, object]:
    """Every figure of one backend."""
    with kernel_templates(name, False):
        figures: dict[str, object] = {**sandbox_figures(name), **jit_figures(name)}
    figures.update({**kernel_figures(name), **oracle_overhead(name)})
    modes = [("cold", False), ("pool", False)] + ([("forked", True), ("forked_pool", True)] if forks(name) else [])
    for jobs in THROUGHPUT_JOBS:
        for mode, templates in modes:
            with kernel_templates(name, templates):
                run = oracle_throughput(name, jobs, mode.endswith("pool"))
            tag = f"jobs{jobs}_{mode}"
            figures[f"{tag}_instances_per_min"] = run["instances_per_min"]
            figures[f"{tag}_start_wait_pct"] = 100 * run["start_wait_share"]
            figures[f"{tag}_solutions"] = f"{run['solutions']}/{run['instances']}"
        if forks(name):
            figures[f"jobs{jobs}_forked_over_cold_throughput"] = (
                figures[f"jobs{jobs}_forked_instances_per_min"] / figures[f"jobs{jobs}_cold_instances_per_min"])  # type: ignore[operator]
    return figures


def main() -> None:
    """Measure every registered backend, then eegtools; print tables and the JSON figures."""
    from runner.bench.report_time import report_build_time
    from runner.bench.tool_latency import tool_latency

    results: dict[str, dict[str, object]] = {}
    for name in backend_names():
        ok, why = get_backend(name).available()
        results[name] = backend_figures(name) if ok else {"unavailable": why}
    keys = list(dict.fromkeys(k for figures in results.values() for k in figures))
    table = Table(title=f"eegbench bench (medians; throughput over {', '.join(THROUGHPUT_SET)}, MODEL=oracle)")
    table.add_column("measure")
    for name in results:
        table.add_column(name, justify="right")
    for key in keys:
        cells = [results[n].get(key, "-") for n in results]
        table.add_row(key, *(f"{v:.3f}" if isinstance(v, float) else str(v) for v in cells))
    Console().print(table)
    tools = tool_latency()
    tools_table = Table(title="eegtools latency (windowed features over long recordings)")
    tools_table.add_column("measure")
    tools_table.add_column("value", justify="right")
    for key, value in tools.items():
        tools_table.add_row(key, f"{value:.3f}" if isinstance(value, float) else str(value))
    Console().print(tools_table)
    executors = executor_figures()
    executors_table = Table(title=f"executors: oracle over {', '.join(THROUGHPUT_SET)}, local sandbox, "
                                  f"jobs {EXECUTOR_JOBS}, one run each")
    executors_table.add_column("measure")
    executors_table.add_column("value", justify="right")
    for key, figure in executors.items():
        executors_table.add_row(key, f"{figure:.3f}" if isinstance(figure, float) else str(figure))
    Console().print(executors_table)
    report = report_build_time(ENV)
    report_table = Table(title="eegbench report --html over two runs of every catalog instance (goal: total < 30 s)")
    report_table.add_column("measure")
    report_table.add_column("value", justify="right")
    for key, value in report.items():
        report_table.add_row(key, f"{value:.3f}")
    Console().print(report_table)
    print(json.dumps({"backends": results, "executors": executors, "eegtools": tools, "report": report}, indent=2))

