"""Per task: what a score there means. The mean score of every configuration beside the task's
guessing floor (its best constant answer), the score above that floor, and how many of the
task's plausible wrong analyses (mutants, runner/benchmark/sensitivity.py) the scorer catches, as
recorded when the run was made."""
from __future__ import annotations

from typing import Any

from runner.report.context import ReportContext, mean, scored
from runner.report.model import Column, ReportTable
from runner.report.rows import InstanceRow

SECTION = "Tasks"


def tables(ctx: ReportContext) -> list[ReportTable]:
    """tasks: one row per configuration and task."""
    caught = _caught(ctx)
    rows = []
    for config in ctx.configurations():
        by_task: dict[str, list[InstanceRow]] = {}
        for row in scored(ctx.config_rows(config)):
            by_task.setdefault(row.task_id, []).append(row)
        for task, rows_ in sorted(by_task.items()):
            rows.append(_row(ctx, config.model, config.paradigm, task, rows_, caught.get(task)))
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="task", title="task"), Column(key="instances", title="instance runs", kind="int"),
               Column(key="mean", title="mean", kind="score"),
               Column(key="constant", title="best constant answer", kind="score"),
               Column(key="above_floor", title="above floor", kind="score"),
               Column(key="caught", title="mistakes caught")]
    notes = ["best constant answer: the expected score of the task's best constant answer over its whole instance "
             "set (the guessing floor). above floor: per instance run (score - floor) / (100 - floor) x 100, "
             "averaged. mistakes caught: of the task's plausible wrong analyses (mutants of its reference script), "
             "how many score at most 50 on at least 90% of its instances (eegbench instances --sensitivity); "
             "'-' when the run recorded none. A score on a task that catches few mistakes says less about the analysis."]
    return [ReportTable(name="tasks", title="Per task: score, guessing floor and mistakes caught", section=SECTION,
                        columns=columns, rows=rows, notes=notes, detail=True)]


def _row(ctx: ReportContext, model: str, paradigm: str, task: str, rows: list[InstanceRow],
         caught: dict[str, int] | None) -> dict[str, Any]:
    floors = [levels[1] for row in rows if (levels := ctx.floors.of(row)) is not None]
    above = [value for row in rows if (value := ctx.floors.normalised(row)) is not None]
    above_floor = mean(above)
    return {"model": model, "paradigm": paradigm, "task": task, "instances": len(rows),
            "mean": mean([float(row.score or 0.0) for row in rows]), "constant": mean(floors),
            # rounding noise around 0 is not shown as "-0.0"
            "above_floor": None if above_floor is None else round(above_floor, 9) + 0.0,
            "caught": f"{caught['caught']}/{caught['mutants']}" if caught else "-"}


def _caught(ctx: ReportContext) -> dict[str, dict[str, int]]:
    """task -> {"caught", "mutants"} from the runs' records (the first run recording a task)."""
    found: dict[str, dict[str, int]] = {}
    for run in ctx.runs:
        for task, entry in (run.info.sensitivity or {}).items():
            found.setdefault(task, entry)
    return found
