"""`eegbench eval`: select instances, check inputs, open the run, drive the scheduler."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from runner import catalog
from runner.config import RunConfig
from runner.logs import summary_table
from runner.models import ModelOptions, build_model
from runner.run.environment import describe
from runner.run.scheduler import Interrupted, Scheduler
from runner.run.store import RunStore
from runner.sandbox import choose_backend
from validation.scoring import check_instance_metrics

EXIT_INTERRUPTED = 130


def evaluate(config: RunConfig, *, project_root: Path, runs_dir: Path, console: Console) -> int:
    from runner.data import data_root

    instances = catalog.select(catalog.load_all(project_root / "instances"), config.selection)
    if not instances:
        raise ValueError("no instances to run (instances/ is empty: run `make truth`)")
    root = data_root()
    check_inputs(instances, root)
    check_metrics(instances)
    backend, choice = choose_backend(config.sandbox)
    available, why = backend.available()
    console.print(f"sandbox: {backend.name} ({choice})")
    if not available:
        raise RuntimeError(f"sandbox backend {backend.name} cannot run here: {why}")
    stale = backend.collect_stale()
    if stale:
        console.print(f"collected {stale} leftover sandbox(es) of crashed runs")
    store = RunStore(runs_dir / config.run_id)
    model = build_model(config.model, project_root=project_root, options=_model_options(config))
    try:
        environment = {
            **describe(project_root),
            "model": model.describe(),
            "sandbox_backend": backend.name,
            "sandbox_choice": choice,
            "sandbox": backend.describe(),
            "instance_set_hash": catalog.instance_set_hash(instances),
            "instances": len(instances),
        }
        store.open(config, environment)
        console.print(f"run {config.run_id}: model {config.model}, {len(instances)} instances, jobs {config.jobs}")
        records = Scheduler(config, store, model, backend, root, console).run(instances)
    except Interrupted as exc:
        console.print(f"[yellow]{exc}; rerun with RUN={config.run_id} to resume")
        return EXIT_INTERRUPTED
    finally:
        model.close()
    console.print(summary_table(records))
    console.print(f"results: {store.root}  (eegbench logs {config.run_id}; eegbench show {config.run_id} CASE)")
    return 0


def check_inputs(instances, root: Path) -> None:
    missing = sorted({p for i in instances for p in i.agent_input.input_paths() if not (root / p).is_file()})
    if missing:
        raise FileNotFoundError(
            f"input recordings missing under {root}: {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "") + " (run `make data`)"
        )


def check_metrics(instances) -> None:
    problems = [p for i in instances for p in check_instance_metrics(i)]
    if problems:
        raise ValueError("broken instances: " + "; ".join(problems[:5]))


def _model_options(config: RunConfig) -> ModelOptions:
    s = config.model_settings
    return ModelOptions(
        temperature=s.temperature, max_tokens=s.max_tokens, stop=tuple(s.stop) if s.stop else None,
        timeout_s=s.timeout_s, max_retries=s.max_retries,
    )
