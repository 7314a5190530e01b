"""What a validation unit (a metric type) is: one `Unit` description and its verdict.

A `Unit` is everything eegbench knows about one metric type, in one place: its name (the
`type` of a metric in an instance file, BrainBench's vocabulary), how it scores a prediction
(one signature for every unit: `score(predicted, params, context)`), how its params are
checked, which JSON types its reference may have, and how the constant-answer baseline
derives its chance level. The units are registered in validation.unit_registry; the
instance format, scoring, the baselines and truth generation all read them from there.

This module holds the types and the helpers every unit shares (outcomes, the reference in
params); it imports nothing that imports it back.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from validation.context import ScoringContext
from validation.errors import MetricConfigError

UNSCORED_REASON = "not scored"


class UnitOutcome(BaseModel):
    """One unit's verdict. score is in [0, 1], or None when the unit was not scored."""

    score: float | None
    scored: bool = True
    detail: str
    evidence: dict[str, Any] | None = None  # what an artifact check measured, field by field


def unscored(kind: str) -> UnitOutcome:
    """The verdict of a unit that could not score (no judge, no usable verdict)."""
    return UnitOutcome(score=None, scored=False, detail=f"{kind}: {UNSCORED_REASON}")


def fail(detail: str) -> UnitOutcome:
    """A score of 0 with the reason (the prediction is missing, malformed or wrong)."""
    return UnitOutcome(score=0.0, detail=detail)


def result(score: float, detail: str) -> UnitOutcome:
    """A score clamped to [0, 1] and rounded to 6 decimals, so it always serialises alike."""
    return UnitOutcome(score=round(min(1.0, max(0.0, score)), 6), detail=detail)


# Where a metric's params hold its reference: BrainBench's `gt_value` (what eegbench writes,
# and the only key BrainBench's scorer reads), or `ground_truth` (what eegbench wrote before).
GT_KEY = "gt_value"
TRUTH_KEYS = (GT_KEY, "ground_truth")


def has_ground_truth(params: Mapping[str, Any]) -> bool:
    """Whether the params carry a reference under either key."""
    return any(key in params for key in TRUTH_KEYS)


def ground_truth(params: Mapping[str, Any]) -> Any:
    """The reference in a metric's params: `gt_value`, or the older `ground_truth`."""
    for key in TRUTH_KEYS:
        if key in params:
            return params[key]
    raise MetricConfigError("params has no gt_value (nor the older ground_truth)")


# --- the constant-answer baseline's chance level -------------------------------------------


@dataclass(frozen=True)
class ChanceCase:
    """One instance carrying the metric, as a chance rule sees it."""

    case_id: str
    params: Mapping[str, Any]  # the metric's params in this instance
    binding_params: Mapping[str, Any]  # the instance's reference params (the task binding's)


@dataclass(frozen=True)
class Chance:
    """A metric's chance level over a task's instances and where it comes from."""

    level: float
    source: str  # shown by `instances --stats`, e.g. "classes", "spread rule"
    classes_missing: bool = False  # the label set a guesser faces is unknown: flagged


# (the instances carrying the metric, the number of distinct reference answers) -> chance
ChanceRule = Callable[[Sequence[ChanceCase], int], Chance]


# --- the unit ------------------------------------------------------------------------------

# (predicted, params, context) -> verdict. `predicted` is the parsed field (or the report for
# target_key full_text); `context` carries artifacts, judges and the metric id. Bad params
# raise MetricConfigError before the prediction or the context is looked at.
ScoreFunction = Callable[[Any, Mapping[str, Any], ScoringContext], UnitOutcome]
# (predicted, params) -> verdict: a unit that needs nothing but the parsed value.
ValueScore = Callable[[Any, Mapping[str, Any]], UnitOutcome]


def ignoring_context(check: ValueScore) -> ScoreFunction:
    """The score function of a unit that needs only the prediction and its params."""

    def score(predicted: Any, params: Mapping[str, Any], context: ScoringContext) -> UnitOutcome:
        return check(predicted, params)

    score.__name__ = getattr(check, "__name__", "score")
    score.__doc__ = check.__doc__
    return score


@dataclass(frozen=True)
class Unit:
    """One metric type: its name, score function, params check, reference types, chance rule."""

    name: str  # the metric `type` in instance files (BrainBench's case-file vocabulary)
    score: ScoreFunction
    # The score depends on the prediction and the params only (no artifact, no judge): the
    # unit can score a constant answer, and a report stating the reference scores 1.
    deterministic: bool
    # JSON types (as json.loads returns them) a reference value may have; bool never
    # qualifies. truth generation rejects a script result of another type. None: unchecked.
    ground_truth_types: tuple[type, ...] | None = None
    # How the constant-answer baseline derives this unit's chance level; None: no baseline
    # (artifact and judge units, and units whose score is not per-answer).
    chance: ChanceRule | None = None
    # Params a task spec must set to a number and justify in a `<name>_reason` field
    # (numeric_check: its tolerance).
    reasoned_params: tuple[str, ...] = ()
    # The validation-unit family reports group scores by: BrainBench's six (numeric,
    # categorical, set, sequence, semantic, artifact) and EEGAgentBench's events.
    family: str = "other"
    # How an open task's ensemble of pipeline values becomes one ground truth
    # (runner/benchmark/ensemble.py): their median with a tolerance from their spread, or the
    # one answer every pipeline agrees on; None: the unit takes no ensemble.
    ensemble: Literal["median", "agree"] | None = None
    # What two answers must share to be the same answer, for an "agree" ensemble (a set's
    # members whatever their order and case, a label's text).
    answer_key: Callable[[Any], str] = str

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"unit name {self.name!r} is not an identifier")
        if self.chance is not None and not self.deterministic:
            raise ValueError(f"unit {self.name}: only a deterministic unit can have a chance rule")
        if self.ensemble is not None and not self.deterministic:
            raise ValueError(f"unit {self.name}: only a deterministic unit can take an ensemble")

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Raise MetricConfigError when params are unusable (the instance is broken).

        Every unit checks its params before it looks at the prediction or the context, so
        scoring a missing prediction with an empty context checks them and nothing else.
        """
        self.score(None, params, ScoringContext())
