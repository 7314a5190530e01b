"""The hybrid paradigm: CodeAct with the eegtools package importable in the kernel.

The package directory is mounted read-only into the sandbox (the paradigm's `libraries`) and
the system prompt lists the tools; everything else is the CodeAct loop unchanged.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import eegtools
import extensions
from runner.paradigms import prompts
from runner.paradigms.codeact import CodeAct


class Hybrid(CodeAct):
    """CodeAct plus `import eegtools` in the kernel."""

    name = "hybrid"
    # eegtools' tool registry is an extensions.Registry, so both packages are mounted
    libraries: tuple[Path, ...] = (Path(eegtools.__file__).resolve().parent, Path(extensions.__file__).resolve().parent)
    system_prompt = prompts.hybrid_system_prompt()

    def describe(self) -> dict[str, Any]:
        """The system prompt lists the tools: their schemas' hash goes into run.json."""
        return {"name": self.name, "tool_schemas_sha256": eegtools.schemas_sha256()}
