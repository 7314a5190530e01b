"""`eegbench eval --dry-run`: what a run would do and ask of the model, before it starts.

It selects the instances as `eval` would and prints them, the sandbox and data the run would
use, and the model calls and prompt tokens to expect (runner/run/estimate.py), with their cost
when --prices is given. It starts no sandbox (the backend is only asked whether it is usable),
builds no model, calls no endpoint and writes no run directory.
"""
from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from runner.benchmark import catalog
from runner.commands.eval_checks import check_inputs, check_model_fits, check_registered, load_instances
from runner.core.config import RunConfig
from runner.core.paths import Environment
from runner.paradigms import get_paradigm
from runner.run.estimate import Prices, RunEstimate, Usage, estimate
from runner.sandbox import choose_backend
from validation.errors import UserError
from validation.instance import Instance


def dry_run(config: RunConfig, *, env: Environment, console: Console, prices: str | None) -> int:
    """Print the run's plan and estimate (module doc); 0, or UserError for what `eval` would refuse."""
    price = Prices.parse(prices) if prices is not None else None
    check_registered(config)
    instances = catalog.select(load_instances(config, env), config.selection)
    if not instances:
        raise UserError("no instances to run (instances/ is empty: run `make truth`)")
    check_model_fits(config, instances)
    root = Path(config.data_root) if config.data_root else env.paths.data_root
    paradigm = get_paradigm(config.paradigm)
    subsets = Counter(i.meta_info.bench_subset for i in instances)
    epochs = f" x {config.epochs} epochs" if config.epochs > 1 else ""
    console.print(f"dry run: model {escape(config.model)}, paradigm {config.paradigm}, {len(instances)} instances{epochs} "
                  f"({', '.join(f'{n} {s}' for s, n in sorted(subsets.items()))}), jobs {config.jobs}")
    console.print(f"instances: {_sample([i.case_id for i in instances])}", soft_wrap=True)
    missing = _missing_inputs(instances, root)
    files = len({p for i in instances for p in i.agent_input.input_paths()})
    console.print(f"data: {root} ({f'[red]{escape(missing)}[/red]' if missing else f'all {files} input files present'})",
                  soft_wrap=True)
    console.print(f"sandbox: {_sandbox(config) if paradigm.needs_sandbox else 'none (the paradigm runs its tools in the controller)'}")
    if missing is None or paradigm.needs_sandbox:
        found = estimate(paradigm, instances, config.controls, root, config.model_settings.max_tokens, config.epochs)
        console.print(estimate_table(found, price))
        first = list(found.first_prompt_tokens.values())
        console.print(f"first request: {min(first):,} to {max(first):,} prompt tokens (median "
                      f"{statistics.median(first):,.0f}); lower bound: every instance answered in its first call; "
                      "typical: half the turn ceiling, each turn adding half the reply limit and observation budget "
                      "(runner/run/estimate.py)", soft_wrap=True)
    else:
        console.print("model use: not estimated (the tools paradigm's first message describes the input files)")
    console.print("nothing was started and no model was called")
    return 0


def estimate_table(found: RunEstimate, prices: Prices | None) -> Table:
    """Calls and tokens of the lower bound and the typical figure, and their cost at `prices`."""
    table = Table(title=f"model use over {found.instances} instance runs")
    for column in ("figure", "calls", "prompt tokens", "completion tokens", *(["cost (USD)"] if prices else [])):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for name, usage in (("lower bound", found.lower), ("typical", found.typical)):
        table.add_row(name, *_cells(usage, prices))
    return table


def _cells(usage: Usage, prices: Prices | None) -> list[str]:
    cells = [f"{usage.calls:,}", f"{usage.prompt_tokens:,}", f"{usage.completion_tokens:,}"]
    return cells + ([f"{usage.cost(prices):,.2f}"] if prices else [])


def _sample(case_ids: list[str], shown: int = 6) -> str:
    more = len(case_ids) - shown
    return ", ".join(case_ids[:shown]) + (f" (+{more} more)" if more > 0 else "")


def _missing_inputs(instances: list[Instance], root: Path) -> str | None:
    """What `eval` would say of the missing input files, or None when all are there."""
    try:
        check_inputs(instances, root, "run `make data`")
    except UserError as exc:
        return str(exc)
    return None


def _sandbox(config: RunConfig) -> str:
    backend, why = choose_backend(config.sandbox)
    return f"{backend.name} ({escape(why)}); {config.resources.memory_mb} MB, {config.resources.cpus} CPU each"
