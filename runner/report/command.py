"""`eegbench report` and `eegbench compare`: their options and what they do.

The statistics stack (numpy, scipy, matplotlib) is imported when a command runs, not when the
CLI parses its arguments.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from runner.core.paths import Environment
from validation.errors import UserError

if TYPE_CHECKING:
    from runner.report.context import Settings
    from runner.report.model import Report
    from runner.report.rows import RunData


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The report and compare subcommands."""
    report = sub.add_parser("report", help="tables, statistics and figures from one or many runs")
    report.add_argument("runs", nargs="+", metavar="RUN")
    _common(report)
    report.add_argument("--html", type=Path, default=None, help="write a self-contained HTML report")
    report.add_argument("--csv", type=Path, default=None, metavar="DIR", help="write every table as DIR/<table>.csv")
    report.add_argument("--json", type=Path, default=None, metavar="FILE", help="write every table as JSON")
    compare = sub.add_parser("compare", help="paired comparison of two runs on the cases both hold")
    compare.add_argument("run_a", metavar="RUN_A")
    compare.add_argument("run_b", metavar="RUN_B")
    _common(compare)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--intersect", action="store_true",
                        help="rank runs that differ (cases, parser, controls, sandbox) on the cases they share")
    parser.add_argument("--scores", default=None, metavar="NAME",
                        help="read verdicts from the re-score NAME (eegbench score RUN --name NAME)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--pass-threshold", type=float, default=100.0,
                        help="score at which an instance run passes, for pass@k and flips (default 100)")
    parser.add_argument("--prices", type=Path, default=None, metavar="TOML",
                        help="$ per million input/output tokens per model name")


def _settings(args: argparse.Namespace) -> Settings:
    from runner.report.context import Settings
    from runner.report.prices import load_prices

    if args.resamples < 100:
        raise UserError(f"--resamples must be at least 100, got {args.resamples}")
    if not 0 <= args.pass_threshold <= 100:
        raise UserError(f"--pass-threshold must be within 0-100, got {args.pass_threshold}")
    prices = load_prices(args.prices) if args.prices is not None else None
    return Settings(resamples=args.resamples, seed=args.seed, pass_threshold=args.pass_threshold, prices=prices)


def cmd_report(args: argparse.Namespace, env: Environment, console: Console, output: Console) -> int:
    """Build the report; print it, or write HTML/CSV/JSON."""
    from runner.report.build import build_report, load_runs
    from runner.report.export import write_csv, write_json_report
    from runner.report.terminal import print_report

    settings = _settings(args)
    runs = load_runs(args.runs, env.paths.runs_dir, args.scores)
    report = build_report(runs, settings, intersect=args.intersect)
    if args.html is None and args.csv is None and args.json is None:
        print_report(report, output)
        return 0
    if args.csv is not None:
        console.print(f"written: {len(write_csv(report, args.csv))} CSV files in {args.csv}")
    if args.json is not None:
        write_json_report(report, args.json)
        console.print(f"written: {args.json}")
    if args.html is not None:
        began = time.monotonic()
        _write_html(report, runs, args.html, env)
        console.print(f"written: {args.html} ({time.monotonic() - began:.1f} s)")
    return 0


def _write_html(report: Report, runs: list[RunData], path: Path, env: Environment) -> None:
    from runner.report.figures import all_figures
    from runner.report.html import write_html

    for figure in all_figures(report, runs):
        report.add(figure)
    write_html(path, report, runs, credits=_credits(env))


def _credits(env: Environment) -> str:
    path = env.paths.data_root / "ATTRIBUTION.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def cmd_compare(args: argparse.Namespace, env: Environment, console: Console, output: Console) -> int:
    """The paired comparison of RUN_B against RUN_A, printed."""
    from runner.report.build import load_runs
    from runner.report.comparability import comparable
    from runner.report.context import Configuration, ReportContext
    from runner.report.model import Report
    from runner.report.sections import paired
    from runner.report.terminal import print_report

    settings = _settings(args)
    runs = load_runs([args.run_a, args.run_b], env.paths.runs_dir, args.scores)
    if (runs[0].info.model, runs[0].info.paradigm) == (runs[1].info.model, runs[1].info.paradigm):
        _tell_apart(runs[1])  # two runs of one configuration: name B by its run
    kept, warnings = comparable(runs, args.intersect)
    ctx = ReportContext(runs=kept, settings=settings)
    a, b = (Configuration(run.info.model, run.info.paradigm) for run in kept)
    report = Report(title=f"compare {args.run_a} (A) with {args.run_b} (B)", runs=[r.info for r in kept],
                    warnings=warnings, settings={"bootstrap resamples": settings.resamples, "seed": settings.seed})
    for table in paired.tables(ctx, [(a, b)]):
        report.add(table)
    print_report(report, output)
    return 0


def _tell_apart(run: RunData) -> None:
    run.info.paradigm = f"{run.info.paradigm} ({run.run_id})"
    for row in run.rows:
        row.paradigm = run.info.paradigm
