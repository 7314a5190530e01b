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
    return f"Observation:\n{text}"
