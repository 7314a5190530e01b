"""The oracle under BrainAgent: plays the task's tool plan through the real supervisor and subagents.

As supervisor it queues one objective for the plan's subagent and, once that reports, gives
the report as the final report. As subagent it returns, each planning round, the longest run
of remaining plan steps whose references are known, reads the ids and values out of the
results the controller sends back, and reports when the plan is done. It reads nothing from
the host but the plan and the instance's parameters, so a score below 100 means the toolset,
the sandbox or the loop disagrees with the ground truth.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from runner.models.base import Message, ModelError
from runner.paradigms.brainagent.agents import default_agent
from runner.paradigms.brainagent.plans import (
    Bindings,
    PlanError,
    PlanStep,
    build_report,
    finished,
    load_plan,
    next_segment,
)
from runner.paradigms.brainagent.prompts import ROLE_PREFIX, SUPERVISOR
from validation.instance import Instance

_RESULT_LINE = re.compile(r"^\[(\d+)\] [^:]+: (.*)$")


def is_brainagent(messages: list[Message]) -> bool:
    """Whether a conversation belongs to the BrainAgent paradigm (its system prompt's role line)."""
    return bool(messages) and str(messages[0].get("content") or "").startswith(ROLE_PREFIX)


class PlanPlayer:
    """One instance's plan, played role by role."""

    def __init__(self, project_root: Path, instance: Instance) -> None:
        try:
            self.plan = load_plan(project_root, instance.meta_info.task_id or "")
        except PlanError as exc:
            raise ModelError(f"oracle: {exc}", infrastructure=False) from exc
        self.instance = instance
        self.bindings = Bindings(instance)
        self.pending: list[PlanStep] = []
        self.delegated = False
        self.report: dict[str, Any] | None = None
        self.problem: str | None = None

    def reply(self, messages: list[Message]) -> str:
        """The next reply of whichever role `messages` belong to."""
        role = str(messages[0].get("content") or "").splitlines()[0][len(ROLE_PREFIX):]
        return self._supervisor() if role == SUPERVISOR else self._subagent(messages)

    def _supervisor(self) -> str:
        if not self.delegated:
            self.delegated = True
            agent = self.plan.agent or default_agent(self.instance.meta_info.bench_subset).name
            goal = self.plan.objective or self.instance.agent_input.instruction
            return json.dumps({"objectives": [{"agent": agent, "goal": goal}]}, ensure_ascii=False)
        if self.report is None:
            return json.dumps({"final_report": f"The tool plan did not complete: {self.problem or 'no report'}"})
        return json.dumps({"final_report": self.report}, ensure_ascii=False, indent=2)

    def _subagent(self, messages: list[Message]) -> str:
        if self.problem is not None:
            return json.dumps({"report": {"error": self.problem}})
        try:
            if self.pending:
                self._absorb(messages)
            segment = next_segment(self.plan, self.bindings)
            if finished(self.plan, self.bindings):
                self.report = build_report(self.plan, self.bindings)
                return json.dumps({"report": self.report}, ensure_ascii=False)
            if not segment:
                raise PlanError(f"{self.instance.case_id}: the plan is stuck (a step refers to one that never runs)")
            self.pending = segment
            calls = [{"tool": s.tool, "arguments": self.bindings.resolve(s.args)} for s in segment]
        except PlanError as exc:
            self.problem = str(exc)
            return json.dumps({"report": {"error": self.problem}})
        return json.dumps({"calls": calls}, ensure_ascii=False)

    def _absorb(self, messages: list[Message]) -> None:
        """Register the results of the pending segment under their step aliases."""
        results = _last_results(messages)
        for position, step in enumerate(self.pending, 1):
            response = results.get(position)
            if response is None or "error" in response:
                raise PlanError(f"{self.instance.case_id}: step {step.alias!r} ({step.tool}) failed: {response}")
            self.bindings.responses[step.alias] = response
        self.pending = []


def _last_results(messages: list[Message]) -> dict[int, dict[str, Any]]:
    for message in reversed(messages):
        text = str(message.get("content") or "")
        if message.get("role") == "user" and text.startswith("Results:"):
            found: dict[int, dict[str, Any]] = {}
            for line in text.splitlines()[1:]:
                match = _RESULT_LINE.match(line)
                if match:
                    try:
                        found[int(match.group(1))] = json.loads(match.group(2))
                    except json.JSONDecodeError:
                        continue
            return found
    return {}
