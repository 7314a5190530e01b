"""One or many runs -> a Report: load, check comparability, compute every section."""
from __future__ import annotations

from pathlib import Path

from runner.report import baselines, comparability
from runner.report.context import Configuration, ReportContext, Settings
from runner.report.model import Report
from runner.report.rows import RunData, load_run
from runner.report.sections import (
    agentbench,
    cost,
    difficulty,
    failures,
    instances,
    kinds,
    leaderboard,
    paired,
    repeats,
    stability,
    tasks,
    units,
    variants,
)
from runner.run.store import open_run
from validation.errors import UserError


def load_runs(names: list[str], runs_dir: Path, scores: str | None = None) -> list[RunData]:
    """Each run by name or path, read through its store; `scores` picks a named re-score."""
    if not names:
        raise UserError("report: name at least one run")
    if len(set(names)) != len(names):
        raise UserError(f"report: a run is named twice ({', '.join(names)})")
    return [load_run(open_run(name, runs_dir), scores) for name in names]


def build_report(runs: list[RunData], settings: Settings, *, intersect: bool = False,
                 pairs: list[tuple[Configuration, Configuration]] | None = None) -> Report:
    """Every section of the report; refuses runs that cannot be ranked together (see
    comparability) unless `intersect`."""
    kept, warnings = comparability.comparable(runs, intersect)
    ctx = ReportContext(runs=kept, settings=settings)
    report = Report(title=_title(kept), runs=[run.info for run in kept], warnings=warnings,
                    settings={"bootstrap resamples": settings.resamples, "seed": settings.seed,
                              "pass threshold": settings.pass_threshold, "intersect": intersect,
                              "prices": settings.prices.source if settings.prices else None})
    report.add(instances.runs_table(report.runs))
    for table in leaderboard.tables(ctx, baselines.subset_baselines(ctx)):
        report.add(table)
    for module_tables in (difficulty.tables(ctx), kinds.tables(ctx), units.tables(ctx), stability.tables(ctx), repeats.tables(ctx),
                          failures.tables(ctx), cost.tables(ctx), agentbench.tables(ctx), variants.tables(ctx),
                          paired.tables(ctx, pairs), tasks.tables(ctx)):
        for table in module_tables:
            report.add(table)
    report.add(instances.instances_table(ctx))
    return report


def _title(runs: list[RunData]) -> str:
    labels = list(dict.fromkeys(run.info.label for run in runs))
    return "eegbench report: " + ", ".join(labels)
