"""Leak-resistant variants: per configuration and transformation, the mean score on original
instances against their variants (`truth --variants`), over the pairs a configuration ran
both of. A model that scores far better on the public originals than on variants that keep
the task's meaning may have seen the originals' answers: the gap is a memorisation signal."""
from __future__ import annotations

from runner.report.context import ReportContext, scored
from runner.report.model import Column, ReportTable

SECTION = "Variants"
ALL = "all"


def tables(ctx: ReportContext) -> list[ReportTable]:
    """variants: one row per configuration and transformation (and all of them), when the
    runs hold variants together with their originals."""
    rows = []
    for config in ctx.configurations():
        config_rows = scored(ctx.config_rows(config))
        originals: dict[str, list[float]] = {}
        for row in config_rows:
            if row.variant_of is None:
                originals.setdefault(row.case_id, []).append(float(row.score or 0.0))
        pairs = [(row.transform or "?", _mean(originals[row.variant_of]), float(row.score or 0.0))
                 for row in config_rows if row.variant_of in originals]
        for transform in [*sorted({p[0] for p in pairs}), ALL]:
            chosen = [p for p in pairs if transform in (ALL, p[0])]
            if not chosen:
                continue
            original, variant = _mean([p[1] for p in chosen]), _mean([p[2] for p in chosen])
            rows.append({"model": config.model, "paradigm": config.paradigm, "transform": transform,
                         "pairs": len(chosen), "original": original, "variant": variant,
                         "gap": original - variant})
    if not rows:
        return []
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="transform", title="transformation"), Column(key="pairs", title="variant runs", kind="int"),
               Column(key="original", title="original mean", kind="score"),
               Column(key="variant", title="variant mean", kind="score"),
               Column(key="gap", title="gap (original - variant)", kind="score")]
    notes = ["Each variant run is paired with the mean score of its original instance in the same configuration. "
             "Variants recompute the ground truth with the same reference script after a transformation the task "
             "declares safe (instances/tasks/*.json, 'variants'); a large positive gap is a memorisation signal."]
    return [ReportTable(name="variants", title="Original against variant scores", section=SECTION,
                        columns=columns, rows=rows, notes=notes)]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
