"""The BrainAgent loop: the supervisor decomposes, subagents plan round by round, the
supervisor synthesises the final report.

One model plays every role, each in its own conversation. A subagent's planning round: the
controller fetches the shared_state summary from the kernel, the subagent returns a segment
of tool calls (or its report), the calls run in order, one kernel execution each, and their
results, with the ids they registered, go back before the next round.

Controls: max_objectives (supervisor queue), max_planning_rounds per subagent (the last one
asks for the report), max_tool_calls per instance (calls past it are refused once; asking
again ends the instance as max_tool_calls), repeat_limit identical calls (repeated_failure),
max_no_action unusable replies per conversation (missing_action), max_rounds supervisor turns,
and the instance deadline; each tool call runs under the execution timeout.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from braintools import schemas
from runner.core.settings import ControlLimits
from runner.core.transcript import ActionKind, ToolCallRecord, Turn
from runner.models.base import Completion, Message, ModelSession
from runner.paradigms.brainagent import prompts
from runner.paradigms.brainagent.agents import SUBAGENTS, Subagent, all_agents
from runner.paradigms.brainagent.kernel import CallOutcome, KernelTools
from runner.paradigms.brainagent.replies import (
    Objective,
    ToolRequest,
    parse_subagent,
    parse_supervisor,
)
from runner.paradigms.json_actions import REUSED_ID, REUSED_MESSAGE, parse_arguments, with_distinct_ids
from runner.paradigms.loop import InstanceOutcome, Stop, TurnLoop, sha256_text
from runner.sandbox.base import SandboxError
from validation.instance import Instance


def supervisor_messages(instance: Instance, controls: ControlLimits) -> list[Message]:
    """The conversation the supervisor starts with (no tool schemas: it only delegates)."""
    return [{"role": "system", "content": prompts.supervisor_system(all_agents(), controls.max_objectives)},
            {"role": "user", "content": prompts.task_message(instance)}]


class BrainAgentLoop(TurnLoop):
    """One instance under BrainAgent: supervisor turns around subagent planning rounds."""

    def __init__(self, instance: Instance, session: ModelSession, tools: KernelTools, controls: ControlLimits,
                 **hooks: Any) -> None:
        super().__init__(instance, session, controls, supervisor_messages(instance, controls), **hooks)
        self.tools = tools
        self.tools.time_left = self.time_left
        self.calls_made = 0
        self.refused_ids: set[str] = set()  # this delegation's native calls that reused an id
        self.ceiling_told = False
        self.forced = False
        self.signatures: Counter[str] = Counter()
        self.delegations = 0

    def run(self) -> InstanceOutcome:
        """Supervisor turns until a final report, a control, or the supervisor's turns run out."""
        try:
            return self._supervise()
        except Stop as stop:
            return self._end(stop.status, None, stop.error)

    # --- the supervisor -------------------------------------------------------------------

    def _supervise(self) -> InstanceOutcome:
        no_action = 0
        for turn_index in range(self.controls.max_rounds):
            final = turn_index == self.controls.max_rounds - 1
            self._check_time()
            completion = self._model_call(lambda: self.session.complete(list(self.messages)))
            self.messages.append({"role": "assistant", "content": completion.text})
            reply = parse_supervisor(completion.text)
            turn = self._turn(completion, prompts.SUPERVISOR, None, _supervisor_action(reply.kind))
            if reply.kind == "final_report":
                self._record(turn)
                return self._end("forced_solution" if (final or self.forced) else "solution", reply.report)
            if reply.kind == "none" or final:
                no_action += reply.kind == "none"
                turn.note = "final supervisor turn without a final report" if final else f"no action: {reply.problem}"
                self._record(turn)
                if final:
                    return self._end("max_rounds", None, "the supervisor gave no final report")
                if no_action >= self.controls.max_no_action:
                    return self._end("missing_action", None)
                self.messages.append({"role": "user", "content": prompts.NO_ACTION_SUPERVISOR})
                continue
            turn.note = "queue: " + "; ".join(f"{o.agent}: {o.goal[:80]}" for o in reply.objectives)
            self._record(turn)
            reports = self._run_queue(reply.objectives)
            last = turn_index + 1 == self.controls.max_rounds - 1
            self.messages.append({"role": "user", "content": prompts.synthesis_message(reports, last)})
        return self._end("max_rounds", None, "the supervisor gave no final report")

    def _run_queue(self, objectives: list[Objective]) -> list[tuple[str, str, str | None]]:
        reports: list[tuple[str, str, str | None]] = []
        for objective in objectives:
            if self.delegations >= self.controls.max_objectives:
                reports.append((objective.agent, objective.goal, f"(not run: the limit of {self.controls.max_objectives} objectives is reached)"))
                continue
            self.delegations += 1
            if objective.agent not in SUBAGENTS:
                reports.append((objective.agent, objective.goal,
                                f"(no such subagent; the subagents are {', '.join(SUBAGENTS.names())})"))
                continue
            reports.append((objective.agent, objective.goal, self._delegate(SUBAGENTS.get(objective.agent), objective.goal)))
        return reports

    # --- a subagent -----------------------------------------------------------------------

    def _delegate(self, agent: Subagent, goal: str) -> str | None:
        """The subagent's planning rounds; its report, or None when it never gave one."""
        messages: list[Message] = [
            {"role": "system", "content": prompts.subagent_system(agent, self.controls.max_planning_rounds)},
            {"role": "user", "content": prompts.delegation_message(goal, self.instance)},
        ]
        tool_schemas = schemas(agent.groups) if self.controls.tool_calling == "auto" else []
        call_ids: set[str] = set()  # native call ids are per conversation
        self.refused_ids = set()
        no_action = 0
        for index in range(self.controls.max_planning_rounds):
            final = index == self.controls.max_planning_rounds - 1
            self._check_time()
            summary = self._summary()
            messages.append({"role": "user", "content": prompts.round_message(index, summary, final)})
            completion = self._model_call(lambda: self.session.complete_with_tools(list(messages), tool_schemas))
            native = with_distinct_ids(completion.tool_calls, call_ids)
            completion.tool_calls = [call for call, _ in native]
            self.refused_ids |= {call.id for call, reused in native if reused}
            requests = [ToolRequest(c.name, parse_arguments(c.arguments), c.id) for c in completion.tool_calls]
            reply = parse_subagent(completion.text) if not requests else None
            if reply is not None and reply.kind == "calls":
                requests = reply.calls
            kind: ActionKind = "tool_call" if requests else ("report" if reply and reply.kind == "report" else "none")
            turn = self._turn(completion, agent.name, goal, kind)
            turn.state_summary = summary
            self.messages_for(messages, completion, requests)
            if kind == "report" and reply is not None:
                self._record(turn)
                return reply.report
            if final:
                turn.note = "last planning round: calls not run" if requests else "last planning round without a report"
                self._record(turn)
                self.forced = True
                return None
            if kind == "none":
                no_action += 1
                turn.note = f"no action ({no_action}/{self.controls.max_no_action}): {reply.problem if reply else ''}"
                self._record(turn)
                if no_action >= self.controls.max_no_action:
                    raise Stop("missing_action", f"{agent.name} gave {no_action} replies without an action")
                messages.append({"role": "user", "content": prompts.NO_ACTION_SUBAGENT})
                continue
            self._run_segment(turn, requests, messages)
        return None

    def messages_for(self, messages: list[Message], completion: Completion, requests: list[ToolRequest]) -> None:
        """The assistant message of a planning reply, native calls included."""
        if completion.tool_calls:
            messages.append({"role": "assistant", "content": completion.text or None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in completion.tool_calls]})
        else:
            messages.append({"role": "assistant", "content": completion.text})

    def _run_segment(self, turn: Turn, requests: list[ToolRequest], messages: list[Message]) -> None:
        """Run the calls in order; record each; send their results back."""
        lines: list[str] = []
        restarted = False
        for position, request in enumerate(requests, 1):
            outcome = self._call(turn, request)
            restarted = restarted or bool(outcome.observation and outcome.observation.restarted)
            if request.call_id is not None:
                messages.append({"role": "tool", "tool_call_id": request.call_id, "content": outcome.text})
            lines.append(prompts.result_line(position, request.tool, outcome.text))
        self._record(turn)
        if restarted:
            self._event("kernel_restart", "after a tool call; shared_state was lost", turn.index)
        if requests[0].call_id is None:
            messages.append({"role": "user", "content": prompts.results_message(lines, restarted)})
        elif restarted:
            messages.append({"role": "user", "content": prompts.results_message([], True)})
        self._check_repeats(turn)

    def _call(self, turn: Turn, request: ToolRequest) -> CallOutcome:
        if request.call_id in self.refused_ids:
            turn.tool_calls.append(ToolCallRecord(name=request.tool, arguments=request.arguments, call_id=request.call_id,
                                                  status="error", error_code=REUSED_ID, result=REUSED_MESSAGE))
            return CallOutcome(REUSED_MESSAGE, False, None)
        if self.calls_made >= self.controls.max_tool_calls:
            if self.ceiling_told:
                self._record(turn)
                raise Stop("max_tool_calls", f"tool call past the ceiling of {self.controls.max_tool_calls}")
            self.ceiling_told = self.forced = True
            text = prompts.tool_ceiling_message(self.controls.max_tool_calls)
            turn.tool_calls.append(ToolCallRecord(name=request.tool, arguments=request.arguments, call_id=request.call_id,
                                                  status="error", result=text))
            return CallOutcome(text, False, None)
        self.calls_made += 1
        try:
            outcome = self.tools.call(request.tool, request.arguments)
        except SandboxError as exc:
            self._record(turn)
            self._event("sandbox_failure", str(exc), turn.index)
            raise Stop("infra_error", f"sandbox error: {exc}") from exc
        obs = outcome.observation
        turn.tool_calls.append(ToolCallRecord(
            name=request.tool, arguments=request.arguments, call_id=request.call_id, status="ok" if outcome.ok else "error",
            error_code=outcome.error_code, result=outcome.text, duration_s=obs.duration_s if obs else 0.0,
            registered=outcome.registered, cpu_s=obs.cpu_s if obs else None, host_load=obs.host_load if obs else None,
        ))
        return outcome

    def _check_repeats(self, turn: Turn) -> None:
        """The same call (tool and arguments) repeat_limit times ends the instance."""
        for call in turn.tool_calls:
            key = sha256_text(json.dumps([call.name, call.arguments], sort_keys=True, default=str))
            self.signatures[key] += 1
            if self.signatures[key] >= self.controls.repeat_limit:
                raise Stop("repeated_failure", f"same call {call.name} {self.signatures[key]} times")

    def _summary(self) -> str:
        try:
            summary, obs = self.tools.summary()
        except SandboxError as exc:
            self._event("sandbox_failure", str(exc))
            raise Stop("infra_error", f"sandbox error: {exc}") from exc
        if obs.restarted:
            self._event("kernel_restart", "while reading shared_state")
        return summary

    def _turn(self, completion: Completion, role: str, objective: str | None, kind: ActionKind) -> Turn:
        return Turn(index=len(self.turns), reply=completion.text, usage=completion.usage,
                    latency_s=round(completion.latency_s, 4), action=kind, role=role, objective=objective)


def _supervisor_action(kind: str) -> ActionKind:
    return {"objectives": "decomposition", "final_report": "solution"}.get(kind, "none")  # type: ignore[return-value]
