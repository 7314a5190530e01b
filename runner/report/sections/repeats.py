"""Repeats (BrainBench appendix E.7): with --epochs N, or several runs of one configuration,
per subset the mean ± SD of the per-attempt means, the share of instances whose score changed
between attempts, the mean absolute score difference, pass@1, pass@k and pass^k."""
from __future__ import annotations

from runner.report.context import OVERALL, Configuration, ReportContext, mean, scored
from runner.report.model import Column, ReportTable
from runner.report.stats import changed_share, epoch_mean_sd, mean_abs_difference, pass_at_k, pass_hat_k

SECTION = "Repeats"


def tables(ctx: ReportContext) -> list[ReportTable]:
    """repeats, when some configuration has at least two attempts of its cases."""
    rows = [row for config in ctx.configurations() for row in _config_rows(ctx, config)]
    if not rows:
        return []
    threshold = ctx.settings.pass_threshold
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="subset", title="subset"), Column(key="instances", title="instances", kind="int"),
               Column(key="attempts", title="attempts (k)", kind="int"), Column(key="mean", title="mean", kind="score"),
               Column(key="sd", title="SD across attempts", kind="float"),
               Column(key="changed", title="changed instances", kind="share"),
               Column(key="mean_abs_diff", title="mean |Δ score|", kind="float"),
               Column(key="pass_at_1", title="pass@1", kind="share"), Column(key="pass_at_k", title="pass@k", kind="share"),
               Column(key="pass_hat_k", title="pass^k", kind="share")]
    notes = [f"An attempt is one epoch of one run; several runs of one configuration count as further attempts in "
             f"the order given. An instance run passes at score >= {threshold:g}. pass@k = 1 − C(n−c,k)/C(n,k), "
             "pass^k = C(c,k)/C(n,k) (all k attempts pass), averaged over instances; k = the fewest attempts any "
             "instance has. Changed: share of instances whose attempts' scores are not all equal; mean |Δ score|: "
             "mean over instances of the mean pairwise absolute difference of their attempts (score points)."]
    return [ReportTable(name="repeats", title="Consistency across repeated runs", section=SECTION,
                        columns=columns, rows=rows, notes=notes)]


def attempts(ctx: ReportContext, config: Configuration) -> dict[str, dict[str, list[float]]]:
    """{subset: {case: [score of attempt 1, 2, ...]}} ordered by (run, epoch)."""
    found: dict[str, dict[str, list[float]]] = {}
    for run in ctx.config_runs(config):
        for row in sorted(scored(run.rows), key=lambda r: r.epoch):
            found.setdefault(row.subset, {}).setdefault(row.case_id, []).append(float(row.score or 0.0))
    return found


def _config_rows(ctx: ReportContext, config: Configuration) -> list[dict[str, object]]:
    by_subset = attempts(ctx, config)
    everything = {case: scores for cases in by_subset.values() for case, scores in cases.items()}
    if not everything or min(len(s) for s in everything.values()) < 2:
        return []
    groups = {**by_subset, OVERALL: everything}
    return [_row(ctx, config, subset, cases) for subset, cases in groups.items()]


def _row(ctx: ReportContext, config: Configuration, subset: str, cases: dict[str, list[float]]) -> dict[str, object]:
    k = min(len(s) for s in cases.values())
    per_attempt = [sum(s[j] for s in cases.values()) / len(cases) for j in range(k)]
    average, sd = epoch_mean_sd(per_attempt)
    threshold = ctx.settings.pass_threshold
    passes = {case: sum(score >= threshold for score in s) for case, s in cases.items()}
    return {
        "model": config.model, "paradigm": config.paradigm, "subset": subset, "instances": len(cases),
        "attempts": k, "mean": average, "sd": sd, "changed": changed_share(cases),
        "mean_abs_diff": mean_abs_difference(cases),
        "pass_at_1": mean([pass_at_k(len(cases[c]), passes[c], 1) for c in cases]),
        "pass_at_k": mean([pass_at_k(len(cases[c]), passes[c], k) for c in cases]),
        "pass_hat_k": mean([pass_hat_k(len(cases[c]), passes[c], k) for c in cases]),
    }

