"""Constant-answer baselines: does any task reward a fixed guess?

For every task and every metric whose unit has a chance rule (`Unit.chance`), the candidates
are the distinct ground truths of that metric over the task's instances. Each candidate is
scored as the prediction on every instance with the real unit and that instance's params;
the baseline is the best candidate's mean score. It must stay at or below the metric's chance
level, which the unit's chance rule derives:
- categorical: 1/len(params["classes"]); when the candidates are listed per instance in the
  instruction (e.g. "which of these channels ..."), params["classes_param"] names the binding
  parameter holding them and chance is the mean over instances of 1/len(that list); when a
  task declares neither, 1/number of distinct answers (at least 2), flagged (the label set a
  guesser faces is then unknown);
- label_check (EEGAgentBench T1-T4): 1/len(params["labels"]);
- numeric, set, sequence: 0.2 (a constant answer may be right on at most a fifth of the
  instances).
Units without a chance rule (artifacts, judges, EEGAgentBench's record-level Dice and kappa)
have no constant-answer baseline and are skipped. Pure functions over loaded instances: no
file access.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel

from validation.context import ScoringContext
from validation.errors import MetricConfigError
from validation.instance import Instance, MetricSpec
from validation.unit import ChanceCase, Unit, ground_truth, has_ground_truth
from validation.unit_registry import UNITS

_EPSILON = 1e-6  # unit scores are rounded to 6 decimals: a design exactly at chance may sum a hair over
TASK_FLOOR_LIMIT = 30.0  # no task's best constant answer may score more (of 100)
OVERALL_FLOOR_LIMIT = 15.0  # ... nor the benchmark's, the mean over its tasks


class AnswerCount(BaseModel):
    """One distinct reference answer and how many instances have it."""
    answer: Any  # one distinct ground truth (JSON value)
    count: int


class MetricBaseline(BaseModel):
    """The constant-answer baseline of one metric of a task, against its chance level."""
    task_id: str
    metric_id: str
    type: str
    instances: int
    answers: list[AnswerCount]  # most frequent first, then by answer text
    numeric_range: tuple[float, float] | None = None  # numeric metrics: min and max answer
    tolerance: float | None = None  # numeric metrics: the (largest) tolerance
    best_answer: Any
    baseline: float  # mean unit score of best_answer over the task's instances
    chance: float
    chance_source: str  # "classes", "distinct answers (no classes declared)", "spread rule"
    classes_missing: bool = False  # categorical without params.classes: flagged

    @property
    def violation(self) -> bool:
        """Whether the best constant answer beats chance."""
        return self.baseline > self.chance + _EPSILON


class TaskBaseline(BaseModel):
    """The constant-answer baselines of one task's metrics."""
    task_id: str
    instances: int
    metrics: list[MetricBaseline]

    @property
    def violations(self) -> list[MetricBaseline]:
        """The task's metrics whose best constant answer beats chance."""
        return [m for m in self.metrics if m.violation]


def task_baselines(instances: list[Instance]) -> list[TaskBaseline]:
    """One entry per task (sorted by task id), one metric entry per deterministic metric."""
    by_task: dict[str, list[Instance]] = {}
    for inst in instances:
        by_task.setdefault(inst.task_id, []).append(inst)
    return [task_baseline(task_id, by_task[task_id]) for task_id in sorted(by_task)]


def task_baseline(task_id: str, instances: list[Instance]) -> TaskBaseline:
    """The baselines of one task's metrics that have a chance rule, in first-seen order."""
    metric_ids: dict[str, str] = {}  # metric_id -> type, in first-seen order
    for inst in instances:
        for metric in inst.eval_config.metrics:
            if UNITS.get(metric.type).chance is not None:
                metric_ids.setdefault(metric.metric_id, metric.type)
    metrics = [metric_baseline(task_id, metric_id, instances) for metric_id in metric_ids]
    return TaskBaseline(task_id=task_id, instances=len(instances), metrics=metrics)


