"""`eegbench eval`: select instances, check inputs, build the run's parts, drive the scheduler."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from runner.benchmark import catalog, sensitivity
from runner.commands.logs import agentbench_table, summary_table
from runner.commands.output import console
from runner.commands.parser import config_from_args
from runner.core.config import RunConfig
from runner.core.paths import Environment, check_writable
from runner.models import credentials
from runner.models.kinds import BadModelSpec, ModelSpec, build_model
from runner.paradigms import PARADIGMS, get_paradigm
from runner.run import orphans
from runner.run.environment import describe
from runner.run.executors import EXECUTORS, get_executor
from runner.run.instance import InstanceParts
from runner.run.instance_set import instance_hash
from runner.run.records import ResultRecord, split_key
from runner.run.scheduler import Interrupted, RunParts, Scheduler
from runner.run.store import RunStore
from runner.sandbox import choose_backend, jit_cache, sandbox_choices
from runner.sandbox import workspace as workspaces
from runner.sandbox.base import Backend, SandboxError
from runner.sandbox.layout import ensure_private_dir
from runner.scoring.scorer import Scorer, build_scorer
from validation.baseline import task_baselines, task_levels
from validation.errors import UserError
from validation.instance import Instance
from validation.scoring import check_instance_metrics

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
    check_inputs(instances, root, "check --data-root" if config.cases_dir else "run `make data`")
    check_metrics(instances)
    check_case_ids(instances)
    store = RunStore(env.paths.runs_dir / config.run_id)
    with run_parts(config, env, root, console) as (parts, environment):
        store.open(config, {**environment, "instance_set_hash": catalog.instance_set_hash(instances),
                            "instance_hashes": {i.case_id: instance_hash(i) for i in instances},
                            "instances": len(instances), "floors": floors(every, instances),
                            "sensitivity": sensitivity.recorded_summaries(env.paths.project_root,
                                                                          [i.task_id for i in instances])},
                   rerun_changed=rerun_changed)
        epochs = f", {config.epochs} epochs" if config.epochs > 1 else ""
        console.print(f"run {config.run_id}: model {escape(config.model)}, {len(instances)} instances{epochs}, jobs {config.jobs}")
        try:
            Scheduler(config, store, parts, console, variables=credentials.shareable(env.variables)).run(instances)
        except Interrupted as exc:
            console.print(f"[yellow]{escape(str(exc))}; rerun with RUN={config.run_id} to resume")
            return EXIT_INTERRUPTED
    console.print(summary_table(store.summary()))
    if config.model == "oracle" and config.selection == [catalog.CHECK]:
        console.print(installation_verdict(store.results()), soft_wrap=True)
    table = agentbench_table(store)  # EEGAgentBench metrics when the run holds T-instances
    if table is not None:
        console.print(table)
    console.print(f"results: {escape(str(store.root))}  (eegbench logs {config.run_id}; eegbench show {config.run_id} CASE)")
    return 0


def check_registered(config: RunConfig) -> None:
    """UserError naming the field when the config's paradigm, sandbox or executor is not a
    registered one (before anything of the run is made)."""
    for field, value, names in (("paradigm", config.paradigm, PARADIGMS.names()),
                                ("sandbox", config.sandbox, sandbox_choices()),
                                ("executor", config.executor, EXECUTORS.names())):
        if value not in names:
            raise UserError(f"run {config.run_id}: {field} {value!r} is not one of {', '.join(names)}")


def floors(every: list[Instance], chosen: list[Instance]) -> dict[str, dict[str, list[float]]]:
    """The chance level and best-constant score (0-1) of each metric of each task run, over
    the task's whole instance set rather than the run's sample, so a report's guessing floor
    is the same whichever instances a run drew (validation/baseline.py)."""
    tasks = {i.task_id for i in chosen}
    levels = task_levels(task_baselines([i for i in every if i.task_id in tasks]))
    return {task: {metric: list(pair) for metric, pair in metrics.items()} for task, metrics in levels.items()}


def installation_verdict(results: list[ResultRecord]) -> str:
    """The oracle's installation check in one line: every task scored 100, or which did not."""
    failed = sorted(r.case_id for r in results if r.score != 100)
    tasks = len({r.task_id for r in results})
    if not failed:
        return (f"[green]installation check: the oracle scored 100 on one instance of each of {tasks} tasks: "
                "the install works (make eval SET=all runs every instance)")
    return (f"[red]installation check: {len(failed)} of {len(results)} instances did not score 100 "
            f"({', '.join(failed[:8])}{' ...' if len(failed) > 8 else ''}): the install is broken; "
            "eegbench show RUN CASE says why")


