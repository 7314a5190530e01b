"""Reading a finished (or running) run: `eegbench logs`, `eegbench show` and `eegbench verify`."""
from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from runner.commands.output import console
from runner.core.paths import Environment
from runner.core.transcript import Turn, usage_by_role
from runner.run.records import ResultRecord, RunSummary, TranscriptRecord, entry_key, split_key
from runner.run.store import RunStore
from runner.sandbox.procfs import same_process
from validation.errors import UserError
from validation.scoring import InstanceScore


def filter_records(records: list[ResultRecord], status: str | None, task: str | None,
                   epoch: int | None = None) -> list[ResultRecord]:
    """Records with this status, task and epoch (None: any)."""
    return [
        r for r in records
        if (status is None or r.status == status) and (task is None or r.task_id == task)
        and (epoch is None or r.epoch == epoch)
    ]


def logs_table(store: RunStore, status: str | None = None, task: str | None = None,
               epoch: int | None = None) -> Table:
    """One row per finished instance run: status, score, rounds, tokens, duration, flags,
    error; with an epoch column when the run has more than one epoch."""
    results = store.results()
    epochs = len({r.epoch for r in results}) > 1
    records = filter_records(results, status, task, epoch)
    table = Table(title=f"run {store.run_id}: {len(records)} instances" + (f" (epoch {epoch})" if epoch else ""))
    columns = ("case", "epoch") if epochs else ("case",)
    for column in (*columns, "status", "score", "rounds", "tokens in/out", "duration s", "flags", "error"):
        table.add_column(column, overflow="fold")
    for r in sorted(records, key=lambda r: (r.case_id, r.epoch)):
        table.add_row(
            r.case_id, *([str(r.epoch)] if epochs else []), _status_text(r.status),
            "-" if r.score is None else f"{r.score:.1f}",
            str(r.rounds), f"{r.prompt_tokens}/{r.completion_tokens}", f"{r.duration_s:.1f}",
            _flags(r), (r.error or "")[:80],
        )
    flagged = sum(bool(r.unscored) for r in records)
    if flagged:
        table.caption = f"{flagged} instance(s) have unscored units (no judge, or no usable verdict): their scores cover only the scored units"
    return table


def _flags(record: ResultRecord) -> Text:
    parts = []
    if record.unscored:
        parts.append(f"unscored: {', '.join(record.unscored)}")
    if record.violations:
        parts.append(f"path violations: {record.violations}")
    return Text("; ".join(parts), style="yellow" if parts else "")


def summary_table(summary: RunSummary) -> Table:
    """Instances, mean score and statuses, overall and per subset, then per epoch when the
    run has more than one (every epoch of an instance counts in "all" and its subset)."""
    table = Table(title="summary")
    table.add_column("group")
    table.add_column("instances", justify="right")
    table.add_column("mean score", justify="right")
    table.add_column("statuses")
    rows = [*summary.groups.items(), *((f"epoch {k}", g) for k, g in summary.epochs.items())]
    for name, group in rows:
        mean = "-" if group.mean_score is None else f"{group.mean_score:.1f}"
        statuses = ", ".join(f"{k} {v}" for k, v in group.statuses.items())
        table.add_row(name, str(group.instances), mean, statuses)
    return table


def agentbench_table(store: RunStore, epoch: int = 1) -> Table | None:
    """The EEGAgentBench metrics table of one epoch (the first by default) when the run holds
    scored T-instances, else None."""
    from runner.benchmark.agentbench.run_metrics import metrics_table, run_metrics

    metrics = run_metrics(store, epoch)
    if metrics is None:
        return None
    several = any(r.epoch != 1 for r in store.results())
    return metrics_table(metrics, f"EEGAgentBench metrics, epoch {epoch}" if several else "EEGAgentBench metrics")


def show_run(store: RunStore, console: Console) -> None:
    """`eegbench show RUN` without a case: the run's summary and, for T-instances, the
    EEGAgentBench metrics."""
    console.print(summary_table(store.summary()))
    table = agentbench_table(store)
    if table is not None:
        console.print(table)


def entry_for(case: str, epoch: int | None) -> str:
    """The entry key `show` reads: CASE (epoch 1), CASE@K, or CASE with --epoch K; UserError
    when CASE@K and --epoch disagree."""
    case_id, named = split_key(case)
    if epoch is not None and named != 1 and named != epoch:
        raise UserError(f"show {case}: --epoch {epoch} names another epoch than {case!r}")
    return entry_key(case_id, epoch or named)


def show_case(store: RunStore, key: str, console: Console) -> None:
    """The task, every turn (code, observation, tool calls), events, status, score, artifacts
    of one entry (a case id, or `<case_id>@<k>` for epoch k); for an unfinished one, the
    turns so far."""
    transcript = store.read_transcript(key)
    task = transcript.messages[1]["content"] if len(transcript.messages) > 1 else ""
    console.print(Panel(Text(str(task)), title=f"{key}: task given to the model"))
    for turn in transcript.turns:
        console.print(_turn_panel(turn))
    roles = usage_by_role(transcript.turns)
    if any(turn.role for turn in transcript.turns):
        console.print(Text("tokens by role: " + ", ".join(
            f"{role} {u.prompt_tokens}/{u.completion_tokens} ({sum(t.role == role for t in transcript.turns)} turns)"
            for role, u in roles.items())))
    for event in transcript.events:
        where = f" (turn {event.turn})" if event.turn is not None else ""
        console.print(Text(f"[{event.kind}{where}] {event.detail}", style="yellow"))
    console.print(_status_line(transcript))
    score = store.read_score(key)
    if score is not None:
        console.print(_score_table(score))
    for item in store.read_artifacts(key):
        console.print(f"artifact {item.path}: {item.sha256 or item.skipped}")
    for violation in score.violations if score is not None else []:
        console.print(f"[red]artifact path violation: {violation}")


