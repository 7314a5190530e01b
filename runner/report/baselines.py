"""Chance level and best constant answer per subset, from the instances the runs saved (the
same constant-answer baselines as `eegbench instances --stats`)."""
from __future__ import annotations

from runner.report.context import OVERALL, ReportContext
from runner.run.store import MissingRecord
from validation.baseline import task_baselines
from validation.instance import Instance


def subset_baselines(ctx: ReportContext) -> dict[str, dict[str, float]]:
    """{subset or "overall": {instances, tasks, chance, constant}} with scores 0-100."""
    instances = _saved_instances(ctx)
    if not instances:
        return {}
    levels: dict[tuple[str, str], tuple[float, float]] = {}
    for task in task_baselines(list(instances.values())):
        for metric in task.metrics:
            levels[(task.task_id, metric.metric_id)] = (metric.chance, metric.baseline)
    per_instance = {case: _instance_levels(inst, levels) for case, inst in instances.items()}
    groups: dict[str, list[str]] = {OVERALL: list(instances)}
    for case, inst in instances.items():
        groups.setdefault(inst.meta_info.bench_subset, []).append(case)
    return {name: _group(cases, instances, per_instance) for name, cases in groups.items()}


def _saved_instances(ctx: ReportContext) -> dict[str, Instance]:
    """One saved instance per case id (the first run holding it)."""
    found: dict[str, Instance] = {}
    for run in ctx.runs:
        for row in run.rows:
            if row.case_id in found:
                continue
            try:
                found[row.case_id] = run.store.saved_instance(row.key)
            except MissingRecord:
                continue
    return found


def _instance_levels(instance: Instance, levels: dict[tuple[str, str], tuple[float, float]]) -> tuple[float, float]:
    metrics = [m for m in instance.eval_config.metrics if m.weight > 0]
    total = sum(m.weight for m in metrics)
    if total <= 0:
        return 0.0, 0.0
    chance = sum(m.weight * levels.get((instance.task_id, m.metric_id), (0.0, 0.0))[0] for m in metrics)
    constant = sum(m.weight * levels.get((instance.task_id, m.metric_id), (0.0, 0.0))[1] for m in metrics)
    return 100.0 * chance / total, 100.0 * constant / total


def _group(cases: list[str], instances: dict[str, Instance],
           per_instance: dict[str, tuple[float, float]]) -> dict[str, float]:
    return {
        "instances": len(cases),
        "tasks": len({instances[c].task_id for c in cases}),
        "chance": sum(per_instance[c][0] for c in cases) / len(cases),
        "constant": sum(per_instance[c][1] for c in cases) / len(cases),
    }