@contextlib.contextmanager
def run_parts(config: RunConfig, env: Environment, data_root: Path,
              console: Console) -> Iterator[tuple[RunParts, dict[str, Any]]]:
    """The model, paradigm, sandbox backend, executor and scorer a config names, and what
    run.json records about them; the model and the scorer are closed on exit."""
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
    model = build_model(config.model, env=env, settings=config.model_settings)
    scorer: Scorer | None = None
    try:
        scorer = build_scorer(config.scoring, evaluated=config.model, env=env)
        console.print(f"scoring: {escape(_scoring_line(scorer))}")
        instance_parts = InstanceParts(model=model, paradigm=paradigm, backend=backend, data_root=data_root,
                                       jit_cache=compiled)
        parts = RunParts(instance=instance_parts, executor=get_executor(config.executor), scorer=scorer)
        yield parts, {
            **describe(env.paths.project_root),
            "model": model.describe(),
            "paradigm": paradigm.describe(),
            "scoring": scorer.describe(),
            "sandbox_backend": backend.name,
            "sandbox_choice": choice,
            "sandbox": backend.describe(),
            "jit_cache": compiled_why,
        }
    finally:
        if scorer is not None:
            scorer.close()
        model.close()


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


def load_instances(config: RunConfig, env: Environment) -> list[Instance]:
    """The case files of --cases, else the built-in benchmark (and local instances)."""
    if config.cases_dir:
        return catalog.load_cases(Path(config.cases_dir))
    return catalog.load_all(env.paths.instances_dir, env.paths.local_instances)


def check_model_fits(config: RunConfig, instances: list[Instance]) -> None:
    """The oracle needs each instance's reference script (case files carry none)."""
    if config.model != "oracle":
        return
    lacking = [i.case_id for i in instances if i.reference is None]
    if lacking:
        raise UserError(f"MODEL=oracle needs each instance's reference script; {len(lacking)} case(s) "
                        f"have none (e.g. {lacking[0]}): official case files are run with a real or script: model")


def _scoring_line(scorer: Scorer) -> str:
    d = scorer.describe()
    parser = d["parser"] + (f" ({d['parser_model']['model']})" if d["parser_model"] else "")
    judge = d["judge"]["model"] if d["judge"] else "none (judge units unscored)"
    vlm = d["vlm_judge"]["model"] if d["vlm_judge"] else "none"
    return f"parser {parser}, judge {judge}, VLM judge {vlm}"


def check_inputs(instances: list[Instance], root: Path, hint: str) -> None:
    """Every input file is under the data root; UserError names the first cases lacking one,
    and ends with `hint` (what to do about it)."""
    lacking = [(i.case_id, p) for i in instances for p in i.agent_input.input_paths() if not (root / p).is_file()]
    if not lacking:
        return
    shown = "; ".join(f"{case}: agent_input names {path}" for case, path in lacking[:5])
    more = f" (and {len(lacking) - 5} more)" if len(lacking) > 5 else ""
    raise UserError(f"input files missing under {root}: {shown}{more} ({hint})")


def check_case_ids(instances: list[Instance]) -> None:
    """No case id reads as another case's later epoch (`x@2`): entry keys name directories."""
    clashing = [i.case_id for i in instances if split_key(i.case_id) != (i.case_id, 1)]
    if clashing:
        raise UserError(f"case ids ending in '@<number>' clash with epoch directories: {', '.join(clashing[:5])}")


def check_metrics(instances: list[Instance]) -> None:
    """Every metric's params are usable before the first instance starts."""
    problems = [p for i in instances for p in check_instance_metrics(i)]
    if problems:
        raise UserError("broken instances: " + "; ".join(problems[:5]))


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


def check_model_specs(args: argparse.Namespace, env: Environment, model: str) -> None:
    """Every model spec parses; the error names the option or variable the spec came from."""
    specs = [("--model" if args.model else "MODEL", model, "evaluated")]
    for option, role, given in (("--parser-model", "parser", args.parser_model), ("--judge", "judge", args.judge),
                                ("--vlm-judge", "vlm", args.vlm_judge)):
        variable = f"EEGBENCH_{role.upper()}_MODEL"
        source, spec = (option, given) if given else (variable, env.get(variable))
        if spec and spec != "none":
            specs.append((source, spec, "scoring"))
    for source, spec, kind in specs:
        try:
            ModelSpec.parse(spec, role="evaluated" if kind == "evaluated" else "scoring")
        except BadModelSpec as exc:
            raise UserError(f"{source}: {exc}") from None


def check_eval_paths(config: RunConfig, env: Environment) -> None:
    """The folders `eval` reads and writes are usable, checked before a run directory exists."""
    if config.data_root and not Path(config.data_root).is_dir():
        raise UserError(f"--data-root {config.data_root}: not a directory (the folder case files' data_path is relative to)")
    source = "EEGBENCH_RUNS" if env.get("EEGBENCH_RUNS") else "the runs directory"
    check_writable(env.paths.runs_dir, source, "EEGBENCH_RUNS")
