"""Chance level and best constant answer per subset: the mean over a subset's scored instance
runs of each run's floor (runner/report/floors.py)."""
from __future__ import annotations

from runner.report.context import OVERALL, ReportContext, scored
from runner.report.rows import InstanceRow


def subset_baselines(ctx: ReportContext) -> dict[str, dict[str, float]]:
    """{subset or "overall": {instances, tasks, chance, constant}} with scores 0-100."""
    known = [(row, levels) for row in scored(ctx.rows) if (levels := ctx.floors.of(row)) is not None]
    if not known:
        return {}
    groups: dict[str, list[tuple[InstanceRow, tuple[float, float]]]] = {OVERALL: known}
    for row, levels in known:
        groups.setdefault(row.subset, []).append((row, levels))
    return {name: {"instances": len({row.case_id for row, _ in rows}), "tasks": len({row.task_id for row, _ in rows}),
                   "chance": sum(levels[0] for _, levels in rows) / len(rows),
                   "constant": sum(levels[1] for _, levels in rows) / len(rows)}
            for name, rows in groups.items()}
