"""Difficulty (BrainBench Table 2): mean score per subset and difficulty for every
configuration, Δ = paradigm B − paradigm A for the same model, and the Difficulty Advantage
Index (the least-squares slope of Δ over the levels easy 1, medium 2, hard 3)."""
from __future__ import annotations

from runner.report.context import OVERALL, Configuration, ReportContext, mean, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow
from runner.report.stats import dai
from validation.instance import DIFFICULTY_LEVELS

SECTION = "Difficulty"
LEVELS = tuple(DIFFICULTY_LEVELS)


def tables(ctx: ReportContext) -> list[ReportTable]:
    """difficulty, and when a model ran under several paradigms difficulty_delta and dai."""
    result = [_means(ctx)]
    if ctx.paradigm_pairs():
        deltas = _deltas(ctx)
        result += [deltas, _dai(ctx, deltas)]
    return result


def _cells(rows: list[InstanceRow], subset: str, level: str) -> list[float]:
    return [float(r.score or 0.0) for r in rows if r.difficulty == level and subset in (OVERALL, r.subset)]


def _means(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        for subset in [*ctx.subsets(), OVERALL]:
            for level in LEVELS:
                values = _cells(rows_, subset, level)
                if values:
                    rows.append({"model": config.model, "paradigm": config.paradigm, "subset": subset,
                                 "difficulty": level, "mean": mean(values), "instances": len(values)})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="subset", title="subset"), Column(key="difficulty", title="difficulty"),
               Column(key="mean", title="mean", kind="score"), Column(key="instances", title="instance runs", kind="int")]
    return ReportTable(name="difficulty", title="Mean score by subset and difficulty", section=SECTION,
                       columns=columns, rows=rows)


def _level_means(ctx: ReportContext, config: Configuration, subset: str) -> dict[str, float]:
    rows_ = scored(ctx.config_rows(config))
    return {level: m for level in LEVELS if (m := mean(_cells(rows_, subset, level))) is not None}


def _deltas(ctx: ReportContext) -> ReportTable:
    rows = []
    for a, b in ctx.paradigm_pairs():
        for subset in [*ctx.subsets(), OVERALL]:
            mean_a, mean_b = _level_means(ctx, a, subset), _level_means(ctx, b, subset)
            for level in LEVELS:
                if level in mean_a and level in mean_b:
                    rows.append({"model": a.model, "a": a.paradigm, "b": b.paradigm, "subset": subset,
                                 "difficulty": level, "mean_a": mean_a[level], "mean_b": mean_b[level],
                                 "delta": mean_b[level] - mean_a[level]})
    columns = [Column(key="model", title="model"), Column(key="a", title="A"), Column(key="b", title="B"),
               Column(key="subset", title="subset"), Column(key="difficulty", title="difficulty"),
               Column(key="mean_a", title="mean A", kind="score"), Column(key="mean_b", title="mean B", kind="score"),
               Column(key="delta", title="Δ = B − A", kind="float")]
    return ReportTable(name="difficulty_delta", title="Paradigm difference by difficulty (Δ = B − A)",
                       section=SECTION, columns=columns, rows=rows)


def _dai(ctx: ReportContext, deltas: ReportTable) -> ReportTable:
    rows = []
    for a, b in ctx.paradigm_pairs():
        for subset in [*ctx.subsets(), OVERALL]:
            by_level = {DIFFICULTY_LEVELS[r["difficulty"]]: float(r["delta"]) for r in deltas.rows
                        if (r["model"], r["a"], r["b"], r["subset"]) == (a.model, a.paradigm, b.paradigm, subset)}
            rows.append({"model": a.model, "a": a.paradigm, "b": b.paradigm, "subset": subset,
                         "levels": len(by_level), "dai": dai(by_level)})
    columns = [Column(key="model", title="model"), Column(key="a", title="A"), Column(key="b", title="B"),
               Column(key="subset", title="subset"), Column(key="levels", title="levels", kind="int"),
               Column(key="dai", title="DAI", kind="float")]
    notes = ["Difficulty Advantage Index: the least-squares slope of Δ = mean(B) − mean(A) over the difficulty "
             "levels present (easy 1, medium 2, hard 3), in score points per level. Positive: B's advantage grows "
             "with difficulty; negative: it shrinks. Needs two levels."]
    return ReportTable(name="dai", title="Difficulty Advantage Index", section=SECTION, columns=columns,
                       rows=rows, notes=notes)
