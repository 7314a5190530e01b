"""Reading the paper's JSON action out of a text reply (the tools paradigm without native
function calling): {"action": "<tool>", "args": {...}} or {"action": "final_answer", "answer": ...};
and the two things native calls need read or checked: their arguments and their ids."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from runner.models.base import ToolCall

FINAL = "final_answer"
MAX_SCAN = 200  # '{' positions tried; bounds the work on hostile text
REUSED_ID = "reused_call_id"  # the error code of a native call whose id was already used
REUSED_MESSAGE = "Not run: this call reused the id of an earlier call in this conversation; give each call its own id."


@dataclass(frozen=True)
class JsonAction:
    """The action read from a reply: a tool call (name, args), the final answer, or none (problem)."""

    kind: Literal["tool_call", "final_answer", "none"]
    name: str = ""
    args: dict[str, Any] | str = field(default_factory=dict)  # raw text when "args" is not an object
    answer: Any = None
    problem: str | None = None  # why a reply holds no action


def parse_json_action(reply: str) -> JsonAction:
    """The first JSON object in the reply that has an "action" key (code fences allowed)."""
    obj = first_object(reply or "", ("action",))
    if obj is None:
        return JsonAction("none", problem='no JSON object with an "action" key')
    action = obj["action"]
    if not isinstance(action, str) or not action.strip():
        return JsonAction("none", problem='"action" must be a tool name or "final_answer"')
    if action == FINAL:
        if "answer" not in obj:
            return JsonAction("none", problem='final_answer without an "answer" field')
        return JsonAction("final_answer", answer=obj["answer"])
    args = obj.get("args", obj.get("arguments", {}))
    if args is None:
        args = {}
    if isinstance(args, str):  # some models double-encode the arguments
        try:
            decoded = json.loads(args)
            args = decoded if isinstance(decoded, dict) else args
        except json.JSONDecodeError:
            pass
    if not isinstance(args, dict):
        args = json.dumps(args)
    return JsonAction("tool_call", name=action.strip(), args=args)


def first_object(text: str, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The first JSON object in `text` holding one of `keys` (at most MAX_SCAN tries)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    tried = 0
    while start != -1 and tried < MAX_SCAN:
        tried += 1
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and any(k in obj for k in keys):
            return obj
        start = text.find("{", start + 1)
    return None


def parse_arguments(raw: str) -> dict[str, Any] | str:
    """Native function-call arguments: the JSON object, or the raw text when it is not one."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, dict) else raw


def with_distinct_ids(calls: list[ToolCall], used: set[str]) -> list[tuple[ToolCall, bool]]:
    """Each native call as the conversation will hold it, and whether the model reused its id.

    The API wants one `tool` message per distinct id, so a call whose id is empty gets a fresh
    one (and runs), and a call reusing an id of this conversation gets a fresh one and is
    refused (the caller records a REUSED_ID error): the next request stays well-formed. `used`
    gains every id handed out."""
    taken = used | {call.id for call in calls}  # a fresh id must not be one the model gives later in the reply
    distinct = []
    for call in calls:
        reused = bool(call.id) and call.id in used
        if reused or not call.id:
            call = replace(call, id=_fresh(call.id or "call", taken))
        used.add(call.id)
        taken.add(call.id)
        distinct.append((call, reused))
    return distinct


def _fresh(base: str, used: set[str]) -> str:
    number = 2
    while f"{base}-{number}" in used:
        number += 1
    return f"{base}-{number}"
