"""`make bench`: sandbox start, cell round trip, controller overhead per oracle instance,
eegtools latency over long recordings (runner/bench_tools.py).

Figures are medians measured in one run on this machine; they are reported, never asserted.
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from runner import catalog
from runner.config import RunConfig
from runner.data import data_root
from runner.models import ModelOptions, build_model
from runner.run.scheduler import Scheduler
from runner.run.store import RunStore
from runner.sandbox import get_backend
from runner.sandbox.base import Limits, SandboxSpec

STARTS = 8
CELLS = 50
ORACLE_SET = ["sa_sleep_metrics"]


def sandbox_figures(backend_name: str = "local") -> dict:
    backend = get_backend(backend_name)
    starts, trips = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(STARTS):
            workspace = Path(scratch) / f"ws{n}"
            workspace.mkdir()
            spec = SandboxSpec("bench", f"start-{n}", data_root(), (), workspace, Limits())
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


def oracle_overhead(backend_name: str = "local") -> dict:
    instances = catalog.select(catalog.load_all(), ORACLE_SET)
    with tempfile.TemporaryDirectory() as runs:
        config = RunConfig(run_id="bench-oracle", model="oracle", selection=ORACLE_SET)
        store = RunStore(Path(runs) / config.run_id)
        store.open(config, {})
        model = build_model("oracle", project_root=catalog.PROJECT_ROOT, options=ModelOptions())
        records = Scheduler(config, store, model, get_backend(backend_name), data_root(), Console(quiet=True)).run(instances)
        overheads, walls = [], []
        for r in records:
            turns = json.loads((store.instance_dir(r.case_id) / "transcript.json").read_text())["turns"]
            compute = sum(t["observation"]["duration_s"] for t in turns if t.get("observation"))
            overheads.append(r.duration_s - compute)
            walls.append(r.duration_s)
    return {
        "oracle_instances": len(records),
        "oracle_wall_s": statistics.median(walls),
        "controller_overhead_s": statistics.median(overheads),
        "overhead_share": statistics.median(o / w for o, w in zip(overheads, walls)),
    }


def main() -> None:
    from runner.bench_tools import tool_latency

    figures = {**sandbox_figures(), **oracle_overhead(), **tool_latency()}
    table = Table(title="eegbench bench (local sandbox, medians)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, f"{value:.3f}" if isinstance(value, float) else str(value))
    Console().print(table)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