def metric_baseline(task_id: str, metric_id: str, instances: list[Instance]) -> MetricBaseline:
    """The constant-answer baseline of one metric over the instances that carry it."""
    cases = [(inst.case_id, m) for inst in instances for m in inst.eval_config.metrics
             if m.metric_id == metric_id]
    binding_params = {inst.case_id: inst.reference.params if inst.reference else {} for inst in instances}
    if not cases:
        raise ValueError(f"{task_id}: no instance has metric {metric_id!r}")
    kind = cases[0][1].type
    unit = UNITS.get(kind)
    truths = [_truth(case_id, metric_id, m.params) for case_id, m in cases]
    answers = _answer_counts(truths)
    matrix = [_scores(unit, a.answer, cases, metric_id) for a in answers]
    scored = [(sum(row) / len(row), a) for row, a in zip(matrix, answers)]
    best_score, best = max(scored, key=lambda pair: pair[0])  # ties: the most frequent answer
    chance, source, missing = _chance(unit, cases, answers, binding_params)
    numeric = unit.family == "numeric"
    numbers = [float(t) for t in truths if numeric and _is_number(t)]
    tolerances = [float(m.params.get("tolerance", 0)) for _, m in cases] if numeric else []
    return MetricBaseline(
        task_id=task_id,
        metric_id=metric_id,
        type=kind,
        instances=len(cases),
        answers=answers,
        numeric_range=(min(numbers), max(numbers)) if numbers else None,
        tolerance=max(tolerances) if tolerances else None,
        best_answer=best.answer,
        baseline=round(best_score, 6),
        chance=round(chance, 6),
        chance_source=source,
        classes_missing=missing,
    )


def held_out_baseline(metric: MetricBaseline, instances: list[Instance]) -> float:
    """The expected score (0-1) of a constant answer chosen without looking at the case it is
    scored on: for each case, the answer best on the task's other cases (ties: the most
    frequent among them, then the first by JSON text), scored on that case; the mean over
    cases. A sample of a task (one case, or every answer once) then shows no inflated floor:
    a case alone in its task scores the metric's chance level."""
    cases = [(inst.case_id, m) for inst in instances for m in inst.eval_config.metrics
             if m.metric_id == metric.metric_id]
    if len(cases) < 2:
        return metric.chance
    unit = UNITS.get(metric.type)
    truths = [json.dumps(_truth(case_id, metric.metric_id, m.params), sort_keys=True) for case_id, m in cases]
    matrix = [_scores(unit, a.answer, cases, metric.metric_id) for a in metric.answers]
    keys = [json.dumps(a.answer, sort_keys=True) for a in metric.answers]
    total = 0.0
    for j, truth in enumerate(truths):
        # candidates: the answers of the other cases, in JSON text order (max keeps the first)
        left = {i: metric.answers[i].count - (keys[i] == truth) for i in range(len(keys))}
        candidates = sorted((i for i in left if left[i] > 0), key=lambda i: keys[i])
        best = max(candidates, key=lambda i: (sum(matrix[i]) - matrix[i][j], left[i]))
        total += matrix[best][j]
    return total / len(cases)


TaskLevels = dict[str, dict[str, tuple[float, float]]]  # task id -> metric id -> (chance, constant), 0-1


def task_levels(baselines: list[TaskBaseline]) -> TaskLevels:
    """Each task's metrics' chance level and best-constant score: what a run records of the
    instance set it was drawn from (run.json's "floors")."""
    return {t.task_id: {m.metric_id: (m.chance, m.baseline) for m in t.metrics} for t in baselines}


def held_out_levels(instances: list[Instance]) -> TaskLevels:
    """task_levels with each constant chosen without the case it is scored on
    (`held_out_baseline`): for a sample whose whole instance set is unknown."""
    levels: TaskLevels = {}
    by_task: dict[str, list[Instance]] = {}
    for inst in instances:
        by_task.setdefault(inst.task_id, []).append(inst)
    for task in task_baselines(instances):
        levels[task.task_id] = {m.metric_id: (m.chance, round(held_out_baseline(m, by_task[task.task_id]), 6))
                                for m in task.metrics}
    return levels


