"""`eegbench eval`: select instances, check inputs, build the run's parts, drive the scheduler."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from runner.benchmark import catalog, sensitivity
from runner.commands.dry_run import dry_run
from runner.commands.eval_checks import (
    check_eval_paths,
    check_model_fits,
    check_model_specs,
    check_registered,
    check_runnable,
    load_instances,
)
from runner.commands.logs import agentbench_table, summary_table
from runner.commands.output import console
from runner.commands.parser import config_from_args
from runner.core.config import RunConfig
from runner.core.paths import Environment
from runner.models import credentials
from runner.models.base import Model
from runner.models.kinds import build_model
from runner.paradigms import get_paradigm
from runner.run import orphans
from runner.run.environment import describe
from runner.run.executors import get_executor
from runner.run.instance import InstanceParts
from runner.run.instance_set import instance_hash
from runner.run.records import ResultRecord
from runner.run.scheduler import Interrupted, RunParts, Scheduler
from runner.run.store import RunStore
from runner.sandbox import choose_backend, jit_cache
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Backend, JitCacheMount, SandboxError
from runner.sandbox.layout import ensure_private_dir
from runner.scoring.scorer import Scorer, build_scorer
from validation.baseline import task_baselines, task_levels
from validation.errors import UserError
from validation.instance import Instance
from validation.unit_registry import UNITS

EXIT_INTERRUPTED = 130


def evaluate(config: RunConfig, *, env: Environment, console: Console, rerun_changed: bool = False) -> int:
    """Run (or resume) the run the config describes; print the summary; return the exit code.
    A resume over a changed instance set is refused unless `rerun_changed` (RunStore.open)."""
    check_registered(config)
    every = load_instances(config, env)
    instances = catalog.select(every, config.selection)
    if not instances:
        raise UserError("no instances to run (instances/ is empty: run `make truth`)")
    root = Path(config.data_root) if config.data_root else env.paths.data_root
    check_model_fits(config, instances)
    check_runnable(instances, root, "check --data-root" if config.cases_dir else "run `make data`")
    store = RunStore(env.paths.runs_dir / config.run_id)
    with run_parts(config, env, root, console) as (parts, environment):
        store.open(config, {**environment, **instance_record(env, every, instances)}, rerun_changed=rerun_changed)
        epochs = f", {config.epochs} epochs" if config.epochs > 1 else ""
        console.print(f"run {config.run_id}: model {escape(config.model)}, {len(instances)} instances{epochs}, jobs {config.jobs}")
        try:
            Scheduler(config, store, parts, console, variables=credentials.shareable(env.variables)).run(instances)
        except Interrupted as exc:
            console.print(f"[yellow]{escape(str(exc))}; rerun with RUN={config.run_id} to resume")
            return EXIT_INTERRUPTED
    console.print(summary_table(store.summary()))
    if config.model == "oracle" and config.selection == [catalog.CHECK]:
        console.print(installation_verdict(store.results(), unwritable(instances, config.paradigm)), soft_wrap=True)
    table = agentbench_table(store)  # EEGAgentBench metrics when the run holds T-instances
    if table is not None:
        console.print(table)
    console.print(f"results: {escape(str(store.root))}  (eegbench logs {config.run_id}; eegbench show {config.run_id} CASE)")
    return 0


def instance_record(env: Environment, every: list[Instance], instances: list[Instance]) -> dict[str, Any]:
    """What run.json records about the instances a run selected (of `every` loaded): their
    hashes, whose change a resume refuses, and the floors and sensitivity its report prints."""
    return {"instance_set_hash": catalog.instance_set_hash(instances),
            "instance_hashes": {i.case_id: instance_hash(i) for i in instances},
            "instances": len(instances), "floors": floors(every, instances),
            "sensitivity": sensitivity.recorded_summaries(env.paths.project_root, [i.task_id for i in instances])}


def floors(every: list[Instance], chosen: list[Instance]) -> dict[str, dict[str, list[float]]]:
    """The chance level and best-constant score (0-1) of each metric of each task run, over
    the task's whole instance set rather than the run's sample, so a report's guessing floor
    is the same whichever instances a run drew (validation/baseline.py)."""
    tasks = {i.task_id for i in chosen}
    levels = task_levels(task_baselines([i for i in every if i.task_id in tasks]))
    return {task: {metric: list(pair) for metric, pair in metrics.items()} for task, metrics in levels.items()}


def installation_verdict(results: list[ResultRecord], unwritable: set[str] | None = None) -> str:
    """The oracle's installation check in one line: every task scored 100, or which did not.
    `unwritable`: cases asking for files the paradigm has no way to write (no sandbox), which
    cannot score 100 there and say nothing about the install."""
    unwritable = unwritable or set()
    failed = sorted(r.case_id for r in results if r.score != 100 and r.case_id not in unwritable)
    tasks = len({r.task_id for r in results})
    skipped = sum(r.case_id in unwritable for r in results)
    if not failed:
        note = (f" ({skipped} ask for files this paradigm cannot write and are left out)" if skipped else "")
        return (f"[green]installation check: the oracle scored 100 on one instance of each of {tasks - skipped} tasks"
                f"{note}: the install works (make eval SET=all runs every instance)")
    return (f"[red]installation check: {len(failed)} of {len(results)} instances did not score 100 "
            f"({', '.join(failed[:8])}{' ...' if len(failed) > 8 else ''}): the install is broken; "
            "eegbench show RUN CASE says why")


def unwritable(instances: list[Instance], paradigm: str) -> set[str]:
    """The cases with an artifact metric when the paradigm has no sandbox to write files in."""
    if get_paradigm(paradigm).needs_sandbox:
        return set()
    return {i.case_id for i in instances if any(UNITS.get(m.type).family == "artifact" for m in i.eval_config.metrics)}


@dataclass(frozen=True)
class SandboxChoice:
    """The sandbox backend a run uses, why, and the kernels' compile cache on this machine."""

    backend: Backend
    choice: str
    jit_cache: JitCacheMount | None
    jit_cache_why: str


