"""EEGAgentBench (its Table 2 and figures): the run-level metrics of several runs side by
side, T2 accuracy by SNR level and its confusion matrix, T5 miss against over-alarm rate, and
tool calls per task (tools and hybrid paradigms). Computed from the instances each run saved."""
from __future__ import annotations

from collections import Counter
from typing import Any

from runner.benchmark.agentbench.run_metrics import ROWS, run_metrics
from runner.report.context import ReportContext, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow, RunData
from validation.agentbench.aggregate import AgentBenchMetrics
from validation.agentbench.answers import read_label
from validation.instance import AGENTBENCH_SUBSET

SECTION = "EEGAgentBench"
T2_TASK = "eab_t2_artifact"
T2_METRIC = "answer"  # the task's one metric, its label


def tables(ctx: ReportContext) -> list[ReportTable]:
    """The EEGAgentBench tables, for the runs holding T-instances."""
    metrics = {run.run_id: m for run in ctx.runs if (m := _metrics(run)) is not None}
    result = []
    if metrics:
        result.append(_metrics_table(ctx, metrics))
        result += [t for t in (_t2_snr(ctx), _t2_confusion(ctx), _t5(ctx, metrics)) if t.rows]
    calls = _tool_calls(ctx)
    if calls.rows:
        result.append(calls)
    return result


def _metrics(run: RunData) -> AgentBenchMetrics | None:
    if not any(r.subset == AGENTBENCH_SUBSET for r in run.rows):
        return None
    return run_metrics(run.store)


def _metrics_table(ctx: ReportContext, metrics: dict[str, AgentBenchMetrics]) -> ReportTable:
    runs = [run for run in ctx.runs if run.run_id in metrics]
    families = sorted({f for m in metrics.values() for f in m.families})
    rows: list[dict[str, Any]] = []
    for family in families:
        for field, label in (("primary", "primary"), *ROWS):
            values = {run.run_id: _family_value(metrics[run.run_id], family, field) for run in runs}
            if any(v is not None for v in values.values()):
                rows.append({"family": family, "metric": label, **values})
    rows.append({"family": "all", "metric": "Overall (mean of primary metrics)",
                 **{run.run_id: metrics[run.run_id].overall for run in runs}})
    columns = [Column(key="family", title="family"), Column(key="metric", title="metric")]
    columns += [Column(key=run.run_id, title=f"{run.info.label} ({run.run_id})", kind="float") for run in runs]
    return ReportTable(name="agentbench_metrics", title="EEGAgentBench metrics", section=SECTION, columns=columns,
                       rows=rows, notes=["Computed from each run's saved instances (epoch 1), never the catalog."])


def _family_value(metrics: AgentBenchMetrics, family: str, field: str) -> float | None:
    found = metrics.families.get(family)
    value = getattr(found, field, None) if found is not None else None
    return float(value) if isinstance(value, (int, float)) else None


def _t2_rows(run: RunData) -> list[tuple[InstanceRow, str, str]]:
    """(row, reference label, predicted label or "unparseable") of each scored T2 run."""
    found = []
    for row in scored(run.rows):
        unit = next((u for u in row.units if u.metric_id == T2_METRIC), None)
        if row.task_id != T2_TASK or unit is None or unit.expected is None:
            continue
        labels = [str(x) for x in row.reference.get("labels", [])] or ["clean", "ocular", "muscle"]
        predicted = read_label(unit.predicted, labels) if unit.predicted is not None else None
        found.append((row, str(unit.expected), predicted or "unparseable"))
    return found


def _t2_snr(ctx: ReportContext) -> ReportTable:
    rows = []
    for run in ctx.runs:
        by_snr: dict[Any, list[bool]] = {}
        for row, truth, predicted in _t2_rows(run):
            by_snr.setdefault(row.reference.get("snr_db"), []).append(truth == predicted)
        for snr in sorted(by_snr, key=lambda s: (s is None, s if isinstance(s, (int, float)) else 0)):
            hits = by_snr[snr]
            rows.append({"run": run.run_id, "label": run.info.label, "snr_db": snr, "instances": len(hits),
                         "accuracy": sum(hits) / len(hits)})
    columns = [Column(key="label", title="model · paradigm"), Column(key="run", title="run"),
               Column(key="snr_db", title="SNR (dB)"), Column(key="instances", title="instances", kind="int"),
               Column(key="accuracy", title="accuracy", kind="share")]
    return ReportTable(name="t2_snr", title="T2 artifact recognition: accuracy by SNR", section=SECTION,
                       columns=columns, rows=rows)


def _t2_confusion(ctx: ReportContext) -> ReportTable:
    rows = []
    for run in ctx.runs:
        counts = Counter((truth, predicted) for _, truth, predicted in _t2_rows(run))
        rows += [{"run": run.run_id, "label": run.info.label, "true": t, "predicted": p, "count": n}
                 for (t, p), n in sorted(counts.items())]
    columns = [Column(key="label", title="model · paradigm"), Column(key="run", title="run"),
               Column(key="true", title="reference"), Column(key="predicted", title="predicted"),
               Column(key="count", title="count", kind="int")]
    return ReportTable(name="t2_confusion", title="T2 confusion matrix (long form)", section=SECTION,
                       columns=columns, rows=rows)


def _t5(ctx: ReportContext, metrics: dict[str, AgentBenchMetrics]) -> ReportTable:
    rows = []
    for run in ctx.runs:
        found = metrics.get(run.run_id)
        family = found.families.get("T5") if found is not None else None
        if family is not None:
            rows.append({"run": run.run_id, "label": run.info.label, "miss_rate": family.miss_rate,
                         "over_alarm_rate": family.over_alarm_rate})
    columns = [Column(key="label", title="model · paradigm"), Column(key="run", title="run"),
               Column(key="miss_rate", title="miss rate", kind="share"),
               Column(key="over_alarm_rate", title="over-alarm rate", kind="share")]
    return ReportTable(name="t5_alarms", title="T5 seizure detection: miss against over-alarm rate",
                       section=SECTION, columns=columns, rows=rows)


def _tool_calls(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        counts: Counter[tuple[str, str]] = Counter()
        for row in ctx.config_rows(config):
            for tool, n in row.tool_calls.items():
                counts[(row.task_id, tool)] += n
        rows += [{"model": config.model, "paradigm": config.paradigm, "task": task, "tool": tool, "calls": n}
                 for (task, tool), n in sorted(counts.items())]
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="task", title="task"), Column(key="tool", title="tool"),
               Column(key="calls", title="calls", kind="int")]
    return ReportTable(name="tool_calls", title="Tool calls per task", section=SECTION, columns=columns, rows=rows)
