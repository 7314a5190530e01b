"""The tools paradigm (EEGAgentBench): each turn the model calls one EEG tool or answers.

Native function calling where the endpoint supports it, the paper's JSON action format in
text otherwise; both may appear in one run. Tools run in the controller against the
instance's input files (runner/paradigms/toolbox.py). The final answer becomes the report
`{"answer": <answer>}`, scored by the usual parser and validation units.

Controls: max_rounds is the turn ceiling (the last turn asks for the answer), max_tool_calls
the tool-call ceiling (calls past it are refused once; calling again ends the instance as
max_tool_calls), max_no_action replies without a valid action, repeat_limit identical
failing calls, and the instance deadline.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import eegtools
from runner.core.settings import ControlLimits
from runner.core.transcript import ActionKind, ToolCallRecord, Turn
from runner.models.base import Completion, Message, ModelSession
from runner.paradigms import prompts
from runner.paradigms.base import Episode, FirstRequest, Paradigm
from runner.paradigms.json_actions import (
    REUSED_ID,
    REUSED_MESSAGE,
    parse_arguments,
    parse_json_action,
    with_distinct_ids,
)
from runner.paradigms.loop import InstanceOutcome, TurnLoop, sha256_text
from runner.paradigms.loop import Stop as _Stop
from runner.paradigms.toolbox import Toolbox
from validation.instance import Instance


def answer_report(answer: Any) -> str:
    """The instance's report: the final answer under "answer", as JSON text."""
    return json.dumps({"answer": answer}, ensure_ascii=False, indent=2, default=str)


def first_request(instance: Instance, toolbox: Toolbox, controls: ControlLimits) -> FirstRequest:
    """The conversation a tools instance starts with, and the schemas offered natively."""
    messages: list[Message] = [
        {"role": "system", "content": prompts.tools_system_prompt()},
        {"role": "user", "content": prompts.tools_instance_message(instance, toolbox.describe_records())},
    ]
    return FirstRequest(messages, eegtools.schemas() if controls.tool_calling == "auto" else [])


