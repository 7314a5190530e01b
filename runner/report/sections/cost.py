"""Cost and time per role: tokens in and out and wall time of the evaluated model (target), the
parser and the judges; dollars when a price file is given; per-instance means for the
score-versus-tokens view (BrainBench Figure 15)."""
from __future__ import annotations

from typing import Any

from runner.report.context import ReportContext, mean, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import ROLES, RoleCost, RunData

SECTION = "Cost and time"


def tables(ctx: ReportContext) -> list[ReportTable]:
    """cost (per configuration and role) and efficiency (score against target tokens)."""
    return [_cost(ctx), _efficiency(ctx)]


def _roles(ctx: ReportContext, config: Any) -> list[str]:
    """The scoring roles, with the target's split by agent role (brainagent) right after it."""
    parts = sorted({r for row in ctx.config_rows(config) for r in row.roles if r.startswith("target:")})
    return [ROLES[0], *parts, *ROLES[1:]]


def _role_model(run: RunData, role: str) -> str | None:
    if role.startswith("target:"):
        return run.info.model
    return {"target": run.info.model, "parser": run.info.parser_model, "judge": run.info.judge,
            "vlm_judge": run.info.vlm_judge}.get(role)


def _cost(ctx: ReportContext) -> ReportTable:
    rows = []
    prices = ctx.settings.prices
    for config in ctx.configurations():
        for role in _roles(ctx, config):
            total, money, priced = RoleCost(), 0.0, False
            for run in ctx.config_runs(config):
                cost = _sum(run, role)
                total = _add(total, cost)
                dollars = prices.cost(_role_model(run, role), cost.prompt_tokens, cost.completion_tokens) \
                    if prices else None
                if dollars is not None:
                    money, priced = money + dollars, True
            if total.calls == 0 and role != "target":
                continue
            runs = len(ctx.config_rows(config))
            rows.append({"model": config.model, "paradigm": config.paradigm, "role": role, "calls": total.calls,
                         "prompt_tokens": total.prompt_tokens, "completion_tokens": total.completion_tokens,
                         "reasoning_tokens": total.reasoning_tokens,
                         "seconds": total.seconds, "money": money if priced else None,
                         "tokens_per_instance": (total.prompt_tokens + total.completion_tokens) / runs if runs else None})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="role", title="role"), Column(key="calls", title="calls", kind="int"),
               Column(key="prompt_tokens", title="tokens in", kind="int"),
               Column(key="completion_tokens", title="tokens out", kind="int"),
               Column(key="reasoning_tokens", title="of which reasoning", kind="int"),
               Column(key="tokens_per_instance", title="tokens per instance run", kind="count"),
               Column(key="seconds", title="wall time (model calls)", kind="seconds"),
               Column(key="money", title="cost", kind="money")]
    notes = ["Tokens as the endpoints reported them (a model that reports none counts 0). Wall time: the sum of "
             "the role's call latencies. target:<role> rows split the target's tokens by the BrainAgent role it "
             "played (supervisor, each subagent); they are part of the target row, not added to it. Reasoning "
             "tokens are part of tokens out, counted where the endpoint reports them (0 otherwise)."]
    notes.append(f"Prices from {prices.source} ($ per million tokens)." if prices else
                 "No price file (--prices prices.toml): cost not computed.")
    return ReportTable(name="cost", title="Tokens, time and cost per role", section=SECTION, columns=columns,
                       rows=rows, notes=notes)


def _sum(run: RunData, role: str) -> RoleCost:
    total = RoleCost()
    for row in run.rows:
        if role in row.roles:
            total = _add(total, row.roles[role])
    return total


def _add(a: RoleCost, b: RoleCost) -> RoleCost:
    return RoleCost(calls=a.calls + b.calls, prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                    completion_tokens=a.completion_tokens + b.completion_tokens,
                    reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
                    seconds=round(a.seconds + b.seconds, 3))


def _efficiency(ctx: ReportContext) -> ReportTable:
    rows: list[dict[str, Any]] = []
    for config in ctx.configurations():
        rows_ = scored(ctx.config_rows(config))
        rows.append({"model": config.model, "paradigm": config.paradigm,
                     "mean_score": mean([float(r.score or 0.0) for r in rows_]),
                     "target_tokens": mean([float(_tokens(r.roles.get("target"))) for r in rows_]),
                     "duration_s": mean([r.duration_s for r in rows_]),
                     "pareto": False})
    _mark_pareto(rows)
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="mean_score", title="mean score", kind="score"),
               Column(key="target_tokens", title="target tokens per instance run", kind="count"),
               Column(key="duration_s", title="wall time per instance run", kind="seconds"),
               Column(key="pareto", title="on the Pareto front")]
    return ReportTable(name="efficiency", title="Score against target tokens", section=SECTION, columns=columns,
                       rows=rows, notes=["Pareto front: no other configuration scores at least as high with "
                                         "fewer tokens."])


def _tokens(cost: RoleCost | None) -> int:
    return 0 if cost is None else cost.prompt_tokens + cost.completion_tokens


def _mark_pareto(rows: list[dict[str, Any]]) -> None:
    points = [(float(r["target_tokens"] or 0.0), float(r["mean_score"] or 0.0)) for r in rows]
    for row, (tokens, score) in zip(rows, points):
        row["pareto"] = not any((t <= tokens and s >= score) and (t, s) != (tokens, score) for t, s in points)

