"""The HTML report's instance browser: every instance run with its instruction, turns, report,
units and retained files (images embedded within a page-wide budget)."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from runner.core.transcript import Turn
from runner.report.format import MISSING
from runner.report.html_views import (
    MAX_CODE,
    MAX_IMAGE_BYTES,
    MAX_INSTRUCTION,
    MAX_OBSERVATION,
    MAX_REPLY,
    MAX_REPORT,
    MAX_TOOL_TEXT,
    MAX_VALUE,
    ArtifactView,
    ImageBudget,
    InstanceView,
    TurnView,
    UnitView,
    as_text,
    cut,
    format_cell,
    instance_anchor,
)
from runner.report.rows import InstanceRow, RunData, UnitRow
from runner.run.records import ArtifactEntry, entry_key
from validation.instance import Instance
from validation.scoring import InstanceScore, MetricResult
from validation.unit import TRUTH_KEYS

# --- instance browser -----------------------------------------------------------------------

def instance_view(run: RunData, row: InstanceRow, budget: ImageBudget) -> InstanceView:
    """One instance run as the browser shows it; its images take from the page's `budget`."""
    key = entry_key(row.case_id, row.epoch)
    target = row.roles.get("target")
    score = format_cell(row.score, "score")
    summary = " · ".join(x for x in (row.case_id if row.epoch == 1 else f"{row.case_id} (epoch {row.epoch})",
                                     row.task_id, row.subset, row.difficulty or "", row.status, score) if x)
    facts = [("status", row.status), ("score", score), ("rounds", str(row.rounds)),
             ("duration", format_cell(row.duration_s, "seconds")),
             ("target tokens", format_cell((target.prompt_tokens + target.completion_tokens) if target else None, "int")),
             ("parse", row.parse_method or MISSING)]
    if row.error:
        facts.append(("error", row.error))
    view = InstanceView(anchor=instance_anchor(run.run_id, row.case_id, row.epoch), summary=summary,
                        status=row.status, facts=facts)
    instance = _read(view, "instance.json", lambda: run.store.saved_instance(key))
    if instance is not None:
        paths = instance.agent_input.data_path
        view.instruction = cut(instance.agent_input.instruction, MAX_INSTRUCTION)
        view.facts.append(("input", ", ".join(paths) if isinstance(paths, list) else paths))
    transcript = _read(view, "transcript.json", lambda: run.store.read_transcript(key))
    if transcript is not None:
        view.turns = [_turn_view(turn) for turn in transcript.turns]
        view.events = [f"{e.kind}" + (f" (turn {e.turn})" if e.turn is not None else "") + f": {e.detail}"
                       for e in transcript.events]
    view.report = cut(_read(view, "report.md", lambda: run.store.read_report(key)) or "", MAX_REPORT)
    scores = _read(view, "score.json", lambda: _score(run, key))
    view.units = _unit_views(row.units, scores, instance)
    entries = _read(view, "artifacts.json", lambda: run.store.read_artifacts(key)) or []
    view.artifacts = [_artifact_view(run, key, entry, budget) for entry in entries]
    return view


def _read(view: InstanceView, what: str, read: Any) -> Any:
    """A record, or None with a note when it is missing or unreadable (one broken record must
    not take the whole report down)."""
    try:
        return read()
    except (OSError, ValueError) as exc:
        view.problems.append(f"{what}: {type(exc).__name__}: {exc}")
        return None


def _score(run: RunData, key: str) -> InstanceScore | None:
    if run.info.scores:
        return run.store.read_rescore(key, run.info.scores)
    return run.store.read_score(key)


