"""The long per-instance table (one row per run of an instance) and the runs' provenance."""
from __future__ import annotations

import time
from typing import Any

from runner.report.context import ReportContext
from runner.report.model import Column, ReportTable
from runner.report.rows import ROLES, InstanceRow, RunInfo

SECTION_INSTANCES = "Instance table"
SECTION_RUNS = "Runs"


def instances_table(ctx: ReportContext) -> ReportTable:
    """case, task, subset, difficulty, model, paradigm, epoch, status, score, per-unit scores,
    tokens per role and time, for every instance run of every run."""
    columns = [Column(key=k, title=k) for k in ("run_id", "case_id", "task_id", "subset", "difficulty", "model",
                                                 "paradigm")]
    columns += [Column(key="epoch", title="epoch", kind="int"), Column(key="status", title="status"),
                Column(key="score", title="score", kind="score"), Column(key="units", title="unit scores"),
                Column(key="rounds", title="rounds", kind="int")]
    for role in ROLES:
        columns += [Column(key=f"{role}_in", title=f"{role} tokens in", kind="int"),
                    Column(key=f"{role}_out", title=f"{role} tokens out", kind="int"),
                    Column(key=f"{role}_s", title=f"{role} time", kind="seconds")]
    columns.append(Column(key="duration_s", title="duration", kind="seconds"))
    return ReportTable(name="instances", title="Every instance run", section=SECTION_INSTANCES, columns=columns,
                       rows=[_instance(row) for row in ctx.rows], detail=True,
                       notes=["unit scores: metric_id=score (0-1) per unit, '-' when unscored."])


def _instance(row: InstanceRow) -> dict[str, Any]:
    values: dict[str, Any] = {
        "run_id": row.run_id, "case_id": row.case_id, "task_id": row.task_id, "subset": row.subset,
        "difficulty": row.difficulty, "model": row.model, "paradigm": row.paradigm, "epoch": row.epoch,
        "status": row.status, "score": row.score, "rounds": row.rounds, "duration_s": row.duration_s,
        "units": "; ".join(f"{u.metric_id}={'-' if u.score is None else f'{u.score:g}'}" for u in row.units),
    }
    for role in ROLES:
        cost = row.roles.get(role)
        values[f"{role}_in"] = cost.prompt_tokens if cost else 0
        values[f"{role}_out"] = cost.completion_tokens if cost else 0
        values[f"{role}_s"] = cost.seconds if cost else 0.0
    return values


def runs_table(runs: list[RunInfo]) -> ReportTable:
    """One line per run: what it is and where it came from (the provenance cards hold the rest)."""
    rows = [{"run": info.run_id, "model": info.model, "paradigm": info.paradigm, "sandbox": info.sandbox,
             "parser": info.parser if info.parser_model is None else f"{info.parser}:{info.parser_model}",
             "scores": info.scores or "as run", "judge": info.judge, "epochs": info.epochs,
             "instance_set": (info.instance_set_hash or "")[:12], "revision": (info.git_revision or "")[:12],
             "started": _date(info.started_at), "finished": _date(info.finished_at)} for info in runs]
    columns = [Column(key=k, title=t) for k, t in (
        ("run", "run"), ("model", "model"), ("paradigm", "paradigm"), ("sandbox", "sandbox"), ("parser", "parser"),
        ("scores", "scores"), ("judge", "judge"), ("epochs", "epochs"), ("instance_set", "instance set"),
        ("revision", "git revision"), ("started", "started (UTC)"), ("finished", "finished (UTC)"))]
    return ReportTable(name="runs", title="Runs", section=SECTION_RUNS, columns=columns, rows=rows)


def _date(value: float | None) -> str | None:
    return None if value is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(value))
