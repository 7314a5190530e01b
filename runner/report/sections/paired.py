"""Paired comparison of two configurations on the cases both hold (`eegbench compare`, and
pairwise in the report): the mean difference with a paired cluster-bootstrap interval, sign
and Wilcoxon tests, per-task wins, ties and losses, and the instances one passes and the
other fails."""
from __future__ import annotations

from typing import Any

from runner.report.context import Configuration, ReportContext, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow
from runner.report.stats import paired_test

SECTION = "Paired comparisons"
MAX_PAIRS = 28  # 8 configurations; beyond that the report compares each with the first


def tables(ctx: ReportContext, pairs: list[tuple[Configuration, Configuration]] | None = None) -> list[ReportTable]:
    """paired, task_wins, flips for every pair of configurations (or the pairs given)."""
    chosen = pairs if pairs is not None else all_pairs(ctx)
    if not chosen:
        return []
    return [_summary(ctx, chosen), _task_wins(ctx, chosen), _flips(ctx, chosen)]


def all_pairs(ctx: ReportContext) -> list[tuple[Configuration, Configuration]]:
    """Every pair of configurations, or each against the first when there are too many."""
    configs = ctx.configurations()
    pairs = [(a, b) for i, a in enumerate(configs) for b in configs[i + 1:]]
    return pairs if len(pairs) <= MAX_PAIRS else [(configs[0], b) for b in configs[1:]]


def paired_scores(ctx: ReportContext, a: Configuration, b: Configuration) -> list[tuple[InstanceRow, InstanceRow]]:
    """Rows of A and B for the same (case, epoch), in A's order; infra errors left out."""
    rows_b = {(r.case_id, r.epoch): r for r in scored(ctx.config_rows(b))}
    return [(r, rows_b[(r.case_id, r.epoch)]) for r in scored(ctx.config_rows(a)) if (r.case_id, r.epoch) in rows_b]


def _summary(ctx: ReportContext, pairs: list[tuple[Configuration, Configuration]]) -> ReportTable:
    rows = []
    verdicts = []
    for a, b in pairs:
        matched = paired_scores(ctx, a, b)
        row: dict[str, Any] = {"a": a.label, "b": b.label, "shared": len(matched)}
        if matched:
            row.update(_compared(ctx, matched))
            verdicts.append(_verdict(a, b, row))
        rows.append(row)
    columns = [Column(key="a", title="A"), Column(key="b", title="B"), Column(key="shared", title="shared runs", kind="int"),
               Column(key="mean_a", title="mean A", kind="score"), Column(key="mean_b", title="mean B", kind="score"),
               Column(key="diff", title="B − A", kind="estimate"),
               Column(key="mdd", title="detectable at 80% power", kind="score"),
               Column(key="normalised_diff", title="B − A above floor", kind="score"),
               Column(key="sign_p", title="sign test p", kind="p"),
               Column(key="wilcoxon_p", title="Wilcoxon p", kind="p"), Column(key="wins", title="B better", kind="int"),
               Column(key="ties", title="ties", kind="int"), Column(key="losses", title="B worse", kind="int")]
    notes = [f"On the (case, epoch) runs both hold. B − A with a 95% paired cluster-bootstrap interval over tasks "
             f"({ctx.settings.resamples} resamples, seed {ctx.settings.seed}); two-sided exact sign test (ties dropped) "
             "and Wilcoxon signed-rank test on the instance differences.",
             "Detectable at 80% power: the smallest true difference this comparison finds 4 times in 5 at a "
             "two-sided 5% level, (1.96 + 0.84) x the standard error of the mean difference, paired by instance and "
             "clustered by task (cluster-robust). B − A above floor: the same difference on scores normalised to each "
             "task's guessing floor, (score − floor) / (100 − floor) x 100.", *verdicts]
    return ReportTable(name="paired", title="Paired comparisons", section=SECTION, columns=columns, rows=rows,
                       notes=notes)


