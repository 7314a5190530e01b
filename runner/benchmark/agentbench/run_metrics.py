"""EEGAgentBench metrics of a run: its finished T-instances and their parsed answers ->
validation.agentbench.aggregate -> a table for `eegbench logs` / `eegbench show RUN`.

The answers are what scoring parsed (each instance's score); the metric params (ground truth,
label set, duration, subject, epochs) come from the instance as the run saved and scored it.
Instances that ended in an infrastructure error were never scored and are left out (they are
not model failures); every scored instance counts, an unparseable answer as wrong.

A run made with --epochs holds each instance several times; the metrics are computed over one
epoch at a time (epoch 1 unless asked otherwise), never over a mix of epochs, so every
instance counts once, as in the paper.
"""
from __future__ import annotations

from rich.table import Table

from runner.run.store import RunStore
from validation.agentbench.aggregate import AgentBenchMetrics, AnswerRecord, aggregate, is_agentbench
from validation.agentbench.units import AGENTBENCH_TYPES
from validation.instance import AGENTBENCH_SUBSET

ROWS = (
    ("accuracy", "Accuracy"), ("macro_f1", "Macro-F1"), ("kappa", "Cohen's kappa"),
    ("recording_macro_f1", "Macro-F1 (recording mean)"), ("recording_kappa", "kappa (recording mean)"),
    ("event_f1", "Event-F1 (subject mean)"), ("sensitivity", "Sensitivity"),
    ("precision", "Precision"), ("fp_per_24h", "FP/24h"), ("dice_at_seizure", "Dice@seizure"),
    ("miss_rate", "Miss rate"), ("over_alarm_rate", "Over-alarm rate"),
)


def answer_records(store: RunStore, epoch: int = 1) -> list[AnswerRecord]:
    """One record per scored EEGAgentBench instance of the run in `epoch`, from its saved instance."""
    records = []
    for result in store.finished().values():
        if result.bench_subset != AGENTBENCH_SUBSET or result.epoch != epoch:
            continue
        score = store.read_score(result.key)
        if score is None:
            continue
        instance = store.saved_instance(result.key)
        metric = next((m for m in instance.eval_config.metrics if m.type in AGENTBENCH_TYPES), None)
        if metric is None or not is_agentbench(metric.params):
            continue
        predicted = next((m.predicted for m in score.metrics if m.metric_id == metric.metric_id), None)
        records.append(AnswerRecord(case_id=result.case_id, params=metric.params, answer=predicted))
    return records


def run_metrics(store: RunStore, epoch: int = 1) -> AgentBenchMetrics | None:
    """The run-level EEGAgentBench metrics of one epoch (the first by default), or None when
    the run holds no T-instance in that epoch."""
    records = answer_records(store, epoch)
    return aggregate(records) if records else None


def metrics_table(metrics: AgentBenchMetrics, title: str = "EEGAgentBench metrics") -> Table:
    """Per family: instances, unparseable answers, the primary and secondary metrics."""
    families = list(metrics.families)
    table = Table(title=title)
    table.add_column("metric")
    for name in families:
        table.add_column(name, justify="right")
    table.add_row("instances", *(str(metrics.families[f].instances) for f in families))
    table.add_row("unparseable answers", *(str(metrics.families[f].unparseable) for f in families))
    table.add_row("primary", *(f"{metrics.families[f].primary_metric} {metrics.families[f].primary:.3f}"
                               for f in families))
    for field, label in ROWS:
        values = [getattr(metrics.families[f], field) for f in families]
        if any(v is not None for v in values):
            table.add_row(label, *("-" if v is None else f"{v:.3f}" for v in values))
    overall = "-" if metrics.overall is None else f"{metrics.overall:.3f}"
    table.caption = (f"Overall {overall} (mean of the primary metrics of "
                     f"{metrics.overall_families}/6 families)")
    return table
