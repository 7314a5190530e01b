"""Instance scoring: report -> parsed fields -> one verdict per metric -> score 0..100.

score = 100 * sum(w_i * s_i) / sum(w_i), both sums over the *scored* metrics only.
Normalising by the weight sum makes the BrainBench convention (weights summing to 100,
total = sum of w * s) and ours (weights summing to 1) give the same number. Metrics this
path cannot score (a judge unit with no judge configured, an image with a VLM prompt and no
VLM judge, an unusable judge reply) are left out of both sums, reported in
`unscored_weight` and `unscored`, and make `all_scored` False: a partial score is never
passed off as a complete one, and an unscored unit is never silently 0 or 1.

Every unit is called alike, `unit.score(predicted, params, context)` with the unit from
validation.unit_registry; artifact and judge units use the ScoringContext (retained
artifacts, judges, the metric id), and what they observe (path violations, judge calls) is
copied into the InstanceScore for the audit.
The parse itself is the caller's choice (rules, LLM or both): pass its ParsedReport.

A missing or empty report parses to all-null fields, so every scored unit gets 0.
Everything is rounded to 6 decimals, so the same input always serialises identically; the
one exception is the wall time of the LLM calls (`latency_s` in parser_calls, judge_calls
and `usage`), which is measured, not computed.

Each parser and judge call records its role, model, tokens and wall time; `usage` sums
them per role ("parser", "judge", "vlm_judge") so a report need not walk the calls.
"""
from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from validation.context import ScoringContext
from validation.errors import MetricConfigError, ScoringError
from validation.instance import Instance, MetricSpec
from validation.parser import ParsedReport, parse_report
from validation.unit import UnitOutcome, ground_truth
from validation.unit_registry import UNITS

DECIMALS = 6


class MetricResult(BaseModel):
    """One metric's verdict in an instance's score."""
    metric_id: str
    type: str
    target_key: str
    weight: float
    predicted: Any = None
    expected: Any = None
    score: float | None  # 0..1; None when the unit was not scored
    scored: bool
    detail: str
    evidence: dict[str, Any] | None = None


class RoleUsage(BaseModel):
    """What one scoring role's calls for an instance cost, summed.

    Tokens are summed over the calls that reported them (`unreported_calls` did not, so a
    sum is never passed off as complete) and include replies served from the scoring cache
    (`cached_requests`: their tokens were spent when first asked). `latency_s` is the wall
    time spent in this scoring's calls, retries included."""

    calls: int = 0
    requests: int = 0
    cached_requests: int = 0
    unreported_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


class InstanceScore(BaseModel):
    """An instance's score: parsed fields, every metric's verdict and what scoring observed."""
    case_id: str
    fields: dict[str, Any] = Field(default_factory=dict)
    parse_method: str
    parse_notes: list[str] = Field(default_factory=list)
    metrics: list[MetricResult]
    score: float | None  # 0..100; None when no metric with weight > 0 was scored
    unscored_weight: float
    all_scored: bool
    unscored: list[str] = Field(default_factory=list)  # metric ids left out, for logs
    violations: list[str] = Field(default_factory=list)  # unsafe artifact paths
    parser_calls: list[dict[str, Any]] = Field(default_factory=list)
    judge_calls: list[dict[str, Any]] = Field(default_factory=list)
    # role -> summed cost of its calls; empty for rules-only scoring and for older files
    usage: dict[str, RoleUsage] = Field(default_factory=dict)


def usage_by_role(calls: list[dict[str, Any]]) -> dict[str, RoleUsage]:
    """Sum the parser_calls / judge_calls entries per role; entries with no role (no LLM
    behind them) are not counted."""
    usage: dict[str, RoleUsage] = {}
    for call in calls:
        role = call.get("role")
        if isinstance(role, str) and role:
            _add_call(usage.setdefault(role, RoleUsage()), call)
    return usage