@contextlib.contextmanager
def run_parts(config: RunConfig, env: Environment, data_root: Path,
              console: Console) -> Iterator[tuple[RunParts, dict[str, Any]]]:
    """The model, paradigm, sandbox backend, executor and scorer a config names, and what
    run.json records about them; the model and the scorer are closed on exit."""
    sandbox = prepare_sandbox(config, env, console)  # before the model: a local server starts slowly
    model = build_model(config.model, env=env, settings=config.model_settings)
    try:
        with parts_around(model, sandbox, config, env, data_root, console, evaluated=config.model) as made:
            yield made
    finally:
        model.close()


def prepare_sandbox(config: RunConfig, env: Environment, console: Console) -> SandboxChoice:
    """The backend the config chooses, checked usable with the run's limits (UserError says
    what to change), with what crashed runs left behind collected and the compile cache found."""
    paradigm = get_paradigm(config.paradigm)
    backend, choice = choose_backend(config.sandbox)
    available, why = backend.available()
    console.print(f"sandbox: {backend.name} ({choice})")
    if not available and paradigm.needs_sandbox:  # the machine's setup, for its user to fix
        raise UserError(f"sandbox backend {backend.name} cannot run here: {why}")
    if paradigm.needs_sandbox:
        check_sandbox_limits(config, backend)
    stale = backend.collect_stale() + workspaces.collect_stale()
    if stale:
        console.print(f"collected {stale} leftover sandbox(es) and workspace(s) of crashed runs")
    ended = orphans.collect()
    if ended:
        console.print(f"ended {ended} process(es) that crashed runs left running (workers, servers)")
    compiled, compiled_why = (jit_cache.resolve(env.paths.cache_dir, backend) if paradigm.needs_sandbox
                              else (None, "no sandbox"))
    if paradigm.needs_sandbox and compiled is None:
        console.print(f"[yellow]{escape(compiled_why)}")
    return SandboxChoice(backend, choice, compiled, compiled_why)


