"""`eegbench eval`: select instances, check inputs, open the run, drive the scheduler."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from runner import catalog
from runner.config import RunConfig
from runner.logs import agentbench_table, summary_table
from runner.models import ModelOptions, build_model
from runner.run.environment import describe
from runner.run.scheduler import Interrupted, Scheduler
from runner.run.store import RunStore
from runner.sandbox import choose_backend
from runner.scoring.scorer import build_scorer
from validation.scoring import check_instance_metrics

EXIT_INTERRUPTED = 130


def evaluate(config: RunConfig, *, project_root: Path, runs_dir: Path, console: Console) -> int:
    from runner.data import data_root

    instances = catalog.select(load_instances(config, project_root), config.selection)
    if not instances:
        raise ValueError("no instances to run (instances/ is empty: run `make truth`)")
    root = Path(config.data_root) if config.data_root else data_root()
    check_model_fits(config, instances)
    check_inputs(instances, root)
    check_metrics(instances)
    backend, choice = choose_backend(config.sandbox)
    available, why = backend.available()
    console.print(f"sandbox: {backend.name} ({choice})")
    # The tools paradigm runs its tools in this process: it needs no sandbox.
    if not available and config.paradigm != "tools":
        raise RuntimeError(f"sandbox backend {backend.name} cannot run here: {why}")
    stale = backend.collect_stale()
    if stale:
        console.print(f"collected {stale} leftover sandbox(es) of crashed runs")
    store = RunStore(runs_dir / config.run_id)
    model = build_model(config.model, project_root=project_root, options=_model_options(config))
    scorer = None
    try:
        scorer = build_scorer(config.scoring, evaluated=config.model, project_root=project_root)
        console.print(f"scoring: {_scoring_line(scorer)}")
        environment = {
            **describe(project_root),
            "model": model.describe(),
            "scoring": scorer.describe(),
            "sandbox_backend": backend.name,
            "sandbox_choice": choice,
            "sandbox": backend.describe(),
            "instance_set_hash": catalog.instance_set_hash(instances),
            "instances": len(instances),
        }
        store.open(config, environment)
        console.print(f"run {config.run_id}: model {config.model}, {len(instances)} instances, jobs {config.jobs}")
        records = Scheduler(config, store, model, backend, root, console, scorer=scorer).run(instances)
    except Interrupted as exc:
        console.print(f"[yellow]{exc}; rerun with RUN={config.run_id} to resume")
        return EXIT_INTERRUPTED
    finally:
        if scorer is not None:
            scorer.close()
        model.close()
    console.print(summary_table(records))
    table = agentbench_table(store)  # EEGAgentBench metrics when the run holds T-instances
    if table is not None:
        console.print(table)
    console.print(f"results: {store.root}  (eegbench logs {config.run_id}; eegbench show {config.run_id} CASE)")
    return 0


def load_instances(config: RunConfig, project_root: Path):
    if config.cases_dir:
        return catalog.load_cases(Path(config.cases_dir))
    return catalog.load_all(project_root / "instances")


def check_model_fits(config: RunConfig, instances) -> None:
    if config.model != "oracle":
        return
    lacking = [i.case_id for i in instances if i.reference is None]
    if lacking:
        raise ValueError(f"MODEL=oracle needs each instance's reference script; {len(lacking)} case(s) "
                         f"have none (e.g. {lacking[0]}): official case files are run with a real or script: model")


def _scoring_line(scorer) -> str:
    d = scorer.describe()
    parser = d["parser"] + (f" ({d['parser_model']['model']})" if d["parser_model"] else "")
    judge = d["judge"]["model"] if d["judge"] else "none (judge units unscored)"
    vlm = d["vlm_judge"]["model"] if d["vlm_judge"] else "none"
    return f"parser {parser}, judge {judge}, VLM judge {vlm}"


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