def _compared(ctx: ReportContext, matched: list[tuple[InstanceRow, InstanceRow]]) -> dict[str, Any]:
    """One pair's means, difference with its interval, detectable difference and tests."""
    scores_a = [float(x.score or 0.0) for x, _ in matched]
    scores_b = [float(y.score or 0.0) for _, y in matched]
    test = paired_test(scores_a, scores_b, [x.task_id for x, _ in matched],
                       resamples=ctx.settings.resamples, seed=ctx.settings.seed)
    normalised = [(ctx.floors.normalised(x), ctx.floors.normalised(y)) for x, y in matched]
    known = [(na, nb) for na, nb in normalised if na is not None and nb is not None]
    return {"mean_a": sum(scores_a) / len(scores_a), "mean_b": sum(scores_b) / len(scores_b),
            "diff": {"value": test.mean_difference, "low": test.ci.low, "high": test.ci.high}, "mdd": test.mdd,
            "normalised_diff": sum(nb - na for na, nb in known) / len(known) if known else None,
            "sign_p": test.sign_p, "wilcoxon_p": test.wilcoxon_p,
            "wins": test.wins, "ties": test.ties, "losses": test.losses}


def _verdict(a: Configuration, b: Configuration, row: dict[str, Any]) -> str:
    """One plain sentence on whether the observed difference could be told from no difference."""
    diff, mdd = row["diff"]["value"], row["mdd"]
    if mdd is None:
        return (f"{b.label} against {a.label}: the runs share instances of one task only, so no detectable "
                "difference can be estimated.")
    if abs(diff) < mdd:
        return (f"{b.label} against {a.label}: the difference ({diff:+.1f}) is below what this comparison can "
                f"detect ({mdd:.1f} points at 80% power): it does not tell the two apart; more instances would.")
    return (f"{b.label} against {a.label}: the difference ({diff:+.1f}) exceeds the detectable difference "
            f"({mdd:.1f}); its interval and tests say how sure it is.")


def _task_wins(ctx: ReportContext, pairs: list[tuple[Configuration, Configuration]]) -> ReportTable:
    rows = []
    for a, b in pairs:
        by_task: dict[str, list[tuple[float, float]]] = {}
        for x, y in paired_scores(ctx, a, b):
            by_task.setdefault(x.task_id, []).append((float(x.score or 0.0), float(y.score or 0.0)))
        for task, scores in sorted(by_task.items()):
            mean_a = sum(s for s, _ in scores) / len(scores)
            mean_b = sum(s for _, s in scores) / len(scores)
            result = "B" if mean_b > mean_a else "A" if mean_a > mean_b else "tie"
            rows.append({"a": a.label, "b": b.label, "task": task, "instances": len(scores),
                         "mean_a": mean_a, "mean_b": mean_b, "better": result})
    columns = [Column(key="a", title="A"), Column(key="b", title="B"), Column(key="task", title="task"),
               Column(key="instances", title="runs", kind="int"), Column(key="mean_a", title="mean A", kind="score"),
               Column(key="mean_b", title="mean B", kind="score"), Column(key="better", title="better")]
    return ReportTable(name="task_wins", title="Per-task wins, ties and losses", section=SECTION,
                       columns=columns, rows=rows)


def _flips(ctx: ReportContext, pairs: list[tuple[Configuration, Configuration]]) -> ReportTable:
    threshold = ctx.settings.pass_threshold
    rows = []
    for a, b in pairs:
        for x, y in paired_scores(ctx, a, b):
            if (float(x.score or 0.0) >= threshold) != (float(y.score or 0.0) >= threshold):
                rows.append({"a": a.label, "b": b.label, "case_id": x.case_id, "epoch": x.epoch,
                             "run_a": x.run_id, "run_b": y.run_id, "score_a": x.score, "score_b": y.score,
                             "passes": "A" if float(x.score or 0.0) >= threshold else "B"})
    columns = [Column(key="a", title="A"), Column(key="b", title="B"), Column(key="case_id", title="case"),
               Column(key="epoch", title="epoch", kind="int"), Column(key="score_a", title="score A", kind="score"),
               Column(key="score_b", title="score B", kind="score"), Column(key="passes", title="passes")]
    return ReportTable(name="flips", title="Instances one passes and the other fails", section=SECTION,
                       columns=columns, rows=rows,
                       notes=[f"Pass: score >= {threshold:g}. Each case links to both runs' records."])
