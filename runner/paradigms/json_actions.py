"""Reading the paper's JSON action out of a text reply (the tools paradigm without native
function calling): {"action": "<tool>", "args": {...}} or {"action": "final_answer", "answer": ...}."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

FINAL = "final_answer"
MAX_SCAN = 200  # '{' positions tried; bounds the work on hostile text


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
