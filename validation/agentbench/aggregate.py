"""Run-level EEGAgentBench metrics (§6.2-6.4) from the instances of a run and their answers.

Input: one AnswerRecord per instance (its metric params and the parsed answer, None when the
report gave none). Every instance is counted; an unparseable answer is wrong, never dropped:
- T1-T4: accuracy and macro-F1 over the task's label set (a wrong/absent label is a false
  negative of the reference class; labels never predicted have F1 0);
- T5: SzCORE-style Event-F1 per subject from summed TP/FP/FN and duration, averaged over
  subjects (also sensitivity, precision, FP/24h per subject, averaged); as in timescoring, a
  subject with no event at all (no reference event, no false alarm) has no defined F1 and is
  left out of the mean (with none defined the mean is 0; real CHB-MIT subjects all have
  seizures); Dice@seizure as the
  mean per-record Dice over seizure-positive records; miss rate (seizure-positive records
  where no predicted interval overlaps a reference seizure) and over-alarm rate (seizure-free
  records with at least one predicted interval). An unparseable T5 answer contributes no
  events (its reference events are FN), Dice 0, a miss, and on a seizure-free record it
  counts as an alarm (it is not a valid "no seizure");
- T6: a missing or unusable hypnogram expands to all wake (§6.2); macro-F1 and kappa are
  computed per epoch from the confusion matrix over all scored epochs of the family (§6.2:
  "computed from the confusion matrix over the scored subset"); the recording-level means
  (§4.5 plots "recording-level Macro-F1") are reported beside them, where a recording's
  macro-F1 averages over the stages present in its reference or its prediction (a stage absent
  from both has no defined F1 in that recording);
- Overall: the unweighted mean of the six primary metrics (T1 accuracy, T2-T4 and T6
  macro-F1, T5 Event-F1); `overall_families` says how many families it covers.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from pydantic import BaseModel, Field

from validation.agentbench import answers, classification, events
from validation.agentbench.units import (
    FAMILIES,
    family,
    label_set,
    reference_and_prediction_label,
    reference_epochs,
    reference_intervals,
)

PRIMARY = {"T1": "accuracy", "T2": "macro_f1", "T3": "macro_f1", "T4": "macro_f1",
           "T5": "event_f1", "T6": "macro_f1"}


class AnswerRecord(BaseModel):
    """One scored EEGAgentBench instance: its answer-metric params and the parsed answer."""
    case_id: str
    params: dict[str, Any]  # the instance's answer-metric params (ground truth, family, ...)
    answer: Any = None  # what the parser extracted; None when nothing was found


class FamilyMetrics(BaseModel):
    """The run-level metrics of one task family (T1-T6)."""
    family: str
    instances: int
    unparseable: int
    primary_metric: str
    primary: float
    accuracy: float | None = None
    macro_f1: float | None = None
    kappa: float | None = None
    recording_macro_f1: float | None = None
    recording_kappa: float | None = None
    event_f1: float | None = None
    sensitivity: float | None = None
    precision: float | None = None
    fp_per_24h: float | None = None
    dice_at_seizure: float | None = None
    miss_rate: float | None = None
    over_alarm_rate: float | None = None
    subjects: int | None = None


class AgentBenchMetrics(BaseModel):
    """The run-level metrics of every family present, and the Overall score."""
    families: dict[str, FamilyMetrics] = Field(default_factory=dict)
    overall: float | None = None
    overall_families: int = 0


def is_agentbench(params: Mapping[str, Any]) -> bool:
    """Whether a metric's params belong to an EEGAgentBench family."""
    return params.get("family") in FAMILIES


def aggregate(records: list[AnswerRecord]) -> AgentBenchMetrics:
    """The run-level metrics of the answer records, family by family."""
    by_family: dict[str, list[AnswerRecord]] = defaultdict(list)
    for record in records:
        by_family[family(record.params)].append(record)
    result = AgentBenchMetrics()
    for name in FAMILIES:
        if by_family.get(name):
            result.families[name] = _family_metrics(name, by_family[name])
    primaries = [m.primary for m in result.families.values()]
    if primaries:
        result.overall = round(fmean(primaries), 6)
        result.overall_families = len(primaries)
    return result


def _family_metrics(name: str, records: list[AnswerRecord]) -> FamilyMetrics:
    if name == "T5":
        return _seizure_metrics(records)
    if name == "T6":
        return _staging_metrics(records)
    return _label_metrics(name, records)


