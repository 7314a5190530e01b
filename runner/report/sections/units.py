"""Validation units (BrainBench Figure 4): the mean score of each unit family (numeric,
categorical, set, sequence, semantic, artifact; EEGAgentBench's events) per configuration, and
the paradigm gap B − A per model and family."""
from __future__ import annotations

from runner.report.context import ReportContext, mean, scored
from runner.report.model import Column, ReportTable

SECTION = "Validation units"
FAMILIES = ("numeric", "categorical", "set", "sequence", "semantic", "artifact", "events", "other")


def tables(ctx: ReportContext) -> list[ReportTable]:
    """units, and unit_gap when a model ran under several paradigms."""
    means = _means(ctx)
    return [means, _gaps(ctx, means)] if ctx.paradigm_pairs() else [means]


def _means(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        by_family: dict[str, list[float]] = {}
        for row in scored(ctx.config_rows(config)):
            for unit in row.units:
                if unit.scored and unit.score is not None:
                    by_family.setdefault(unit.family, []).append(100.0 * unit.score)
        for family in sorted(by_family, key=_family_rank):
            rows.append({"model": config.model, "paradigm": config.paradigm, "family": family,
                         "mean": mean(by_family[family]), "units": len(by_family[family])})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="family", title="unit family"), Column(key="mean", title="mean", kind="score"),
               Column(key="units", title="scored units", kind="int")]
    notes = ["Mean of the unit scores (0-100) of every scored unit of that family in scored instance runs; "
             "unscored units (no judge, no verdict) are left out."]
    return ReportTable(name="units", title="Mean score per validation-unit family", section=SECTION,
                       columns=columns, rows=rows, notes=notes)


def _family_rank(family: str) -> int:
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


def _gaps(ctx: ReportContext, means: ReportTable) -> ReportTable:
    value = {(r["model"], r["paradigm"], r["family"]): r["mean"] for r in means.rows}
    rows = []
    for a, b in ctx.paradigm_pairs():
        for family in FAMILIES:
            mean_a, mean_b = value.get((a.model, a.paradigm, family)), value.get((b.model, b.paradigm, family))
            if mean_a is not None and mean_b is not None:
                rows.append({"model": a.model, "a": a.paradigm, "b": b.paradigm, "family": family,
                             "mean_a": mean_a, "mean_b": mean_b, "gap": mean_b - mean_a})
    columns = [Column(key="model", title="model"), Column(key="a", title="A"), Column(key="b", title="B"),
               Column(key="family", title="unit family"), Column(key="mean_a", title="mean A", kind="score"),
               Column(key="mean_b", title="mean B", kind="score"), Column(key="gap", title="gap B − A", kind="float")]
    return ReportTable(name="unit_gap", title="Paradigm gap per unit family", section=SECTION,
                       columns=columns, rows=rows)
