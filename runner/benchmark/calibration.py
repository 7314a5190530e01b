"""Difficulty labels measured: `eegbench instances --calibrate RUN...`.

Per task, what its reference solution takes (non-blank, non-comment lines of the reference
script; distinct functions and methods it calls; the steps of its BrainAgent tool plan, one
toolset operation each), how far its method ensembles spread (the median over its
instances' numeric ensembles of (max - min) / |median|, when it has any) and, from the runs
given, how often it is solved: the share of scored instance runs (every epoch counts; infra
errors do not) whose score is 100.

Two measured levels are set against the label, each by the same rule: a level's typical
value is the median over the tasks labelled with it, and a task whose value lies nearer
another level's median than its own gets that level. By solve rate (tasks with at least
MIN_RUNS scored runs) the task is flagged; by plan steps (every task with a plan) the other
level is shown as what the task is built like, a weaker prompt than a measured solve rate.
"""
from __future__ import annotations

import ast
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from runner.benchmark.truth import read_kept
from runner.paradigms.brainagent.plans import plan_path
from runner.run.records import ResultRecord
from validation.instance import DIFFICULTY_LEVELS, Instance

MIN_RUNS = 3
SOLVED = 100.0


@dataclass(frozen=True)
class ScriptMeasures:
    """What the reference solution takes."""

    lines: int  # non-blank, non-comment lines
    calls: int  # distinct names called (functions and methods)


@dataclass(frozen=True)
class TaskCalibration:
    """One task's label, its reference's measures and its measured solve rate."""

    task_id: str
    label: str | None
    instances: int
    script: ScriptMeasures | None
    runs: int  # scored instance runs over every run given
    solved: int
    ensemble_spread: float | None = None  # relative; None without numeric ensembles
    suggested: str | None = None  # set when the solve rate says another level
    kind: str | None = None  # recipe, open, long_horizon
    plan_steps: int | None = None  # toolset calls of the task's BrainAgent plan
    bindings: int | None = None  # bindings in the task spec (instances: those its ensembles kept)
    built_like: str | None = None  # set when the plan's size says another level

    @property
    def solve_rate(self) -> float | None:
        """Share of scored runs that scored 100 (None without runs)."""
        return self.solved / self.runs if self.runs else None

    @property
    def judged(self) -> bool:
        """Enough runs to compare the task with the levels."""
        return self.runs >= MIN_RUNS and self.label in DIFFICULTY_LEVELS

    @property
    def flagged(self) -> bool:
        """The measured level disagrees with the label."""
        return self.suggested is not None and self.suggested != self.label


def script_measures(path: Path) -> ScriptMeasures:
    """Lines and distinct calls of a reference script."""
    text = path.read_text(encoding="utf-8")
    lines = sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))
    names = {_called(node.func) for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)}
    return ScriptMeasures(lines=lines, calls=len(names - {None}))


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def calibrate(instances: list[Instance], results: list[ResultRecord], project_root: Path) -> list[TaskCalibration]:
    """One row per task of `instances`, its solve rate from `results` (of any number of runs)."""
    by_task: dict[str, list[Instance]] = defaultdict(list)
    for instance in instances:
        by_task[instance.task_id].append(instance)
    runs: dict[str, list[float]] = defaultdict(list)
    for record in results:
        if record.status != "infra_error" and record.score is not None and record.task_id in by_task:
            runs[record.task_id].append(record.score)
    kept = read_kept(project_root)
    rows = [_row(task, members, runs.get(task, []), project_root) for task, members in sorted(by_task.items())]
    rows = [replace(row, bindings=kept[row.task_id].bindings) if row.task_id in kept else row for row in rows]
    return _with_suggestions(rows)


def _row(task: str, members: list[Instance], scores: list[float], project_root: Path) -> TaskCalibration:
    script = members[0].reference.script if members[0].reference else None
    measures = script_measures(project_root / script) if script and (project_root / script).is_file() else None
    return TaskCalibration(task_id=task, label=members[0].meta_info.difficulty, instances=len(members),
                           script=measures, runs=len(scores), solved=sum(s >= SOLVED for s in scores),
                           ensemble_spread=ensemble_spread(members), kind=members[0].meta_info.kind,
                           plan_steps=plan_steps(project_root, task))


def plan_steps(project_root: Path, task: str) -> int | None:
    """How many toolset calls the task's BrainAgent plan makes (None without a readable plan)."""
    path = plan_path(project_root, task)
    try:
        steps = json.loads(path.read_text(encoding="utf-8")).get("steps")
    except (OSError, ValueError, AttributeError):
        return None
    return len(steps) if isinstance(steps, list) else None


def ensemble_spread(members: list[Instance]) -> float | None:
    """The median relative spread of the instances' numeric ensembles (None without any)."""
    spreads = []
    for instance in members:
        for values in (instance.reference.ensembles or {}).values() if instance.reference else []:
            numbers = [v for v in values.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            centre = statistics.median(numbers) if len(numbers) == len(values) and numbers else 0.0
            if centre:
                spreads.append((max(numbers) - min(numbers)) / abs(centre))
    return statistics.median(spreads) if spreads else None


def level_medians(rows: list[TaskCalibration]) -> dict[str, float]:
    """Each level's median solve rate over its judged tasks (levels without one are left out)."""
    return _medians([(row.label, row.solve_rate) for row in rows if row.judged])


def step_medians(rows: list[TaskCalibration]) -> dict[str, float]:
    """Each level's median plan steps over its tasks with a plan."""
    return _medians([(row.label, row.plan_steps) for row in rows])


def _medians(pairs: list[tuple[str | None, float | None]]) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for label, value in pairs:
        if label in DIFFICULTY_LEVELS and value is not None:
            values[label].append(value)
    return {level: statistics.median(found) for level, found in values.items()}


def _with_suggestions(rows: list[TaskCalibration]) -> list[TaskCalibration]:
    rates, steps = level_medians(rows), step_medians(rows)
    return [replace(row, suggested=_nearest(row.label, row.solve_rate, rates) if row.judged else None,
                    built_like=_nearest(row.label, row.plan_steps, steps))
            for row in rows]


def _nearest(label: str | None, value: float | None, medians: dict[str, float]) -> str | None:
    """The level whose median is nearer the value than the label's own (None: the label holds)."""
    if value is None or label not in medians:
        return None
    own = abs(value - medians[label])
    # Nearest median wins; a tie keeps the label. Levels in order, so a tie between two
    # others goes to the easier one.
    nearest = min(DIFFICULTY_LEVELS, key=lambda level: (abs(value - medians.get(level, float("inf"))),
                                                        DIFFICULTY_LEVELS[level]))
    return nearest if abs(value - medians.get(nearest, float("inf"))) < own else None
