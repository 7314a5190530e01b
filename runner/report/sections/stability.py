"""Within-task stability (BrainBench Figure 5): MPAD per task, the mean pairwise absolute
difference of the normalised (0-1) scores of the task's instances, and its mean per
configuration and subset. Lower is more stable. With repeats, an instance's score is its mean
over epochs."""
from __future__ import annotations

from runner.report.context import OVERALL, ReportContext, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow
from runner.report.stats import mpad

SECTION = "Stability"


def tables(ctx: ReportContext) -> list[ReportTable]:
    """stability (per task) and stability_summary (per configuration and subset)."""
    per_task = _per_task(ctx)
    return [per_task, _summary(ctx, per_task)]


def instance_means(rows: list[InstanceRow]) -> dict[str, float]:
    """Each case's score, averaged over its epochs."""
    by_case: dict[str, list[float]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(float(row.score or 0.0))
    return {case: sum(v) / len(v) for case, v in by_case.items()}


def _per_task(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        tasks: dict[tuple[str, str], list[InstanceRow]] = {}
        for row in rows_:
            tasks.setdefault((row.subset, row.task_id), []).append(row)
        for (subset, task), task_rows in tasks.items():
            scores = list(instance_means(task_rows).values())
            rows.append({"model": config.model, "paradigm": config.paradigm, "subset": subset, "task": task,
                         "instances": len(scores), "mpad": mpad(scores)})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="subset", title="subset"), Column(key="task", title="task"),
               Column(key="instances", title="instances", kind="int"), Column(key="mpad", title="MPAD", kind="float")]
    notes = ["MPAD = 2/(n(n−1)) Σ_{i<j} |s_i − s_j| over the task's instance scores normalised to 0-1; "
             "tasks with one instance have none."]
    return ReportTable(name="stability", title="Within-task stability (MPAD) per task", section=SECTION,
                       columns=columns, rows=rows, notes=notes)


def _summary(ctx: ReportContext, per_task: ReportTable) -> ReportTable:
    groups: dict[tuple[str, str, str], list[float]] = {}
    for row in per_task.rows:
        if row["mpad"] is not None:
            groups.setdefault((row["model"], row["paradigm"], row["subset"]), []).append(row["mpad"])
    configs = list(dict.fromkeys((m, p) for m, p, _ in groups))
    rows = []
    for model, paradigm in configs:  # each configuration's subsets, then its overall
        mine = {s: v for (m, p, s), v in groups.items() if (m, p) == (model, paradigm)}
        mine[OVERALL] = [x for v in mine.values() for x in v]
        rows += [{"model": model, "paradigm": paradigm, "subset": s, "tasks": len(v), "mean_mpad": sum(v) / len(v)}
                 for s, v in mine.items()]
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="subset", title="subset"), Column(key="tasks", title="tasks", kind="int"),
               Column(key="mean_mpad", title="mean MPAD", kind="float")]
    return ReportTable(name="stability_summary", title="Mean MPAD per configuration", section=SECTION,
                       columns=columns, rows=rows)