@contextlib.contextmanager
def parts_around(model: Model, sandbox: SandboxChoice, config: RunConfig, env: Environment, data_root: Path,
                 console: Console, *, evaluated: str | None) -> Iterator[tuple[RunParts, dict[str, Any]]]:
    """The run's parts around a model already built (its owner closes it), and what run.json
    records about them; the scorer is closed on exit. `evaluated`: the model spec a parser
    falls back to (scoring/endpoints.py), None when the model is not an eegbench kind."""
    paradigm = get_paradigm(config.paradigm)
    scorer = build_scorer(config.scoring, evaluated=evaluated, env=env)
    try:
        console.print(f"scoring: {escape(_scoring_line(scorer))}")
        instance_parts = InstanceParts(model=model, paradigm=paradigm, backend=sandbox.backend, data_root=data_root,
                                       jit_cache=sandbox.jit_cache)
        parts = RunParts(instance=instance_parts, executor=get_executor(config.executor), scorer=scorer)
        yield parts, {
            **describe(env.paths.project_root),
            "model": model.describe(),
            "paradigm": paradigm.describe(),
            "scoring": scorer.describe(),
            "sandbox_backend": sandbox.backend.name,
            "sandbox_choice": sandbox.choice,
            "sandbox": sandbox.backend.describe(),
            "jit_cache": sandbox.jit_cache_why,
        }
    finally:
        scorer.close()


def check_sandbox_limits(config: RunConfig, backend: Backend) -> None:
    """The limits the run asks for can be enforced by this backend here, or UserError says why
    and what to change (before the run directory exists)."""
    size_mb = config.resources.workspace_mb
    if workspaces.kind(size_mb) == "tmpfs" and not backend.tmpfs_workspace:
        raise UserError(f"--workspace-mb {size_mb}: on the {backend.name} backend a bounded workspace is a "
                        "loop-mounted file system, which needs a root controller; use --sandbox local (its "
                        "bounded workspace is a tmpfs in the sandbox), run as root, or pass --workspace-mb 0")
    try:
        workspaces.check_bounded(size_mb)
    except SandboxError as exc:
        raise UserError(f"--workspace-mb {size_mb}: {exc}") from None
    try:
        ensure_private_dir(workspaces.SCRATCH_ROOT)
    except SandboxError as exc:
        raise UserError(str(exc)) from None
    shared = backend.shared_process_budget()
    if shared and (config.jobs > 1 or config.warm_pool):
        concurrency = f"--jobs {config.jobs}" if config.jobs > 1 else "--warm-pool"
        raise UserError(f"{concurrency}: concurrent sandboxes would share one process budget: {shared}; run "
                        "eegbench where a cgroup is writable (as root, or in a cgroup v2 subtree delegated to you: "
                        "systemd-run --user --scope -p Delegate=yes make eval), use --sandbox docker, or run one "
                        "at a time (--jobs 1)")


def _scoring_line(scorer: Scorer) -> str:
    d = scorer.describe()
    parser = d["parser"] + (f" ({d['parser_model']['model']})" if d["parser_model"] else "")
    judge = d["judge"]["model"] if d["judge"] else "none (judge units unscored)"
    vlm = d["vlm_judge"]["model"] if d["vlm_judge"] else "none"
    return f"parser {parser}, judge {judge}, VLM judge {vlm}"


def cmd_eval(args: argparse.Namespace, env: Environment) -> int:
    """Run (or resume) a model on the benchmark."""
    from runner.commands.evaluate import evaluate

    model = args.model or env.get("MODEL") or ""
    check = not model and not args.selection and not args.cases
    if not model:
        console.print("[yellow]No MODEL given: running the oracle as an installation check"
                      + (" on one instance of each task (SET=all runs every instance)" if check else "")
                      + " (make eval MODEL=openai:NAME to evaluate a model).")
        model = "oracle"
    config = config_from_args(args, model)
    if check:
        config = config.model_copy(update={"selection": [catalog.CHECK]})
    check_model_specs(args, env, model)
    if args.prices is not None and not args.dry_run:
        raise UserError("--prices: goes with --dry-run (a run records what it really used)")
    if args.dry_run:
        return dry_run(config, env=env, console=console, prices=args.prices)
    check_eval_paths(config, env)
    enter_delegated_scope(env)
    return evaluate(config, env=env, console=console, rerun_changed=args.rerun_changed)


def enter_delegated_scope(env: Environment) -> None:
    """Re-run this command in a systemd scope delegated to it, where that is how sandboxes get
    cgroups of their own (a user on a cgroup v2 machine, outside any delegated cgroup)."""
    from runner.sandbox import cgroups

    command = cgroups.scope_command(list(sys.orig_argv), dict(env.variables))
    if command is None:
        return
    console.print(f"cgroups: re-running in a delegated systemd scope ({' '.join(command[:6])} ...)")
    sys.stdout.flush()
    os.execvpe(command[0], command, {**env.variables, cgroups.SCOPE_MARKER: "1"})


