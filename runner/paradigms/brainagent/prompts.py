"""What the BrainAgent controller tells the supervisor and the subagents.

Every system prompt opens with a role line (`ROLE_PREFIX`), so that a transcript, and a
scripted or oracle model, can tell which role a conversation belongs to.
"""
from __future__ import annotations

import json
from typing import Any

from braintools import specs
from runner.paradigms.brainagent.agents import Subagent
from validation.instance import Instance

ROLE_PREFIX = "BrainAgent role: "
SUPERVISOR = "supervisor"


def supervisor_system(agents: list[Subagent], max_objectives: int) -> str:
    """The supervisor's system prompt: its job, the subagents, both reply formats."""
    roster = "\n".join(f"- {a.name}: {a.expertise}" for a in agents)
    return f"""{ROLE_PREFIX}{SUPERVISOR}
You supervise a team of EEG analysis agents. You never see the data yourself: your \
subagents work on the recordings through a deterministic EEG toolset in a sandbox and \
report back to you.

Subagents:
{roster}

First, decompose the task into at most {max_objectives} analytical objectives and queue \
them, replying with one JSON object:
{{"objectives": [{{"agent": "<subagent name>", "goal": "<what to find out, with every detail \
of the task it needs: files, channels, windows, methods, rounding>"}}]}}
Each subagent works only from the goal you give it. When the reports are in, reply with \
the final report:
{{"final_report": {{"<quantity asked for>": <value>, ...}}}}
giving every requested value explicitly (a text report is also accepted). You may instead \
queue more objectives with another {{"objectives": [...]}} reply while the limit allows.
"""


def subagent_system(agent: Subagent, max_rounds: int) -> str:
    """A subagent's system prompt: its toolset and the planning protocol."""
    catalogue = "\n".join(f"- {s.name}({', '.join(s.parameters['properties'])}): {_first_line(s.description)}"
                          for s in specs(agent.groups))
    return f"""{ROLE_PREFIX}subagent {agent.name}
You are {agent.name}, an EEG analysis agent ({agent.expertise}). You cannot run code: you \
work through the tools below, which run in a sandbox and keep every object they make in \
shared_state under an id (rec1, sig3, ep2, psd1, evt1, lab1, res7, art1). Tools take and \
return ids, never whole signals; results of analyses come back as JSON values.

Tools:
{catalogue}

Each planning round you are shown the current shared_state. Reply with the longest \
segment of your plan that you can run now, as one JSON object:
{{"calls": [{{"tool": "<name>", "arguments": {{...}}}}, ...]}}
The calls run in order; a call cannot use an id made by another call of the same segment, \
since you learn ids only from the results. With native function calling, call the tools \
directly instead. When your evidence suffices, reply with your analytical report:
{{"report": {{"<quantity>": <value>, ...}}, "notes": "<method and caveats>"}}
Input files are read-only under /input/; files you write go under /workspace/file_check/. \
You have at most {max_rounds} planning rounds; errors come back as {{"error": {{"code", \
"argument", "message"}}}}.
"""


def task_message(instance: Instance) -> str:
    """The supervisor's first user message: the inputs and the instruction, as CodeAct gives them."""
    from runner.paradigms.prompts import instance_message

    return instance_message(instance)


def delegation_message(goal: str, instance: Instance) -> str:
    """A subagent's first user message: its objective and the task's input files."""
    files = "\n".join(f"- {p}" for p in instance.sandbox_inputs())
    return f"Objective from the supervisor:\n{goal}\n\nInput files:\n{files}"


def round_message(index: int, summary: str, final: bool) -> str:
    """The state view opening a planning round (the last one asks for the report)."""
    head = f"Planning round {index + 1}. Current shared_state:\n{summary}"
    if final:
        return head + "\n\nThis is your last planning round: no more tools will run. Reply now with your report."
    return head + "\n\nReply with the next segment of calls, or with your report."


def results_message(lines: list[str], restarted: bool) -> str:
    """The results of one segment, one line per call (text protocol)."""
    note = ("\nThe sandbox kernel was restarted: shared_state is now empty and every earlier id is gone."
            if restarted else "")
    return "Results:\n" + "\n".join(lines) + note


def result_line(position: int, tool: str, text: str) -> str:
    """One call's result as the text protocol shows it."""
    return f"[{position}] {tool}: {text}"


def synthesis_message(reports: list[tuple[str, str, str | None]], final: bool) -> str:
    """The supervisor's message once the queue is empty: every subagent's report."""
    lines = ["The subagents have reported."]
    for agent, goal, report in reports:
        lines += ["", f"{agent} (objective: {goal[:300]}):", report if report is not None else "(no report: it ran out of rounds)"]
    lines += ["", "Reply with the final report: {\"final_report\": {...}}."
              + (" This is your last turn." if final else " Or queue more objectives.")]
    return "\n".join(lines)


NO_ACTION_SUPERVISOR = (
    'Your reply held no valid JSON action. Reply with {"objectives": [{"agent": ..., "goal": ...}]} '
    'or {"final_report": {...}}.'
)
NO_ACTION_SUBAGENT = (
    'Your reply held no valid JSON action. Reply with {"calls": [{"tool": ..., "arguments": {...}}]} '
    'or {"report": {...}}.'
)


def tool_ceiling_message(limit: int) -> str:
    """Told once when the instance's tool calls are used up."""
    return f"The tool-call ceiling of this task ({limit} calls) is reached; no more tools will run. Reply with your report."


def describe_request(tool: str, arguments: Any) -> str:
    """A call as shown in notes: tool(arguments JSON), shortened."""
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return f"{tool}({text if len(text) <= 200 else text[:197] + '...'})"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
