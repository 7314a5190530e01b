"""The hybrid paradigm: CodeAct with the eegtools package importable in the kernel.

The package directory is mounted read-only into the sandbox (SandboxSpec.libraries) and the
system prompt lists the tools; everything else is the CodeAct loop unchanged.
"""
from __future__ import annotations

from pathlib import Path

import eegtools
from runner.paradigms import prompts
from runner.paradigms.codeact import CodeActLoop
from runner.paradigms.loop import InstanceOutcome

LIBRARIES: tuple[Path, ...] = (Path(eegtools.__file__).resolve().parent,)


def run_hybrid(instance, session, sandbox, controls, **hooks) -> InstanceOutcome:
    return CodeActLoop(instance, session, sandbox, controls, system_prompt=prompts.hybrid_system_prompt(), **hooks).run()
