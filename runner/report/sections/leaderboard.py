"""Leaderboard (BrainBench Table 1): per (model, paradigm) and subset, the plain mean with a
cluster-bootstrap 95% interval, BrainBench's difficulty-weighted headline and its valid-response
rate, the score above each task's guessing floor, and beside them the chance level and the
best constant answer of every subset."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runner.report.context import OVERALL, ReportContext, scored, slug
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow
from runner.report.stats import cluster_bootstrap

SECTION = "Leaderboard"


def tables(ctx: ReportContext, baselines: dict[str, dict[str, float]]) -> list[ReportTable]:
    """leaderboard, above_floor, brainbench_headline, baselines (chance and constant answer per subset)."""
    groups = [OVERALL, *ctx.subsets()]  # the headline first: wide tables scroll, and it is what is read
    return [_means(ctx, groups, baselines), _above_floor(ctx, groups), _headline(ctx, groups),
            _baselines(ctx, groups, baselines)]


def _in_group(rows: list[InstanceRow], group: str) -> list[InstanceRow]:
    return rows if group == OVERALL else [r for r in rows if r.subset == group]


def _means(ctx: ReportContext, groups: list[str], baselines: dict[str, dict[str, float]]) -> ReportTable:
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="parser", title="parser"), Column(key="instances", title="instance runs", kind="int")]
    columns += [Column(key=f"mean_{slug(g)}", title=g, kind="estimate") for g in groups]
    columns.append(Column(key="above_floor", title=f"{OVERALL} above floor", kind="estimate"))
    rows = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        parsers = sorted({_parser(run.info.parser, run.info.parser_model) for run in ctx.config_runs(config)})
        row: dict[str, Any] = {"model": config.model, "paradigm": config.paradigm, "parser": ", ".join(parsers),
                               "instances": len(rows_)}
        for group in groups:
            row[f"mean_{slug(group)}"] = _estimate(ctx, _in_group(rows_, group), _score)
        row["above_floor"] = _estimate(ctx, rows_, ctx.floors.normalised)
        rows.append(row)
    settings = ctx.settings
    notes = [f"Mean score (0-100) over scored instance runs (infra_error excluded), with a 95% percentile "
             f"interval from a cluster bootstrap over tasks ({settings.resamples} resamples, seed {settings.seed}): "
             "instances of one task are resampled together because they are not independent."]
    chance = "; ".join(f"{g}: chance {baselines[g]['chance']:.1f}, best constant answer {baselines[g]['constant']:.1f}"
                       for g in groups if g in baselines)
    if chance:
        notes.append("Baselines (see the baselines table): " + chance)
    return ReportTable(name="leaderboard", title="Leaderboard: mean score per subset", section=SECTION,
                       columns=columns, rows=rows, notes=notes)


def _parser(parser: str, model: str | None) -> str:
    return parser if model is None else f"{parser}:{model}"


def _score(row: InstanceRow) -> float | None:
    return float(row.score or 0.0)


def _estimate(ctx: ReportContext, rows: list[InstanceRow],
              value: Callable[[InstanceRow], float | None]) -> dict[str, float] | None:
    """The mean of `value` over the rows that have one, with its cluster-bootstrap interval."""
    pairs = [(v, r.task_id) for r in rows if (v := value(r)) is not None]
    if not pairs:
        return None
    interval = cluster_bootstrap([v for v, _ in pairs], [task for _, task in pairs],
                                 resamples=ctx.settings.resamples, seed=ctx.settings.seed)
    return {"value": interval.estimate, "low": interval.low, "high": interval.high}


def _above_floor(ctx: ReportContext, groups: list[str]) -> ReportTable:
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm")]
    columns += [Column(key=f"above_{slug(g)}", title=g, kind="estimate") for g in groups]
    rows = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        row: dict[str, Any] = {"model": config.model, "paradigm": config.paradigm}
        for group in groups:
            row[f"above_{slug(group)}"] = _estimate(ctx, _in_group(rows_, group), ctx.floors.normalised)
        rows.append(row)
    notes = ["Per instance run, (score − floor) / (100 − floor) x 100, the floor being the expected score of its "
             "task's best constant answer (the baselines table): 0 is what a guess earns, 100 a perfect analysis, "
             "below 0 worse than guessing. Mean and 95% cluster-bootstrap interval as in the leaderboard."]
    return ReportTable(name="above_floor", title="Score above the guessing floor", section=SECTION,
                       columns=columns, rows=rows, notes=notes)


def weighted_score(rows: list[InstanceRow]) -> float | None:
    """BrainBench's headline: sum(score x weight) / sum(100 x weight), as a score 0-100."""
    total = sum(r.weight for r in rows)
    if not rows or total <= 0:
        return None
    return 100.0 * sum(float(r.score or 0.0) * r.weight for r in rows) / (100.0 * total)


def valid_response_rate(rows: list[InstanceRow]) -> float | None:
    """BrainBench's VRR: the share of instance runs whose report gave a usable target output."""
    return sum(r.valid_response for r in rows) / len(rows) if rows else None


def _headline(ctx: ReportContext, groups: list[str]) -> ReportTable:
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm")]
    for group in groups:
        columns += [Column(key=f"weighted_{slug(group)}", title=f"{group} weighted", kind="score"),
                    Column(key=f"vrr_{slug(group)}", title=f"{group} VRR", kind="share")]
    rows = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        row: dict[str, Any] = {"model": config.model, "paradigm": config.paradigm}
        for group in groups:
            in_group = _in_group(rows_, group)
            row[f"weighted_{slug(group)}"] = weighted_score(in_group)
            row[f"vrr_{slug(group)}"] = valid_response_rate(in_group)
        rows.append(row)
    notes = ["BrainBench's headline: sum(score x weight) / sum(100 x weight) x 100, the weight being an "
             "instance's numeric meta_info.difficult (our instances write their level's number there: easy 1, medium 2, hard 3). "
             "VRR: share of scored instance runs whose report yielded at least one target field."]
    return ReportTable(name="brainbench_headline", title="BrainBench headline: weighted score and valid-response rate",
                       section=SECTION, columns=columns, rows=rows, notes=notes)


def _baselines(ctx: ReportContext, groups: list[str], baselines: dict[str, dict[str, float]]) -> ReportTable:
    columns = [Column(key="subset", title="subset"), Column(key="instances", title="instances", kind="int"),
               Column(key="tasks", title="tasks", kind="int"), Column(key="chance", title="chance", kind="score"),
               Column(key="constant", title="best constant answer", kind="score")]
    rows = [{"subset": g, **baselines[g]} for g in groups if g in baselines]
    notes = ["Per instance, the weighted mean over its metrics of each metric's chance level, and of the expected "
             "score of its task's best constant answer over the task's whole instance set, as eval recorded it "
             "(instances --stats); units no constant can answer (artifacts, judged text) count 0. Subset value: the "
             "mean over its instances. The same figure whichever instances a run drew."]
    if ctx.floors.held_out:
        notes.append(f"{len(ctx.floors.held_out)} task(s) come from runs that did not record the floor "
                     f"({', '.join(ctx.floors.held_out[:6])}{' ...' if len(ctx.floors.held_out) > 6 else ''}): "
                     "there, each case's constant is the answer best on the run's other cases of its task (held "
                     "out), and a task with one case run counts its chance level.")
    return ReportTable(name="baselines", title="Chance level and best constant answer", section=SECTION,
                       columns=columns, rows=rows, notes=notes)