def _turn_view(turn: Turn) -> TurnView:
    usage = turn.usage
    tokens = (f", {usage.prompt_tokens or 0:,} + {usage.completion_tokens or 0:,} tokens"
              if usage.prompt_tokens is not None or usage.completion_tokens is not None else "")
    observation = turn.observation
    observed, observed_title = None, ""
    if observation is not None:
        observed = cut(observation.text, MAX_OBSERVATION)
        observed_title = f"observation: {observation.status}"
        if observation.error_name:
            observed_title += f" ({observation.error_name})"
        if observation.truncated_chars:
            observed_title += f"; {observation.truncated_chars:,} characters were cut before the model saw it"
        if observation.restarted:
            observed_title += "; the kernel was restarted"
    calls = [{"name": c.name, "status": c.status + (f" ({c.error_code})" if c.error_code else ""),
              "arguments": cut(as_text(c.arguments), MAX_TOOL_TEXT), "result": cut(c.result, MAX_TOOL_TEXT)}
             for c in turn.tool_calls]
    return TurnView(title=f"turn {turn.index} · {turn.action} · {turn.latency_s:.1f} s{tokens}",
                    reply=cut(_reply_without_code(turn), MAX_REPLY), code=cut(turn.code, MAX_CODE) if turn.code else None,
                    observation=observed, observation_title=observed_title, tool_calls=calls, note=turn.note)


def _reply_without_code(turn: Turn) -> str:
    """The reply with the executed code left out where it appears verbatim: the turn shows
    that code once, under CODE."""
    code = (turn.code or "").strip()
    if not code or code not in turn.reply:
        return turn.reply
    return turn.reply.replace(code, "[the code under CODE]", 1)


def _value(value: Any) -> str:
    if value is None:
        return MISSING
    return cut(value if isinstance(value, str) else as_text(value), MAX_VALUE)


def _unit_views(units: list[UnitRow], score: InstanceScore | None, instance: Instance | None) -> list[UnitView]:
    """The score record's metrics (with evidence) when there is one, else the row's units."""
    specs = {m.metric_id: m for m in instance.eval_config.metrics} if instance is not None else {}
    metrics: list[MetricResult | UnitRow] = list(score.metrics) if score is not None else list(units)
    views = []
    for metric in metrics:
        spec = specs.get(metric.metric_id)
        params = {k: v for k, v in (spec.params if spec else {}).items() if k not in TRUTH_KEYS}
        params.update({k: v for k, v in (spec.model_extra or {}).items()} if spec else {})
        evidence = getattr(metric, "evidence", None)
        views.append(UnitView(
            metric=metric.metric_id, type=metric.type, weight=f"{metric.weight:g}",
            predicted=_value(metric.predicted), expected=_value(metric.expected),
            score=format_cell(metric.score, "float") if metric.scored else "not scored",
            detail=metric.detail, params=cut(as_text(params), 2 * MAX_VALUE) if params else "",
            evidence=cut(json.dumps(evidence, ensure_ascii=False, indent=1, default=str), 4 * MAX_VALUE)
            if evidence else ""))
    return views


IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}


def _artifact_view(run: RunData, key: str, entry: ArtifactEntry, budget: ImageBudget) -> ArtifactView:
    size = format_cell(entry.bytes, "int") + " bytes" if entry.bytes is not None else MISSING
    view = ArtifactView(path=entry.path, size=size, sha256=entry.sha256 or MISSING,
                        note=f"not retained: {entry.skipped}" if entry.skipped else "")
    mime = IMAGE_TYPES.get(Path(entry.path).suffix.lower())
    if entry.skipped or mime is None:
        return view
    data = _artifact_bytes(run, key, entry.path)
    if data is None:
        view.note = "missing from the run directory"
    elif len(data) > MAX_IMAGE_BYTES:
        view.note = f"not embedded: larger than {MAX_IMAGE_BYTES // 1000} kB"
    elif not _looks_like(data, mime):
        view.note = "not embedded: its content is not the image its name says"
    elif len(data) * 4 // 3 > budget.left:
        view.note = "not embedded: the page's image allowance is used up"
    else:
        encoded = base64.b64encode(data).decode("ascii")
        budget.left -= len(encoded)
        view.image = f"data:{mime};base64,{encoded}"
    return view


def _artifact_bytes(run: RunData, key: str, path: str) -> bytes | None:
    """The retained file, read only from inside the instance's artifacts directory."""
    try:
        root = run.store.artifacts_dir(key).resolve()
        file = (root / path).resolve()
        if not file.is_relative_to(root) or not file.is_file():
            return None
        return file.read_bytes()
    except (OSError, ValueError):
        return None


def _looks_like(data: bytes, mime: str) -> bool:
    if mime == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype svg"))
