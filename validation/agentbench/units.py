"""Per-instance validation units of the EEGAgentBench task families.

Each instance has one metric with target_key "answer". The unit's score is the instance's
share of the run-level metric it feeds, so the oracle scores 1 and a floor model 0:
- label_check (T1-T4): 1 when the answer is the reference label (T1: the option letter);
- interval_events_check (T5): the record's Dice@seizure with the paper's conventions
  (seizure-free record: 1 when the answer is an empty list, else 0); an unparseable answer
  scores 0 even on a seizure-free record (it is not a valid "no seizure");
- hypnogram_check (T6): the record's Cohen's kappa after the tolerant expansion, floored at 0.
The run-level metrics (accuracy, macro-F1, Event-F1 by subject, ...) are in aggregate.py.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from validation.agentbench import answers, classification, events
from validation.errors import MetricConfigError
from validation.unit import Chance, ChanceCase, Unit, UnitOutcome, ground_truth, ignoring_context

FAMILIES = ("T1", "T2", "T3", "T4", "T5", "T6")


def label_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """T1-T4: 1 when the answer reads as the reference label (T1: the option letter or its text)."""
    truth, chosen = reference_and_prediction_label(predicted, params)
    if chosen is None:
        return UnitOutcome(score=0.0, detail=f"answer {predicted!r} is not one of {label_set(params)}")
    verdict = "==" if chosen == truth else "!="
    return UnitOutcome(score=1.0 if chosen == truth else 0.0, detail=f"{chosen} {verdict} {truth}")


def interval_events_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """T5: the record's Dice@seizure; an unparseable interval list scores 0."""
    reference, duration = reference_intervals(params)
    intervals = answers.read_intervals(predicted)
    if intervals is None:
        return UnitOutcome(score=0.0, detail=f"unparseable interval list {_short(predicted)}")
    counts = events.event_counts(reference, intervals, duration)
    score = events.dice(reference, intervals, duration)
    return UnitOutcome(
        score=round(score, 6),
        detail=(f"Dice {score:.3f}; events TP {counts.tp} FP {counts.fp} FN {counts.fn} "
                f"({len(intervals)} predicted, {len(reference)} reference)"),
    )


def hypnogram_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """T6: the record's Cohen's kappa after the tolerant expansion, floored at 0."""
    reference = reference_epochs(params)
    labels = answers.expand_hypnogram(predicted, len(reference))
    kappa = classification.cohen_kappa(reference, labels, answers.STAGES)
    f1 = classification.macro_f1(reference, labels, answers.STAGES)
    return UnitOutcome(score=round(max(0.0, kappa), 6),
                       detail=f"kappa {kappa:.3f}, macro-F1 {f1:.3f} over {len(reference)} epochs")


# --- params (shared with aggregate.py) --------------------------------------------------------

def family(params: Mapping[str, Any]) -> str:
    """The task family in params (T1-T6)."""
    value = params.get("family")
    if value not in FAMILIES:
        raise MetricConfigError(f"params.family must be one of {FAMILIES}, got {value!r}")
    return str(value)


def label_set(params: Mapping[str, Any]) -> list[str]:
    """The task's label set (at least two labels)."""
    labels = params.get("labels")
    if not isinstance(labels, list) or len(labels) < 2 or not all(isinstance(x, str) for x in labels):
        raise MetricConfigError(f"params.labels must list at least two labels, got {labels!r}")
    return labels


def reference_and_prediction_label(predicted: Any, params: Mapping[str, Any]) -> tuple[str, str | None]:
    """The reference label and the label the answer reads as (None: none of them)."""
    labels = label_set(params)
    truth = ground_truth(params)
    if truth not in labels:
        raise MetricConfigError(f"ground_truth {truth!r} is not in params.labels {labels}")
    options = params.get("options")
    if options is not None:
        if not isinstance(options, dict) or sorted(options) != sorted(labels):
            raise MetricConfigError("params.options must map every label (option letter) to its text")
        return truth, answers.read_option(predicted, options)
    return truth, answers.read_label(predicted, labels)


def reference_intervals(params: Mapping[str, Any]) -> tuple[list[tuple[float, float]], float]:
    """The reference seizure intervals and the record's duration in seconds."""
    reference = answers.read_intervals(ground_truth(params))
    if reference is None:
        raise MetricConfigError("ground_truth must be a list of [start_s, end_s] intervals")
    duration = params.get("duration_s")
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration <= 0:
        raise MetricConfigError(f"params.duration_s must be a positive number, got {duration!r}")
    return reference, float(duration)


def reference_epochs(params: Mapping[str, Any]) -> list[str]:
    """The reference hypnogram, one stage per epoch."""
    n_epochs = params.get("n_epochs")
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, int) or n_epochs <= 0:
        raise MetricConfigError(f"params.n_epochs must be a positive integer, got {n_epochs!r}")
    truth = ground_truth(params)
    rows_ok = isinstance(truth, list) and truth and all(
        isinstance(row, list) and len(row) == 3 and all(isinstance(x, int) for x in row[:2])
        and row[2] in answers.STAGES for row in truth)
    # contiguous from epoch 0: each row starts where the previous ended
    if not rows_ok or [row[0] for row in truth] != [0] + [row[1] + 1 for row in truth[:-1]] \
            or truth[-1][1] != n_epochs - 1 or any(row[1] < row[0] for row in truth):
        raise MetricConfigError(f"ground_truth must be run-length rows [start, end, stage] covering "
                                f"epochs 0..{n_epochs - 1} once, stages {answers.STAGES}")
    return answers.expand_hypnogram(truth, n_epochs)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def label_chance(cases: Sequence[ChanceCase], distinct_answers: int) -> Chance:
    """label_check (T1-T4): the task declares its label set, chance is 1/len(params.labels)."""
    return Chance(1.0 / len(cases[0].params["labels"]), "labels")


# interval_events_check and hypnogram_check score a whole record (Dice, kappa): no constant
# answer baseline.
LABEL_CHECK = Unit(name="label_check", score=ignoring_context(label_check), deterministic=True,
                   chance=label_chance, family="categorical", ensemble="agree")
INTERVAL_EVENTS_CHECK = Unit(name="interval_events_check", score=ignoring_context(interval_events_check),
                             deterministic=True, family="events")
HYPNOGRAM_CHECK = Unit(name="hypnogram_check", score=ignoring_context(hypnogram_check), deterministic=True,
                       family="sequence")
AGENTBENCH_UNITS = (LABEL_CHECK, INTERVAL_EVENTS_CHECK, HYPNOGRAM_CHECK)
AGENTBENCH_TYPES = tuple(unit.name for unit in AGENTBENCH_UNITS)
