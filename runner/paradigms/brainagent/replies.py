"""Reading the supervisor's and the subagents' JSON replies (the text protocol).

The first JSON object in a reply that holds one of the expected keys wins (code fences and
prose around it are ignored); anything else is a reply without an action.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from runner.paradigms.json_actions import first_object

_SOLUTION = re.compile(r"<solution>(.*?)(?:</solution>|$)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Objective:
    """One queued objective: the subagent and the goal it is given."""

    agent: str
    goal: str


@dataclass(frozen=True)
class SupervisorReply:
    """Objectives to queue, the final report, or nothing usable (with the reason)."""

    kind: Literal["objectives", "final_report", "none"]
    objectives: list[Objective] = field(default_factory=list)
    report: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class ToolRequest:
    """One requested call: the tool and its arguments (raw text when they are not a JSON object)."""

    tool: str
    arguments: dict[str, Any] | str
    call_id: str | None = None


@dataclass(frozen=True)
class SubagentReply:
    """A segment of calls, the report, or nothing usable."""

    kind: Literal["calls", "report", "none"]
    calls: list[ToolRequest] = field(default_factory=list)
    report: str | None = None
    problem: str | None = None


def parse_supervisor(text: str) -> SupervisorReply:
    """{"objectives": [...]} or {"final_report": ...} (or a <solution> block)."""
    obj = first_object(text or "", ("objectives", "final_report"))
    if obj is None:
        solution = _SOLUTION.search(text or "")
        if solution and solution.group(1).strip():
            return SupervisorReply("final_report", report=solution.group(1).strip())
        return SupervisorReply("none", problem='no JSON object with "objectives" or "final_report"')
    if "final_report" in obj:
        return SupervisorReply("final_report", report=as_report(obj["final_report"]))
    items = obj["objectives"]
    if not isinstance(items, list) or not items:
        return SupervisorReply("none", problem='"objectives" must be a non-empty list')
    objectives = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("agent"), str) or not isinstance(item.get("goal"), str):
            return SupervisorReply("none", problem='each objective needs "agent" and "goal" strings')
        objectives.append(Objective(item["agent"].strip(), item["goal"]))
    return SupervisorReply("objectives", objectives=objectives)


def parse_subagent(text: str) -> SubagentReply:
    """{"calls": [...]} or {"report": ...}."""
    obj = first_object(text or "", ("calls", "report"))
    if obj is None:
        return SubagentReply("none", problem='no JSON object with "calls" or "report"')
    if "report" in obj and "calls" not in obj:
        notes = obj.get("notes")
        body = {"report": obj["report"], **({"notes": notes} if notes else {})}
        return SubagentReply("report", report=json.dumps(body, ensure_ascii=False, indent=1, default=str))
    calls = obj["calls"]
    if not isinstance(calls, list) or not calls:
        return SubagentReply("none", problem='"calls" must be a non-empty list')
    requests = []
    for item in calls:
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            return SubagentReply("none", problem='each call needs a "tool" name and "arguments"')
        requests.append(ToolRequest(item["tool"].strip(), _arguments(item.get("arguments", item.get("args", {})))))
    return SubagentReply("calls", calls=requests)


def as_report(value: Any) -> str:
    """The final report's text: a string as is, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _arguments(raw: Any) -> dict[str, Any] | str:
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            return raw
        return decoded if isinstance(decoded, dict) else raw
    return raw if isinstance(raw, dict) else json.dumps(raw)
