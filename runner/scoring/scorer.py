"""The run's scorer: one parser mode, optional judges, and the retained artifacts.

`Scorer.score` is what the scheduler calls for a finished instance and what
`eegbench score` calls for a saved one, so a re-score with the same settings follows the
same path and gives the same numbers.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner.core.paths import Environment
from runner.core.settings import ParserMode, ScoringSettings
from runner.models.base import ModelError
from runner.models.endpoint import Endpoint
from runner.scoring.endpoints import resolve
from runner.scoring.parsing import ParserUnavailable, parse
from validation.context import USAGE_DECIMALS, JudgeVerdict, ScoringContext
from validation.errors import UserError
from validation.instance import Instance
from validation.judge import LLMImageJudge, LLMJudge
from validation.scoring import InstanceScore, MetricResult, score_instance, usage_by_role


def cache_dir(env: Environment) -> Path:
    """Where parser and judge replies are cached, keyed by (model, request)."""
    return env.paths.cache_dir / "scoring"


class Scorer:
    """Parses a report and scores every metric of its instance, the same way in a run and a re-score."""

    def __init__(self, mode: ParserMode, parser: Endpoint | None, judge: Endpoint | None,
                 vlm: Endpoint | None) -> None:
        self.mode = mode
        self.parser = parser
        self.judge = judge
        self.vlm = vlm

    def score(self, instance: Instance, report: str | None, artifacts_dir: Path | None,
              manifest: list[dict[str, Any]]) -> InstanceScore:
        """The instance's score from its report and retained artifacts."""
        context = ScoringContext(
            artifacts_dir=artifacts_dir,
            manifest=manifest,
            judge=_guarded(LLMJudge(self.judge.ask, self.judge.model)) if self.judge else None,
            image_judge=_guarded(LLMImageJudge(self.vlm.ask, self.vlm.model)) if self.vlm else None,
        )
        try:
            parsed = parse(self.mode, self.parser, instance, report or "")
        except ParserUnavailable as exc:
            return unscored_instance(instance, str(exc), [exc.call] if exc.call else [])
        return score_instance(instance, report, context, parsed)

    def describe(self) -> dict[str, Any]:
        """For run.json: what parsed and what judged (no keys)."""
        return {
            "parser": self.mode if self.parser else "rules",
            "parser_requested": self.mode,
            "parser_model": self.parser.describe() if self.parser else None,
            "judge": self.judge.describe() if self.judge else None,
            "vlm_judge": self.vlm.describe() if self.vlm else None,
        }

    def close(self) -> None:
        """Close every endpoint this scorer opened."""
        for endpoint in (self.parser, self.judge, self.vlm):
            if endpoint is not None:
                endpoint.close()


def build_scorer(settings: ScoringSettings, *, evaluated: str | None, env: Environment) -> Scorer:
    """The parser and judge endpoints the settings name, opened (and closed again on failure)."""
    cache = cache_dir(env)
    made: list[Endpoint] = []

    def endpoint(role: str, spec: str | None, evaluated_model: str | None) -> Endpoint | None:
        found = resolve(role, spec, evaluated=evaluated_model, env=env, cache_dir=cache)
        if found is not None:
            made.append(found)
        return found

    try:
        parser = None if settings.parser == "rules" else endpoint("parser", settings.parser_model, evaluated)
        if parser is None and settings.parser == "llm":
            raise UserError("PARSER=llm needs a parser model: set EEGBENCH_PARSER_MODEL or "
                             "--parser-model (the evaluated model has no endpoint)")
        judge = endpoint("judge", settings.judge, None)
        vlm = endpoint("vlm", settings.vlm_judge, None)
    except BaseException:
        for opened in made:
            opened.close()
        raise
    return Scorer(settings.parser, parser, judge, vlm)


def _guarded(judge: LLMJudge | LLMImageJudge) -> Callable[..., JudgeVerdict]:
    """A judge whose endpoint fails gives no verdict (unit unscored), not a crash; the
    failed call keeps its role and the wall time it took (tokens unknown)."""
    def call(*args: Any) -> JudgeVerdict:
        started = time.perf_counter()
        try:
            verdict: JudgeVerdict = judge(*args)
        except ModelError as exc:
            return JudgeVerdict(score=None, model=judge.model, error=f"judge endpoint failed: {exc}", role=judge.role,
                                latency_s=round(time.perf_counter() - started, USAGE_DECIMALS))
        return verdict
    return call


def unscored_instance(instance: Instance, reason: str,
                      parser_calls: list[dict[str, Any]] | None = None) -> InstanceScore:
    """Every metric unscored for one reason (e.g. the parser endpoint was down), with the
    parser calls that failed."""
    metrics = [
        MetricResult(metric_id=m.metric_id, type=m.type, target_key=m.target_key, weight=m.weight,
                     score=None, scored=False, detail=reason)
        for m in instance.eval_config.metrics
    ]
    calls = list(parser_calls or [])
    return InstanceScore(case_id=instance.case_id, parse_method="unparsed", parse_notes=[reason],
                         metrics=metrics, score=None, unscored_weight=sum(m.weight for m in metrics),
                         all_scored=False, unscored=[m.metric_id for m in metrics],
                         parser_calls=calls, usage=usage_by_role(calls))
