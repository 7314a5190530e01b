"""Replies as recorded in an earlier run.

Reads runs/<run_id>/instances/<case_id>/transcript.json ({"turns": [Turn, ...]}) and hands
out each turn's raw `reply` in order, then "". Re-running recorded replies against a changed
sandbox or controller shows what the change does to the same model behaviour. Token usage
is not replayed: no tokens are spent in the replaying run. In the tools paradigm, turns
that made native function calls are replayed as the same calls (ids, names, arguments).
"""
from __future__ import annotations

import json
from pathlib import Path

from runner.models.base import Completion, Message, Model, ModelError, ModelSession, ToolCall
from runner.models.scripted import ListSession
from validation.instance import Instance


class ReplayModel(Model):
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        if not (self.run_dir / "instances").is_dir():
            raise ValueError(
                f"replay: {self.run_dir} is not a run directory (no instances/ folder)"
            )
        self.name = f"replay:{self.run_dir}"

    def session(self, instance: Instance) -> ModelSession:
        return _ReplaySession(self.run_dir, instance.case_id)

    def describe(self) -> dict:
        return {"name": self.name, "run_dir": str(self.run_dir)}


class _ReplaySession(ModelSession):
    """Loads the recorded replies on the first call, so a missing case surfaces as a
    ModelError through the controller's normal path."""

    def __init__(self, run_dir: Path, case_id: str) -> None:
        self._run_dir = run_dir
        self._case_id = case_id
        self._inner: ListSession | None = None

    def complete(self, messages: list[Message]) -> Completion:
        if self._inner is None:
            self._inner = ListSession(recorded_replies(self._run_dir, self._case_id))
        return self._inner.complete(messages)

    def complete_with_tools(self, messages: list[Message], tools: list[dict]) -> Completion:
        index = self._inner._calls if self._inner is not None else 0
        completion = self.complete(messages)
        calls = recorded_native_calls(self._run_dir, self._case_id, index)
        if calls:
            completion.tool_calls = calls
        return completion


def recorded_native_calls(run_dir: Path, case_id: str, index: int) -> list[ToolCall]:
    """The native function calls of one recorded turn (none for text replies)."""
    turns = json.loads((run_dir / "instances" / case_id / "transcript.json").read_text(encoding="utf-8"))["turns"]
    if index >= len(turns):
        return []
    calls = []
    for call in turns[index].get("tool_calls") or []:
        if call.get("call_id") is None:
            continue  # a JSON text action: the reply text already carries it
        arguments = call.get("arguments")
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append(ToolCall(id=call["call_id"], name=call.get("name", ""), arguments=raw))
    return calls


def recorded_replies(run_dir: Path, case_id: str) -> list[str]:
    """The assistant replies of one case, in turn order; ModelError when absent or malformed."""
    path = run_dir / "instances" / case_id / "transcript.json"
    if not path.is_file():
        raise ModelError(
            f"replay: case {case_id} is not in run {run_dir} (no {path})", infrastructure=False
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"replay: cannot read {path}: {exc}", infrastructure=False) from exc
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(turns, list):
        raise ModelError(f'replay: {path}: missing list field "turns"', infrastructure=False)
    replies = []
    for i, turn in enumerate(turns):
        reply = turn.get("reply") if isinstance(turn, dict) else None
        if not isinstance(reply, str):
            raise ModelError(
                f'replay: {path}: "turns[{i}].reply" is not a string', infrastructure=False
            )
        replies.append(reply)
    return replies