class ToolsLoop(TurnLoop):
    """One instance under the tools paradigm's controls: turn and tool-call ceilings, repeats."""

    def __init__(
        self,
        instance: Instance,
        session: ModelSession,
        toolbox: Toolbox,
        controls: ControlLimits,
        **hooks: Any,
    ) -> None:
        first = first_request(instance, toolbox, controls)
        super().__init__(instance, session, controls, first.messages, **hooks)
        self.toolbox = toolbox
        self.schemas = first.tools
        self.calls_made = 0
        self.call_ids: set[str] = set()  # native call ids handed out so far
        self.ceiling_told = False
        self.failures: Counter[str] = Counter()
        self.no_action = 0

    def _round(self, index: int, final: bool) -> InstanceOutcome | None:
        self._check_time()
        if final:
            self.messages.append({"role": "user", "content": prompts.TOOLS_FINAL_ROUND})
        completion = self._complete()
        if completion.tool_calls:
            return self._native_calls(index, completion, final)
        action = parse_json_action(completion.text)
        turn = self._turn(index, completion, action.kind, final)
        self.messages.append({"role": "assistant", "content": completion.text})
        if action.kind == "final_answer":
            return self._answer(turn, action.answer, final)
        if final:
            self._record(turn)
            return self._end("max_rounds", None)
        if action.kind == "none":
            return self._no_action(turn, action.problem)
        result = self._call(turn, action.name, action.args, None)
        self.messages.append({"role": "user", "content": prompts.observation_message(result)})
        self._record(turn)
        self._check_repeats(turn)
        return None

    def _native_calls(self, index: int, completion: Completion, final: bool) -> InstanceOutcome | None:
        """Native calls: every call gets a `tool` message (the API requires one per id)."""
        turn = self._turn(index, completion, "tool_call", final)
        calls = with_distinct_ids(completion.tool_calls, self.call_ids)
        self.messages.append({
            "role": "assistant",
            "content": completion.text or None,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c, _ in calls
            ],
        })
        for call, reused in calls:
            if final or reused:
                text = "Not run: this is the final turn." if final else REUSED_MESSAGE
                turn.tool_calls.append(ToolCallRecord(name=call.name, arguments=parse_arguments(call.arguments), call_id=call.id,
                                                      status="error", error_code=None if final else REUSED_ID, result=text))
            else:
                text = self._call(turn, call.name, parse_arguments(call.arguments), call.id)
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        self._record(turn)
        if final:
            return self._end("max_rounds", None)
        self._check_repeats(turn)
        return None

    def _call(self, turn: Turn, name: str, args: dict[str, Any] | str, call_id: str | None) -> str:
        """Run one tool call (or refuse it past the ceiling); record it; return the result text."""
        if self.calls_made >= self.controls.max_tool_calls:
            if self.ceiling_told:
                self._record(turn)
                raise _Stop("max_tool_calls", f"tool call past the ceiling of {self.controls.max_tool_calls}")
            self.ceiling_told = True
            text = prompts.tool_ceiling_message(self.controls.max_tool_calls)
            turn.note = "tool-call ceiling reached"
            turn.tool_calls.append(ToolCallRecord(name=name, arguments=args, call_id=call_id, status="error", result=text))
            return text
        self.calls_made += 1
        result = self.toolbox.call(name, args)
        turn.tool_calls.append(ToolCallRecord(
            name=name, arguments=args, call_id=call_id, status="ok" if result.ok else "error",
            error_code=result.error_code, result=result.text, truncated_chars=result.truncated_chars,
            duration_s=result.duration_s,
        ))
        return result.text

    def _answer(self, turn: Turn, answer: Any, final: bool) -> InstanceOutcome:
        self._record(turn)
        forced = final or self.ceiling_told
        return self._end("forced_solution" if forced else "solution", answer_report(answer))

    def _no_action(self, turn: Turn, problem: str | None) -> InstanceOutcome | None:
        self.no_action += 1
        turn.note = f"no action ({self.no_action}/{self.controls.max_no_action}): {problem}"
        self._record(turn)
        if self.no_action >= self.controls.max_no_action:
            return self._end("missing_action", None)
        self.messages.append({"role": "user", "content": prompts.TOOLS_NO_ACTION})
        return None

    def _check_repeats(self, turn: Turn) -> None:
        """The same failing call (tool, arguments, error) repeat_limit times ends the instance."""
        for call in turn.tool_calls:
            if call.status == "ok" or call.error_code is None:
                continue
            key = sha256_text(json.dumps([call.name, call.arguments, call.error_code], sort_keys=True, default=str))
            self.failures[key] += 1
            if self.failures[key] >= self.controls.repeat_limit:
                raise _Stop("repeated_failure", f"same failing call {call.name} ({call.error_code}) {self.failures[key]} times")

    def _turn(self, index: int, completion: Completion, kind: ActionKind, final: bool) -> Turn:
        return Turn(
            index=index, reply=completion.text, usage=completion.usage,
            latency_s=round(completion.latency_s, 4), action=kind, note="final round" if final else None,
        )

    def _complete(self) -> Completion:
        return self._model_call(lambda: self.session.complete_with_tools(list(self.messages), self.schemas))


class Tools(Paradigm):
    """EEGAgentBench's tool calling: no code, one tool call or the answer per turn; the
    tools run in the controller against the instance's recordings."""

    name = "tools"
    needs_sandbox = False

    def run(self, episode: Episode) -> InstanceOutcome:
        """The tool loop over the instance's recordings."""
        toolbox = Toolbox(episode.instance, episode.data_root, episode.controls.tool_budget_tokens)
        return ToolsLoop(episode.instance, episode.session, toolbox, episode.controls,
                         should_stop=episode.should_stop, on_turn=episode.on_turn, on_event=episode.on_event).run()

    def first_request(self, instance: Instance, controls: ControlLimits, data_root: Path) -> FirstRequest:
        """The system prompt, the instance message with its records, the tool schemas."""
        return first_request(instance, Toolbox(instance, data_root, controls.tool_budget_tokens), controls)

    def typical_calls(self, controls: ControlLimits, reply_tokens: int) -> tuple[int, int]:
        """Half the turn ceiling, each turn adding half the reply limit and half the tool-output budget."""
        return math.ceil(controls.max_rounds / 2), (reply_tokens + controls.tool_budget_tokens) // 2

    def describe(self) -> dict[str, Any]:
        """The tool schemas change what the model sees: their hash goes into run.json."""
        return {"name": self.name, "tool_schemas_sha256": eegtools.schemas_sha256()}
