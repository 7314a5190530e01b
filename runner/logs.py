"""Reading a finished (or running) run: `eegbench logs` and `eegbench show`."""
from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from runner.run.store import ResultRecord, RunStore


def resolve_run(run: str, runs_dir: Path) -> RunStore:
    path = Path(run)
    store = RunStore(path if path.is_dir() and (path / "run.json").exists() else runs_dir / run)
    if not store.exists():
        raise FileNotFoundError(f"no run named {run!r} (looked in {runs_dir}); runs: {', '.join(list_runs(runs_dir)) or 'none'}")
    return store


def list_runs(runs_dir: Path) -> list[str]:
    if not runs_dir.is_dir():
        return []
    return sorted(p.name for p in runs_dir.iterdir() if (p / "run.json").exists())


def filter_records(records: list[ResultRecord], status: str | None, task: str | None) -> list[ResultRecord]:
    return [
        r for r in records
        if (status is None or r.status == status) and (task is None or r.task_id == task)
    ]


def logs_table(store: RunStore, status: str | None = None, task: str | None = None) -> Table:
    records = filter_records(store.results(), status, task)
    table = Table(title=f"run {store.run_id}: {len(records)} instances")
    for column in ("case", "status", "score", "rounds", "tokens in/out", "duration s", "flags", "error"):
        table.add_column(column, overflow="fold")
    for r in sorted(records, key=lambda r: r.case_id):
        table.add_row(
            r.case_id, _status_text(r.status), "-" if r.score is None else f"{r.score:.1f}",
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


def summary_table(records: list[ResultRecord]) -> Table:
    table = Table(title="summary")
    table.add_column("group")
    table.add_column("instances", justify="right")
    table.add_column("mean score", justify="right")
    table.add_column("statuses")
    groups: dict[str, list[ResultRecord]] = {"all": records}
    for r in records:
        groups.setdefault(r.bench_subset, []).append(r)
    for name, rows in groups.items():
        scores = [r.score for r in rows if r.score is not None]
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        mean = f"{sum(scores) / len(scores):.1f}" if scores else "-"
        table.add_row(name, str(len(rows)), mean, ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return table


def agentbench_table(store: RunStore) -> Table | None:
    """The EEGAgentBench metrics table when the run holds scored T-instances, else None."""
    from runner.agentbench.run_metrics import metrics_table, run_metrics

    metrics = run_metrics(store)
    return metrics_table(metrics) if metrics is not None else None


def show_run(store: RunStore, console: Console) -> None:
    """`eegbench show RUN` without a case: the run's summary and, for T-instances, the
    EEGAgentBench metrics."""
    console.print(summary_table(store.results()))
    table = agentbench_table(store)
    if table is not None:
        console.print(table)


def show_case(store: RunStore, case_id: str, console: Console) -> None:
    audit = store.instance_dir(case_id)
    transcript_path = audit / "transcript.json"
    if not transcript_path.exists():
        raise FileNotFoundError(f"run {store.run_id} has no instance {case_id!r}")
    transcript = json.loads(transcript_path.read_text())
    console.print(Panel(Text(transcript["messages"][1]["content"] if len(transcript["messages"]) > 1 else ""),
                        title=f"{case_id}: task given to the model"))
    for turn in transcript["turns"]:
        console.print(_turn_panel(turn))
    console.print(f"status: {_status_text(transcript['status'])}" + (f"  error: {transcript['error']}" if transcript.get("error") else ""))
    score_path = audit / "score.json"
    if score_path.exists():
        console.print(_score_table(json.loads(score_path.read_text())))
    artifacts = json.loads((audit / "artifacts.json").read_text()) if (audit / "artifacts.json").exists() else []
    for item in artifacts:
        console.print(f"artifact {item['path']}: {item.get('sha256') or item.get('skipped')}")
    if score_path.exists():
        for violation in json.loads(score_path.read_text()).get("violations", []):
            console.print(f"[red]artifact path violation: {violation}")


def _turn_panel(turn: dict) -> Panel:
    usage = turn.get("usage") or {}
    title = (
        f"turn {turn['index']}  action {turn['action']}  latency {turn.get('latency_s', 0):.2f} s  "
        f"tokens {usage.get('prompt_tokens')}/{usage.get('completion_tokens')}"
    )
    parts: list = []
    if turn.get("note"):
        parts.append(Text(f"[{turn['note']}]", style="yellow"))
    if turn["action"] == "execute" and turn.get("code") is not None:
        parts.append(Syntax(turn["code"], "python", line_numbers=False, word_wrap=True))
    else:
        parts.append(Text(turn["reply"]))
    obs = turn.get("observation")
    if obs:
        style = "green" if obs["status"] == "ok" else "red"
        parts.append(Text(f"-- observation ({obs['status']}, {obs['duration_s']:.2f} s"
                          + (", kernel restarted" if obs.get("restarted") else "") + ")", style=style))
        parts.append(Text(obs["text"]))
    for call in turn.get("tool_calls") or []:  # tools paradigm
        style = "green" if call["status"] == "ok" else "red"
        code = f", {call['error_code']}" if call.get("error_code") else ""
        parts.append(Text(f"-- tool {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)}) "
                          f"({call['status']}{code}, {call.get('duration_s', 0):.2f} s)", style=style))
        parts.append(Text(call["result"]))
    return Panel(Group(*parts), title=title, title_align="left")


def _score_table(score: dict) -> Table:
    table = Table(title=f"score {score.get('score')}")
    for column in ("metric", "type", "key", "weight", "predicted", "expected", "score", "detail"):
        table.add_column(column, overflow="fold")
    for m in score.get("metrics", []):
        table.add_row(
            m["metric_id"], m["type"], m["target_key"], f"{m['weight']:g}", json.dumps(m.get("predicted")),
            json.dumps(m.get("expected")), "unscored" if m.get("score") is None else f"{m['score']:.3f}",
            _clip(m.get("detail") or "", 160),
        )
    return table


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def output_console() -> Console:
    """Stdout console; piped output gets a readable width instead of rich's 80 columns."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=160)


def _status_text(status: str) -> Text:
    good = status in ("solution", "forced_solution")
    return Text(status, style="green" if good else "yellow" if status != "infra_error" else "red")
