"""The kernel end of the BrainAgent protocol: one tool call per execution, one marker line back.

The controller sends `braintools.serve('<request JSON>', <max chars>)`: the request is a
string literal, so a model's arguments are data and never code. `serve` prints one line,
`RESULT_MARKER` followed by the response as JSON, bounded to `max_chars`; `summary` prints
the shared_state view the same way. The controller reads the last marker line back.
"""
from __future__ import annotations

import json
from typing import Any

from braintools.registry import call
from braintools.state import STATE

RESULT_MARKER = "BRAINTOOLS_RESULT "
SUMMARY_MARKER = "BRAINTOOLS_STATE "


def serve(request_json: str, max_chars: int = 12000) -> None:
    """Run the request {"tool": name, "arguments": {...}} and print its marker line."""
    try:
        request = json.loads(request_json)
    except (TypeError, ValueError) as exc:
        response: dict[str, Any] = {"error": {"code": "bad_argument", "argument": "request", "message": f"not JSON: {exc}"}}
    else:
        if not isinstance(request, dict):
            request = {}
        response = call(str(request.get("tool", "")), request.get("arguments", {}), max_chars=max_chars)
    text = json.dumps(response, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    if len(text) > max_chars:
        text = json.dumps({"tool": response.get("tool"), "note": f"response of {len(text)} characters cut to its ids",
                           **{k: _ids(v) for k, v in response.items() if k not in ("tool", "note")}}, default=str)[:max_chars]
    print(RESULT_MARKER + text)


def summary(max_chars: int = 4000) -> None:
    """Print the id-based shared_state view (bounded) on one marker line, as JSON text."""
    print(SUMMARY_MARKER + json.dumps(STATE.summary(max_chars), ensure_ascii=False))


def _ids(value: Any) -> Any:
    if isinstance(value, dict) and "id" in value:
        return {"id": value["id"], "kind": value.get("kind")}
    if isinstance(value, dict) and "error" in value:
        return value
    return "omitted"
