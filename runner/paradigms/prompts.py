"""Messages the CodeAct controller sends: the system prompt, the instance message, nudges."""
from __future__ import annotations

from validation.instance import Instance

SYSTEM_PROMPT = """\
You are an EEG analysis assistant working inside a Python environment. A persistent \
Jupyter kernel keeps your variables between turns; numpy, scipy, pandas, matplotlib, mne, \
yasa and other scientific packages are installed. There is no network access and nothing \
can be installed.

Each reply must contain exactly one action:
- <execute> ... </execute> to run Python code. You will receive its output (printed text, \
results and errors) in the next message. Print what you need to see; long outputs are \
shortened.
- <solution> ... </solution> to finish with your final report. Give the requested values \
explicitly, ideally as a JSON object whose keys are the quantities asked for.

Text outside these tags is ignored and never executed. Work step by step: inspect the \
files, compute, check your results, then report. Your number of turns and your time are \
limited.
"""

ARTIFACT_RULE = (
    "Input files under /input/ are read-only. Save any file you are asked to produce under "
    "/workspace/file_check/ (or the relative path file_check/)."
)

NO_ACTION = (
    "Your reply contained no action. Reply with exactly one <execute>...</execute> block to "
    "run code, or <solution>...</solution> to give your final report."
)

FINAL_ROUND = (
    "This is your final turn. Do not run more code: reply now with your best final report "
    "inside <solution>...</solution>."
)


def instance_message(instance: Instance) -> str:
    """The user message: input paths, the instruction, extra agent_input fields, the artifact rule."""
    lines = ["Input files:"]
    lines += [f"- {path}" for path in instance.sandbox_inputs()]
    lines += ["", "Task:", instance.agent_input.instruction.strip()]
    extras = instance.agent_input.model_extra or {}
    for key in sorted(extras):
        lines += ["", f"{key}: {extras[key]}"]
    lines += ["", ARTIFACT_RULE]
    return "\n".join(lines)


def observation_message(text: str) -> str:
    """The user message carrying one execution's (already truncated) output back to the model."""
    return f"Observation:\n{text}"


# --- the tools paradigm (EEGAgentBench) and the hybrid paradigm -----------------------------


def tool_catalogue() -> str:
    """One entry per eegtools tool: name, arguments, description."""
    from eegtools import TOOLS

    lines: list[str] = []
    for spec in TOOLS.items():
        args = ", ".join(spec.parameters["properties"])
        lines.append(f"- {spec.name}({args}): {spec.description}")
    return "\n".join(lines)


def tools_system_prompt() -> str:
    """The tools paradigm's system prompt: the tool catalogue and both action formats."""
    return f"""\
You are an EEG analysis agent. You cannot run code or see raw waveforms: recordings are \
accessed only through the deterministic EEG tools below. Each turn, either call one tool \
or give your final answer.

Tools:
{tool_catalogue()}

Every tool takes `record` (the record id listed in the task; optional when there is only \
one), and most take `channels` (names; omit for all EEG channels) and `start_s`/`end_s` \
(seconds). Results are JSON; amplitudes are in µV. Invalid requests return an "error" \
object with a code (unknown_channel, out_of_range, unsupported, bad_argument, \
budget_exceeded). Results larger than the tool-output budget are refused before \
computing: narrow the time range or channels, or use longer windows.

If native function calling is available, use it. Otherwise reply with exactly one JSON \
object per turn:
{{"action": "<tool name>", "args": {{...}}}}
and finish with:
{{"action": "final_answer", "answer": <your answer>}}
The answer is what the task asks for: a label, a number, a list (e.g. intervals in \
seconds), or an object whose keys are the requested quantities. Your turns and tool \
calls are limited.
"""


TOOLS_NO_ACTION = (
    'Your reply contained no valid action. Reply with one JSON object: {"action": "<tool name>", '
    '"args": {...}} to call a tool, or {"action": "final_answer", "answer": ...} to finish.'
)

TOOLS_FINAL_ROUND = (
    'This is your final turn. Do not call more tools: reply now with '
    '{"action": "final_answer", "answer": ...} holding your best answer.'
)


def tool_ceiling_message(limit: int) -> str:
    """The nudge once the `limit` tool calls are used up: no more tools run, the model must answer."""
    return (
        f"The tool-call ceiling ({limit} calls) is reached; no more tools will run. Reply now with "
        '{"action": "final_answer", "answer": ...}.'
    )


def tools_instance_message(instance: Instance, records: list[str]) -> str:
    """The task for the tools paradigm: the records with their metadata, the instruction."""
    lines = ["Records (pass the id as `record`):"]
    lines += [f"- {line}" for line in records]
    lines += ["", "Task:", instance.agent_input.instruction.strip()]
    extras = instance.agent_input.model_extra or {}
    for key in sorted(extras):
        lines += ["", f"{key}: {extras[key]}"]
    lines += ["", 'Finish with {"action": "final_answer", "answer": ...}.']
    return "\n".join(lines)


def hybrid_system_prompt() -> str:
    """CodeAct plus the eegtools module, importable in the kernel."""
    return SYSTEM_PROMPT + f"""
The module `eegtools` is importable in the kernel (`import eegtools`): ten deterministic EEG \
tools that take a file path (e.g. a path under /input/) and keyword arguments and return \
JSON-ready dicts (amplitudes in µV). Use them, your own code, or both:
{tool_catalogue()}
`help(eegtools.<tool>)` shows the details. Outputs over 8,000 tokens are refused unless \
you pass budget_tokens=None.
"""
