"""Failure taxonomy: how instance runs ended (infra_error counted, and excluded from every
score), which exceptions the model's code raised, and what scoring could not use."""
from __future__ import annotations

from collections import Counter
from typing import get_args

from runner.core.transcript import OVERLOAD_CPU_SHARE, OVERLOAD_LOAD, InstanceStatus
from runner.report.context import ReportContext
from runner.report.model import Column, ReportTable

SECTION = "Failures"
STATUSES: tuple[str, ...] = get_args(InstanceStatus)


def tables(ctx: ReportContext) -> list[ReportTable]:
    """statuses, observation_errors, scoring_problems, overloaded_timeouts."""
    return [_statuses(ctx), _errors(ctx), _scoring(ctx), _overloaded(ctx)]


def _statuses(ctx: ReportContext) -> ReportTable:
    rows = []
    for run in ctx.runs:
        counts = Counter(row.status for row in run.rows)
        rows.append({"model": run.info.model, "paradigm": run.info.paradigm, "run": run.run_id,
                     "runs": len(run.rows), **{s: counts.get(s, 0) for s in STATUSES}})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="run", title="run"), Column(key="runs", title="instance runs", kind="int")]
    columns += [Column(key=s, title=s, kind="int") for s in STATUSES]
    notes = ["solution: the model answered; forced_solution: answered on the last permitted round; max_rounds, "
             "repeated_failure, missing_action, max_tool_calls, deadline, token_limit: stopped by a control and scored as "
             "produced; "
             "context_exceeded, refused, request_rejected: the endpoint refused the conversation the model made, "
             "scored as produced; infra_error: the harness failed, never scored, retried on resume."]
    return ReportTable(name="statuses", title="How instance runs ended", section=SECTION, columns=columns,
                       rows=rows, notes=notes)


def _errors(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        counts = Counter(name for row in ctx.config_rows(config) for name in row.observation_errors)
        rows += [{"model": config.model, "paradigm": config.paradigm, "error": name, "count": n}
                 for name, n in counts.most_common()]
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="error", title="error (exception or status)"), Column(key="count", title="count", kind="int")]
    return ReportTable(name="observation_errors", title="Errors in the model's executions", section=SECTION,
                       columns=columns, rows=rows,
                       notes=["Failed executions by exception name (timeout, oom, died when no exception was "
                              "raised); failed tool calls by error code."])


def _overloaded(ctx: ReportContext) -> ReportTable:
    rows = [{"run": run.run_id, "case": row.key, "status": row.status, "turn": t.turn,
             "seconds": t.duration_s, "cpu_s": t.cpu_s, "load": t.host_load}
            for run in ctx.runs for row in run.rows for t in row.overloaded_timeouts]
    columns = [Column(key="run", title="run"), Column(key="case", title="instance"),
               Column(key="status", title="status"), Column(key="turn", title="turn", kind="int"),
               Column(key="seconds", title="wall s", kind="float"), Column(key="cpu_s", title="CPU s", kind="float"),
               Column(key="load", title="load per CPU", kind="float")]
    notes = [f"Executions that timed out while the host's 1-minute load exceeded {OVERLOAD_LOAD:g} per CPU and the "
             f"kernel got under {OVERLOAD_CPU_SHARE:.0%} of the wall time as CPU: possibly the harness's failure "
             "(too many jobs for the machine), not the model's. Rerun them with fewer --jobs before comparing."]
    if not rows:
        notes.append("None: no timeout coincided with host overload.")
    return ReportTable(name="overloaded_timeouts", title="Timeouts under host overload", section=SECTION,
                       columns=columns, rows=rows, notes=notes)


def _scoring(ctx: ReportContext) -> ReportTable:
    rows = []
    for config in ctx.configurations():
        rows_ = [r for r in ctx.config_rows(config) if r.scored]
        rows.append({"model": config.model, "paradigm": config.paradigm, "scored": len(rows_),
                     "no_report": sum(r.parse_method is None or (not r.valid_response and not r.parse_failed)
                                      for r in rows_),
                     "parse_failed": sum(r.parse_failed for r in rows_),
                     "unscored_units": sum(len(r.unscored) for r in rows_),
                     "violations": sum(r.violations for r in rows_),
                     "infra_events": sum(sum(r.events.values()) for r in ctx.config_rows(config))})
    columns = [Column(key="model", title="model"), Column(key="paradigm", title="paradigm"),
               Column(key="scored", title="scored runs", kind="int"),
               Column(key="no_report", title="no usable report", kind="int"),
               Column(key="parse_failed", title="parser found nothing", kind="int"),
               Column(key="unscored_units", title="unscored units", kind="int"),
               Column(key="violations", title="unsafe artifact paths", kind="int"),
               Column(key="infra_events", title="infrastructure events", kind="int")]
    return ReportTable(name="scoring_problems", title="What scoring could not use", section=SECTION,
                       columns=columns, rows=rows)
