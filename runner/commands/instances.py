"""`eegbench instances`: list and filter the instance set, or report its answer statistics
or its difficulty calibration.

Filtering and rendering only; the baselines are computed in validation/baseline.py, the
calibration in runner/benchmark/calibration.py.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from runner.benchmark import catalog
from runner.benchmark.calibration import MIN_RUNS, TaskCalibration, level_medians, step_medians
from runner.benchmark.mutants import MIN_MUTANTS
from runner.benchmark.sensitivity import CAUGHT_AT, MIN_CAUGHT, TaskSensitivity
from runner.commands.output import console
from runner.core.paths import Environment
from validation.baseline import (
    OVERALL_FLOOR_LIMIT,
    TASK_FLOOR_LIMIT,
    MetricBaseline,
    TaskBaseline,
    numeric_spread,
)
from validation.errors import UserError
from validation.instance import DIFFICULTY_LEVELS, Instance

DIFFICULTIES = ("easy", "medium", "hard")


def filter_instances(instances: list[Instance], subsets: list[str] | None = None,
                     tasks: list[str] | None = None, difficulties: list[str] | None = None) -> list[Instance]:
    """Instances matching every given filter (within one filter, any value): subset by name
    or slug in any case, task by id, difficulty by name. A value that matches nothing raises
    ValueError naming it."""
    chosen = list(instances)
    if subsets:
        wanted = {catalog.subset_slug(s.strip()) for s in subsets}
        _known("subset", wanted, {catalog.subset_slug(i.meta_info.bench_subset) for i in instances})
        chosen = [i for i in chosen if catalog.subset_slug(i.meta_info.bench_subset) in wanted]
    if tasks:
        _known("task", set(tasks), {i.task_id for i in instances})
        chosen = [i for i in chosen if i.task_id in tasks]
    if difficulties:
        bad = sorted(set(difficulties) - set(DIFFICULTIES))
        if bad:
            raise UserError(f"difficulty {', '.join(bad)}: expected one of {', '.join(DIFFICULTIES)}")
        chosen = [i for i in chosen if i.meta_info.difficulty in difficulties]
    return sorted(chosen, key=lambda i: i.case_id)


def instances_table(instances: list[Instance]) -> Table:
    """One row per instance: case id, subset, task, difficulty and its unit types."""
    table = Table(title=f"{len(instances)} instance(s)", title_justify="left")
    for name in ("case id", "subset", "task", "difficulty", "units"):
        table.add_column(name, overflow="fold")
    for inst in instances:
        table.add_row(inst.case_id, inst.meta_info.bench_subset, inst.task_id,
                      inst.meta_info.difficulty or "-", unit_summary(inst))
    return table


def unit_summary(inst: Instance) -> str:
    """Unit types of one instance with their counts, e.g. 'numeric_check x2, categorical_check'."""
    counts: dict[str, int] = {}
    for metric in inst.eval_config.metrics:
        counts[metric.type] = counts.get(metric.type, 0) + 1
    return ", ".join(t if n == 1 else f"{t} x{n}" for t, n in counts.items())


def stats_table(baselines: list[TaskBaseline]) -> Table:
    """One row per task and deterministic metric: answers, best constant answer, baseline vs
    chance, and a verdict."""
    violations = sum(len(t.violations) for t in baselines)
    table = Table(title=f"constant-answer baselines: {len(baselines)} task(s), "
                        f"{violations} violation(s)", title_justify="left")
    for name in ("task", "n", "metric", "type", "answers", "best constant", "baseline", "chance", "verdict"):
        table.add_column(name, overflow="fold")
    for task in baselines:
        if not task.metrics:
            table.add_row(task.task_id, str(task.instances), "-", "-", "no deterministic metric",
                          "-", "-", "-", Text("no baseline", style="yellow"))
        for metric in task.metrics:
            table.add_row(task.task_id, str(metric.instances), metric.metric_id, metric.type,
                          distribution_text(metric), _short(metric.best_answer, 24),
                          f"{metric.baseline:.3f}", _chance_text(metric), _verdict(metric))
    return table


def floors_table(floors: dict[str, float], gated: set[str]) -> Table:
    """One row per task: its floor (the best constant answer's expected score) against the
    limit; tasks not in `gated` (another benchmark's label sets) are shown, not judged."""
    over = [t for t in gated if floors.get(t, 0.0) > TASK_FLOOR_LIMIT]
    table = Table(title=f"task floors (best constant answer, 0-100): {len(floors)} task(s), "
                        f"{len(over)} above {TASK_FLOOR_LIMIT:g}", title_justify="left")
    for name in ("task", "floor", "verdict"):
        table.add_column(name)
    for task, floor in floors.items():
        if task not in gated:
            verdict = Text("not gated (its benchmark's label set)", style="yellow")
        elif floor > TASK_FLOOR_LIMIT:
            verdict = Text(f"ABOVE {TASK_FLOOR_LIMIT:g}", style="bold red")
        else:
            verdict = Text("ok", style="green")
        table.add_row(task, f"{floor:.1f}", verdict)
    return table


def floor_failures(floors: dict[str, float], gated: set[str], whole: bool) -> list[str]:
    """What breaks the floor limits: each gated task above TASK_FLOOR_LIMIT and, when `whole`
    (the selection is the whole benchmark), a mean over the gated tasks above OVERALL_FLOOR_LIMIT."""
    failures = [f"{t} {floors[t]:.1f} > {TASK_FLOOR_LIMIT:g}" for t in floors
                if t in gated and floors[t] > TASK_FLOOR_LIMIT]
    overall = overall_floor(floors, gated)
    if whole and overall is not None and overall > OVERALL_FLOOR_LIMIT:
        failures.append(f"overall {overall:.1f} > {OVERALL_FLOOR_LIMIT:g}")
    return failures


def overall_floor(floors: dict[str, float], gated: set[str]) -> float | None:
    """The mean floor of the gated tasks (None when there is none)."""
    values = [floor for task, floor in floors.items() if task in gated]
    return sum(values) / len(values) if values else None


def distribution_text(metric: MetricBaseline) -> str:
    """The answers' distribution: label counts, or the range and spread of numeric answers."""
    if metric.numeric_range is not None:
        low, high = metric.numeric_range
        spread = numeric_spread(metric)
        spread_text = f", {spread:.0f} x tol" if spread is not None else ""
        return (f"{len(metric.answers)} distinct in [{low:g}, {high:g}], "
                f"tol {metric.tolerance:g}{spread_text}")
    if any(isinstance(a.answer, (list, dict)) for a in metric.answers):  # too long to show; say how repetitive
        top = metric.answers[0].count
        return f"{len(metric.answers)} distinct, most frequent x{top}"
    shown = [f"{_short(a.answer, 16)}:{a.count}" for a in metric.answers[:6]]
    more = len(metric.answers) - len(shown)
    return " ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def _chance_text(metric: MetricBaseline) -> str:
    text = f"{metric.chance:.3f}"
    return text + " (no classes!)" if metric.classes_missing else text


def _verdict(metric: MetricBaseline) -> Text:
    if metric.violation:
        return Text("VIOLATION", style="bold red")
    if metric.classes_missing:
        return Text("ok, classes?", style="yellow")
    return Text("ok", style="green")


def _known(what: str, wanted: set[str], available: set[str]) -> None:
    unknown = sorted(wanted - available)
    if unknown:
        raise UserError(f"{what} {', '.join(unknown)}: no instance has it "
                         f"(known: {', '.join(sorted(available))})")


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def calibration_table(rows: list[TaskCalibration], runs: list[str],
                      sensitivity: dict[str, TaskSensitivity] | None = None) -> Table:
    """One row per task: label, kind, reference measures, solve rate, mutants caught (of the
    task's sensitivity record, rescored against its current instances), and the levels measured."""
    sensitivity = sensitivity or {}
    medians = level_medians(rows)
    levels = ", ".join(f"{level} {medians[level]:.2f}" for level in DIFFICULTY_LEVELS if level in medians) or "none"
    steps = step_medians(rows)
    step_text = ", ".join(f"{level} {steps[level]:g}" for level in DIFFICULTY_LEVELS if level in steps) or "none"
    flagged = sum(r.flagged for r in rows)
    table = Table(title=f"difficulty calibration over {', '.join(runs)}: {len(rows)} task(s), {flagged} flagged; "
                        f"median solve rate per level: {levels}; median plan steps per level: {step_text}",
                  title_justify="left")
    for name in ("task", "label", "kind", "instances (of bindings)", "script lines", "distinct calls", "plan steps",
                 "ensemble spread", "mutants caught", "runs", "solve rate", "verdict"):
        table.add_column(name, overflow="fold", no_wrap=name == "task")
    for row in rows:
        rate = "-" if row.solve_rate is None else f"{row.solve_rate:.2f}"
        script = row.script
        spread = "-" if row.ensemble_spread is None else f"{row.ensemble_spread:.1%}"
        kept = str(row.instances) if row.bindings in (None, row.instances) else f"{row.instances} of {row.bindings}"
        table.add_row(row.task_id, row.label or "-", row.kind or "-", kept, str(script.lines) if script else "-",
                      str(script.calls) if script else "-", _dash(row.plan_steps), spread,
                      _caught_cell(sensitivity.get(row.task_id)), str(row.runs), rate,
                      _calibration_verdict(row))
    return table


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _calibration_verdict(row: TaskCalibration) -> Text:
    if row.flagged:
        verdict = Text(f"solved like {row.suggested}", style="red")
    elif not row.judged:
        verdict = Text(f"too few runs (< {MIN_RUNS})" if row.label else "no label", style="yellow")
    else:
        verdict = Text("agrees", style="green")
    if row.built_like:
        verdict.append(f"; built like {row.built_like}", style="yellow")
    return verdict


def sensitivity_table(verdicts: list[TaskSensitivity]) -> Table:
    """One row per task: mutants caught of tried, the share of instances each mutant lost
    points on, the ensemble alternatives accepted, and a verdict."""
    passing = sum(v.passes for v in verdicts)
    table = Table(title=f"mistake sensitivity: {passing} of {len(verdicts)} task(s) catch every mutant "
                        f"(a mutant is caught when it scores <= {CAUGHT_AT:g} on >= {MIN_CAUGHT:.0%} of the "
                        "instances)", title_justify="left")
    for name in ("task", "instances", "mutants caught", "share caught per mutant", "alternatives accepted", "verdict"):
        table.add_column(name, overflow="fold")
    for v in verdicts:
        shares = ", ".join(f"{name} {share:.0%}" + (f" ({v.failed[name]} failed)" if name in v.failed else "")
                           for name, share in v.shares.items())
        alternatives = "-" if not v.alternatives else f"{v.alternatives_accepted}/{v.alternatives}"
        table.add_row(v.task_id, str(v.instances), caught_text(v.caught, v.mutants), Text(shares),
                      alternatives, _sensitivity_verdict(v))
    return table


def _caught_cell(verdict: TaskSensitivity | None) -> Text:
    if verdict is None:
        return Text("-")
    return Text(caught_text(verdict.caught, verdict.mutants), style="green" if verdict.passes else "red")


def caught_text(caught: int, tried: int) -> str:
    """'k/n' mutants caught, or '-' when none were tried."""
    return f"{caught}/{tried}" if tried else "-"


def _sensitivity_verdict(verdict: TaskSensitivity) -> Text:
    if verdict.passes:
        return Text("catches every mutant", style="green")
    problems = []
    if verdict.mutants < MIN_MUTANTS:
        problems.append(f"fewer than {MIN_MUTANTS} mutants")
    if verdict.uncaught:
        problems.append(f"misses {', '.join(verdict.uncaught)}")
    if verdict.alternatives_accepted < verdict.alternatives:
        problems.append(f"rejects {verdict.alternatives - verdict.alternatives_accepted} valid alternative(s)")
    return Text("; ".join(problems), style="red")


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
    if args.lite:
        return _write_lite(loaded, args, env)
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


def _write_lite(loaded: list[Instance], args: argparse.Namespace, env: Environment) -> int:
    """Rewrite lite.json from the whole default set (a filter would change the subset)."""
    from runner.benchmark import lite
    from runner.core.fileio import write_atomic

    if args.subset or args.task or args.difficulty:
        raise UserError("instances --lite: the subset is drawn from the whole benchmark; drop --subset/--task/--difficulty")
    text = lite.manifest_text(catalog.select(loaded, []))
    path = env.paths.project_root / lite.LITE_PATH
    changed = not path.is_file() or path.read_text(encoding="utf-8") != text
    write_atomic(path, text)
    written = json.loads(text)
    console.print(f"{path}: {written['instances']} instances of {written['tasks']} tasks "
                  f"({', '.join(f'{n} {s}' for s, n in written['by_subset'].items())})"
                  + ("" if changed else "; unchanged"), soft_wrap=True)
    return 0


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