def _add_call(total: RoleUsage, call: dict[str, Any]) -> None:
    prompt, completion = call.get("prompt_tokens"), call.get("completion_tokens")
    total.calls += 1
    total.requests += int(call.get("requests") or 0)
    total.cached_requests += int(call.get("cached_requests") or 0)
    if prompt is None or completion is None:
        total.unreported_calls += 1
    else:
        total.prompt_tokens += int(prompt)
        total.completion_tokens += int(completion)
    total.latency_s = round(total.latency_s + float(call.get("latency_s") or 0.0), DECIMALS)


def score_instance(
    instance: Instance,
    report: str | None,
    context: ScoringContext | None = None,
    parsed: ParsedReport | None = None,
) -> InstanceScore:
    """Score every metric of an instance from its report (and, via context, artifacts).

    `parsed` defaults to the rules parser. Raises ScoringError only for a broken instance
    (bad metric params), never because of what the report or the files say.
    """
    context = context or ScoringContext()
    if parsed is None:
        parsed = parse_report(report or "", instance.eval_config.target_keys())
    results = [
        _score_metric(instance.case_id, spec, parsed.fields, report, context)
        for spec in instance.eval_config.metrics
    ]
    return InstanceScore(
        case_id=instance.case_id,
        fields=parsed.fields,
        parse_method=parsed.method,
        parse_notes=parsed.notes,
        metrics=results,
        score=_aggregate(results),
        unscored_weight=round(math.fsum(r.weight for r in results if not r.scored), DECIMALS),
        all_scored=all(r.scored for r in results),
        unscored=[r.metric_id for r in results if not r.scored],
        violations=list(context.violations),
        parser_calls=list(parsed.calls),
        judge_calls=list(context.judge_calls),
        usage=usage_by_role(parsed.calls + context.judge_calls),
    )


def check_instance_metrics(instance: Instance) -> list[str]:
    """Problems in the instance's metric params, each unit's `check_params` (empty: all usable).

    Meant for truth generation and run start-up, so a broken instance fails there and
    not half way through a run.
    """
    problems = []
    for spec in instance.eval_config.metrics:
        try:
            UNITS.get(spec.type).check_params(spec.params)
        except MetricConfigError as exc:
            problems.append(_problem(instance.case_id, spec, exc))
    return problems


def _score_metric(
    case_id: str, spec: MetricSpec, fields: dict[str, Any], report: str | None, context: ScoringContext,
) -> MetricResult:
    predicted = report if spec.target_key == "full_text" else fields.get(spec.target_key)
    outcome = _run_unit(case_id, spec, predicted, context)
    return MetricResult(
        metric_id=spec.metric_id,
        type=spec.type,
        target_key=spec.target_key,
        weight=spec.weight,
        predicted=predicted,
        expected=_expected(spec),
        score=outcome.score,
        scored=outcome.scored,
        detail=outcome.detail,
        evidence=outcome.evidence,
    )


def _run_unit(case_id: str, spec: MetricSpec, predicted: Any, context: ScoringContext) -> UnitOutcome:
    try:
        unit = UNITS.get(spec.type)  # MetricSpec validated the type when it loaded
        return unit.score(predicted, spec.params, context.for_metric(spec.metric_id))
    except MetricConfigError as exc:
        raise ScoringError(_problem(case_id, spec, exc)) from exc


def _problem(case_id: str, spec: MetricSpec, exc: MetricConfigError) -> str:
    return f"{case_id}: metric {spec.metric_id} ({spec.type}): {exc}"


def _expected(spec: MetricSpec) -> Any:
    try:
        return ground_truth(spec.params)
    except MetricConfigError:
        return None  # judge/artifact metrics may have no single reference value


def _aggregate(results: list[MetricResult]) -> float | None:
    scored = [(r.weight, r.score) for r in results if r.scored and r.score is not None]
    total_weight = math.fsum(weight for weight, _ in scored)
    if total_weight <= 0:
        return None
    earned = math.fsum(weight * score for weight, score in scored)
    return round(100.0 * earned / total_weight, DECIMALS)