def _status_line(transcript: TranscriptRecord) -> Text:
    if transcript.status is None:
        alive = same_process(transcript.controller_pid, transcript.controller_start)
        state = "running" if alive else "unfinished (its run was stopped; it reruns on resume)"
        return Text(f"status: {state}, {len(transcript.turns)} turn(s) so far", style="yellow")
    line = Text("status: ") + _status_text(transcript.status)
    if transcript.error:
        line += Text(f"  error: {transcript.error}")
    return line


def _turn_panel(turn: Turn) -> Panel:
    usage = turn.usage
    role = f"{turn.role}  " if turn.role else ""
    title = (
        f"turn {turn.index}  {role}action {turn.action}  latency {turn.latency_s:.2f} s  "
        f"tokens {usage.prompt_tokens}/{usage.completion_tokens}"
    )
    parts: list[RenderableType] = []
    if turn.note:
        parts.append(Text(f"[{turn.note}]", style="yellow"))
    if turn.state_summary:  # brainagent: what the subagent was shown before this round
        parts.append(Text("-- shared_state shown", style="cyan"))
        parts.append(Text(_clip(turn.state_summary, 1500), style="dim"))
    if turn.action == "execute" and turn.code is not None:
        parts.append(Syntax(turn.code, "python", line_numbers=False, word_wrap=True))
    else:
        parts.append(Text(turn.reply))
    obs = turn.observation
    if obs:
        style = "green" if obs.status == "ok" else "red"
        parts.append(Text(f"-- observation ({obs.status}, {obs.duration_s:.2f} s"
                          + (", kernel restarted" if obs.restarted else "") + ")", style=style))
        parts.append(Text(obs.text))
    for call in turn.tool_calls:  # tools and brainagent paradigms
        style = "green" if call.status == "ok" else "red"
        code = f", {call.error_code}" if call.error_code else ""
        made = f" -> {', '.join(call.registered)}" if call.registered else ""
        parts.append(Text(f"-- tool {call.name}({json.dumps(call.arguments, ensure_ascii=False)}) "
                          f"({call.status}{code}, {call.duration_s:.2f} s){made}", style=style))
        parts.append(Text(call.result))
    return Panel(Group(*parts), title=title, title_align="left")


def _score_table(score: InstanceScore) -> Table:
    table = Table(title=f"score {score.score}")
    for column in ("metric", "type", "key", "weight", "predicted", "expected", "score", "detail"):
        table.add_column(column, overflow="fold")
    for m in score.metrics:
        table.add_row(
            m.metric_id, m.type, m.target_key, f"{m.weight:g}", json.dumps(m.predicted),
            json.dumps(m.expected), "unscored" if m.score is None else f"{m.score:.3f}",
            _clip(m.detail or "", 160),
        )
    return table


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def output_console() -> Console:
    """Stdout console; piped output gets a readable width instead of rich's 80 columns."""
    return Console() if sys.stdout.isatty() else Console(width=160)


def _status_text(status: str) -> Text:
    good = status in ("solution", "forced_solution")
    return Text(status, style="green" if good else "yellow" if status != "infra_error" else "red")


def cmd_verify(args: argparse.Namespace, env: Environment) -> int:
    """Exit 1, naming each problem, when the run directory is not whole."""

    from runner.run.store import open_run
    from runner.run.verify import verify_run

    store = open_run(args.run, env.paths.runs_dir)
    found = verify_run(store)
    for problem in found.problems:
        console.print(f"[red]problem:[/red] {escape(problem)}")
    expected = f"/{found.expected}" if found.expected is not None else ""
    state = "whole" if found.ok else f"{len(found.problems)} problem(s)"
    console.print(f"run {store.run_id}: {found.finished}{expected} entries finished, {found.artifacts} artifacts checked: {state}")
    return 0 if found.ok else 1


def cmd_logs(args: argparse.Namespace, env: Environment) -> int:
    """A run's instances, one row each (per epoch), and the EEGAgentBench metrics when it has
    T-instances (of epoch 1, or of --epoch)."""
    from runner.commands.logs import agentbench_table, logs_table, output_console
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    output_console().print(logs_table(store, args.status, args.task, args.epoch))
    table = agentbench_table(store, args.epoch or 1)
    if table is not None:
        output_console().print(table)
    return 0


def cmd_show(args: argparse.Namespace, env: Environment) -> int:
    """One instance's transcript and score (one epoch of it), or the run's summary."""
    from runner.commands.logs import entry_for, output_console, show_case, show_run
    from runner.run.store import open_run

    store = open_run(args.run, env.paths.runs_dir)
    if args.case is None:
        show_run(store, output_console())
        return 0
    show_case(store, entry_for(args.case, args.epoch), output_console())
    return 0