def instance_floor(instance: Instance, levels: TaskLevels, unscored: Collection[str] = ()) -> tuple[float, float]:
    """(chance, constant) of one instance, 0-100: the weighted mean over its scored metrics of
    each metric's level, as the instance's score weighs them. A metric no constant can answer
    (artifacts, judged text) counts 0; one the run left `unscored` (metric ids: a judge unit
    with no judge) is left out, as the score leaves it out."""
    metrics = [m for m in instance.eval_config.metrics if m.weight > 0 and m.metric_id not in unscored]
    total = sum(m.weight for m in metrics)
    if total <= 0:
        return 0.0, 0.0
    task = levels.get(instance.task_id, {})
    chance = sum(m.weight * task.get(m.metric_id, (0.0, 0.0))[0] for m in metrics)
    constant = sum(m.weight * task.get(m.metric_id, (0.0, 0.0))[1] for m in metrics)
    return 100.0 * chance / total, 100.0 * constant / total


def task_floors(instances: list[Instance], baselines: list[TaskBaseline]) -> dict[str, float]:
    """Each task's floor (0-100): the expected score of its best constant answer over the
    given instances (`baselines` are theirs, from task_baselines), the mean of their
    `instance_floor`s; sorted by task id."""
    levels = task_levels(baselines)
    floors: dict[str, list[float]] = {}
    for instance in sorted(instances, key=lambda i: i.task_id):
        floors.setdefault(instance.task_id, []).append(instance_floor(instance, levels)[1])
    return {task: round(statistics.fmean(values), 6) for task, values in floors.items()}


def numeric_spread(metric: MetricBaseline) -> float | None:
    """Range of a numeric metric's answers in units of its tolerance (None if not numeric
    or the tolerance is 0)."""
    if metric.numeric_range is None or not metric.tolerance:
        return None
    low, high = metric.numeric_range
    return (high - low) / metric.tolerance


def median_answer(metric: MetricBaseline) -> float | None:
    """The median of a metric's numeric answers (None when there is none)."""
    values = [a.answer for a in metric.answers for _ in range(a.count) if _is_number(a.answer)]
    return statistics.median(values) if values else None


def _truth(case_id: str, metric_id: str, params: dict[str, Any]) -> Any:
    if not has_ground_truth(params):
        raise ValueError(f"{case_id}: metric {metric_id} has no gt_value (nor ground_truth)")
    return ground_truth(params)


def _answer_counts(truths: list[Any]) -> list[AnswerCount]:
    counts: dict[str, AnswerCount] = {}
    for truth in truths:
        key = json.dumps(truth, sort_keys=True)
        entry = counts.setdefault(key, AnswerCount(answer=truth, count=0))
        entry.count += 1
    return sorted(counts.values(), key=lambda a: (-a.count, json.dumps(a.answer, sort_keys=True)))


def _scores(unit: Unit, answer: Any, cases: list[tuple[str, MetricSpec]], metric_id: str) -> list[float]:
    """The unit score (0-1) of `answer` on each case, in case order."""
    scores = []
    for case_id, metric in cases:
        try:
            outcome = unit.score(answer, metric.params, ScoringContext())
        except MetricConfigError as exc:
            raise ValueError(f"{case_id}: metric {metric_id}: {exc}") from exc
        scores.append(outcome.score or 0.0)
    return scores


def _chance(unit: Unit, cases: list[tuple[str, MetricSpec]], answers: list[AnswerCount],
            binding_params: dict[str, dict[str, Any]]) -> tuple[float, str, bool]:
    if unit.chance is None:  # task_baseline keeps only metrics with a chance rule
        raise ValueError(f"metric type {unit.name} has no constant-answer baseline")
    chance_cases = [ChanceCase(case_id, metric.params, binding_params.get(case_id, {}))
                    for case_id, metric in cases]
    chance = unit.chance(chance_cases, len(answers))
    return chance.level, chance.source, chance.classes_missing


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
