"""Ground truth from a method ensemble: one answer from several defensible pipelines.

An open task states a scientific goal and leaves the method to the agent, so its ground
truth must not hang on one pipeline's choices (Welch or multitaper, a filter design, a
reference, an epoching variant, a detector setting). Its reference script computes the
answer under each pipeline it deems defensible and returns them all, as {pipeline: value},
under the metric's truth key. The metric's `ensemble` rule then makes one ground truth, as
the metric's unit says (`Unit.ensemble`):

- "median" (numeric_check): the median of the values, with tolerance = max(min_tolerance,
  spread_factor x (max - min)); a tolerance over max_tolerance could not tell a right
  answer from a wrong one, so the binding is rejected;
- "agree" (categorical_check, label_check, set_match_check, sequence_match_check): the one
  answer every pipeline gave, as the unit's `answer_key` compares them (a set's members
  whatever their order and case); a disagreement rejects the binding.

The values are kept in the instance's reference block (`ensembles`), so the spread behind
every tolerance can be audited.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

import validation.builtin_units  # noqa: F401 (registers the units this module asks about)
from validation.unit import Unit
from validation.unit_registry import UNITS

MIN_PIPELINES = 2


class EnsembleRule(BaseModel):
    """How a metric's ensemble of pipeline values becomes its ground truth (module doc)."""

    model_config = ConfigDict(extra="forbid")
    spread_factor: float = Field(1.0, gt=0)
    min_tolerance: float = Field(0.0, ge=0)
    max_tolerance: float | None = Field(None, gt=0)  # numeric: required; the widest usable band

    @model_validator(mode="after")
    def _bounded(self) -> EnsembleRule:
        if self.max_tolerance is not None and self.min_tolerance > self.max_tolerance:
            raise ValueError("min_tolerance is above max_tolerance")
        return self


class EnsembleRejected(ValueError):
    """The pipelines disagree too much for this binding to separate right from wrong."""


@dataclass(frozen=True)
class EnsembleTruth:
    """The ground truth an ensemble gives, its tolerance (numeric only) and the values behind it."""

    value: Any
    tolerance: float | None
    values: dict[str, Any]


def check_rule(rule: EnsembleRule, metric_type: str) -> None:
    """ValueError when the rule cannot apply to the metric's unit type."""
    unit = UNITS.get(metric_type) if metric_type in UNITS else None
    if unit is None or unit.ensemble is None:
        raise ValueError(f"ensembles apply to {', '.join(ensemble_types())}, not {metric_type}")
    if unit.ensemble == "median" and rule.max_tolerance is None:
        raise ValueError("a numeric ensemble needs max_tolerance (the widest band that still separates answers)")


def ensemble_types() -> tuple[str, ...]:
    """The metric types whose units take an ensemble, in registration order."""
    return tuple(unit.name for unit in UNITS.items() if unit.ensemble is not None)


def resolve(rule: EnsembleRule, metric_type: str, values: Any) -> EnsembleTruth:
    """The ground truth of one binding's ensemble; EnsembleRejected says why there is none,
    ValueError that the script's result is not an ensemble."""
    if not isinstance(values, dict) or len(values) < MIN_PIPELINES:
        raise ValueError(f"an ensemble is an object of at least {MIN_PIPELINES} {{pipeline: value}}, "
                         f"got {values!r}")
    values = _by_name(values)
    unit = UNITS.get(metric_type)
    if unit.ensemble == "agree":
        return _agreed(unit, values)
    return _numeric(rule, values)


def consensus(metric_type: str, values: dict[str, Any]) -> Any:
    """The one answer an ensemble stands for (the ground truth `resolve` writes, without its
    tolerance or a rejection): what the oracle reports from its in-kernel run of the script."""
    if UNITS.get(metric_type).ensemble == "agree":
        return next(iter(_by_name(values).values()))
    return _median(list(values.values()))


def _by_name(values: dict[str, Any]) -> dict[str, Any]:
    # Pipelines in name order: the answer, its record and any rejection reason must not hang
    # on the order a script (or a cache that sorts keys) happened to list them in.
    return dict(sorted(values.items()))


def _agreed(unit: Unit, values: dict[str, Any]) -> EnsembleTruth:
    if unit.ground_truth_types == (list,) and not all(isinstance(v, list) for v in values.values()):
        raise ValueError(f"a {unit.name} ensemble holds lists, got {_listed(values)}")
    distinct = {unit.answer_key(v) for v in values.values()}
    if len(distinct) > 1:
        raise EnsembleRejected(f"the pipelines disagree: {_listed(values)}")
    return EnsembleTruth(value=next(iter(values.values())), tolerance=None, values=dict(values))


def _numeric(rule: EnsembleRule, values: dict[str, Any]) -> EnsembleTruth:
    numbers = list(values.values())
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
        raise ValueError(f"a numeric ensemble holds finite numbers, got {_listed(values)}")
    spread = max(numbers) - min(numbers)
    tolerance = max(rule.min_tolerance, rule.spread_factor * spread)
    limit = rule.max_tolerance if rule.max_tolerance is not None else math.inf
    if tolerance > limit:
        raise EnsembleRejected(f"spread {spread:g} gives tolerance {tolerance:g} > max_tolerance {limit:g} "
                               f"({_listed(values)})")
    return EnsembleTruth(value=_median(numbers), tolerance=round(tolerance, 12), values=dict(values))


def _median(numbers: list[float]) -> float:
    # The median of an even count is a midpoint: round it to the values' own precision plus
    # one digit, so the instance file holds no float noise.
    digits = max(_decimals(n) for n in numbers) + 1
    return round(statistics.median(numbers), digits)


def _decimals(number: float) -> int:
    text = repr(float(number))
    return 0 if "e" in text or "." not in text else len(text.split(".")[1].rstrip("0"))


def _listed(values: dict[str, Any]) -> str:
    return ", ".join(f"{name} {value!r}" for name, value in values.items())