def _label_metrics(name: str, records: list[AnswerRecord]) -> FamilyMetrics:
    labels = label_set(records[0].params)
    truth, chosen = [], []
    for record in records:
        if label_set(record.params) != labels:
            raise ValueError(f"{record.case_id}: label set {label_set(record.params)} differs "
                             f"from the family's {labels}")
        reference, prediction = reference_and_prediction_label(record.answer, record.params)
        truth.append(reference)
        chosen.append(prediction)
    accuracy = classification.accuracy(truth, chosen)
    f1 = classification.macro_f1(truth, chosen, labels)
    metrics = FamilyMetrics(family=name, instances=len(records),
                            unparseable=sum(c is None for c in chosen),
                            primary_metric=PRIMARY[name], primary=0.0,
                            accuracy=_r(accuracy), macro_f1=_r(f1))
    metrics.primary = getattr(metrics, PRIMARY[name])
    return metrics


def _seizure_metrics(records: list[AnswerRecord]) -> FamilyMetrics:
    subjects: dict[str, list[events.EventCounts]] = defaultdict(list)
    dice_positive, misses, alarms, free = [], 0, 0, 0
    unparseable = 0
    for record in records:
        reference, duration = reference_intervals(record.params)
        predicted = answers.read_intervals(record.answer)
        if predicted is None:
            unparseable += 1
        counts = events.event_counts(reference, predicted or [], duration)
        subjects[str(record.params.get("subject") or record.case_id)].append(counts)
        if reference:
            score = events.dice(reference, predicted, duration) if predicted is not None else 0.0
            dice_positive.append(score)
            misses += predicted is None or not _overlaps_any(reference, predicted)
        else:
            free += 1
            alarms += predicted is None or bool(predicted)
    per_subject = [_subject_scores(counts) for counts in subjects.values()]
    event_f1 = _mean_defined(s[0] for s in per_subject) or 0.0
    return FamilyMetrics(
        family="T5", instances=len(records), unparseable=unparseable,
        primary_metric="event_f1", primary=_r(event_f1), event_f1=_r(event_f1),
        sensitivity=_mean_defined(s[1] for s in per_subject),
        precision=_mean_defined(s[2] for s in per_subject),
        fp_per_24h=_r(fmean(s[3] for s in per_subject)),
        dice_at_seizure=_r(fmean(dice_positive)) if dice_positive else None,
        miss_rate=_r(misses / len(dice_positive)) if dice_positive else None,
        over_alarm_rate=_r(alarms / free) if free else None,
        subjects=len(subjects),
    )


def _subject_scores(counts: list[events.EventCounts]) -> tuple[float | None, float | None, float | None, float]:
    tp, fp, fn = (sum(getattr(c, k) for c in counts) for k in ("tp", "fp", "fn"))
    duration = sum(c.duration_s for c in counts)
    sensitivity = tp / (tp + fn) if tp + fn else None
    precision = tp / (tp + fp) if tp + fp else None
    f1 = events.f1_from_counts(tp, fp, fn) if tp + fp + fn else None
    return f1, sensitivity, precision, events.fp_per_24h(fp, duration)


def _staging_metrics(records: list[AnswerRecord]) -> FamilyMetrics:
    f1s, kappas, all_truth, all_pred = [], [], [], []
    unparseable = 0
    for record in records:
        truth = reference_epochs(record.params)
        rows = answers.maybe_json(record.answer)
        unparseable += not (isinstance(rows, list) and rows)  # expanded to all wake below
        predicted = answers.expand_hypnogram(record.answer, len(truth))
        present = [s for s in answers.STAGES if s in truth or s in predicted]
        f1s.append(classification.macro_f1(truth, predicted, present))
        kappas.append(classification.cohen_kappa(truth, predicted, answers.STAGES))
        all_truth += truth
        all_pred += predicted
    f1 = classification.macro_f1(all_truth, all_pred, answers.STAGES)
    return FamilyMetrics(
        family="T6", instances=len(records), unparseable=unparseable,
        primary_metric="macro_f1", primary=_r(f1), macro_f1=_r(f1),
        kappa=_r(classification.cohen_kappa(all_truth, all_pred, answers.STAGES)),
        recording_macro_f1=_r(fmean(f1s)), recording_kappa=_r(fmean(kappas)),
    )


def _overlaps_any(reference: Sequence[tuple[float, float]], predicted: Sequence[tuple[float, float]]) -> bool:
    return any(min(r[1], p[1]) > max(r[0], p[0]) for r in reference for p in predicted)


def _mean_defined(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return _r(fmean(defined)) if defined else None


def _r(value: float) -> float:
    return round(float(value), 6)

