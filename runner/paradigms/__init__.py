"""The paradigms by name: `get_paradigm("codeact")`.

codeact: BrainBench's CodeAct protocol (code in a sandboxed kernel, then a report);
tools: EEGAgentBench's tool calling (ten deterministic EEG tools, no code);
hybrid: codeact with the tools importable in the kernel;
brainagent: BrainBench's BrainAgent (a supervisor delegating to subagents that plan calls to
the braintools toolset, which runs in the sandboxed kernel).
A new paradigm is one module with a `Paradigm` subclass that registers a factory in
PARADIGMS; the built-in ones are registered here, imported only when built.
"""
from __future__ import annotations

from collections.abc import Callable

from extensions.registry import Registry, lazy
from runner.paradigms.base import Paradigm

PARADIGMS: Registry[Callable[[], Paradigm]] = Registry("paradigm")

PARADIGMS.register("codeact", lazy("runner.paradigms.codeact", "CodeAct"))
PARADIGMS.register("tools", lazy("runner.paradigms.tools", "Tools"))
PARADIGMS.register("hybrid", lazy("runner.paradigms.hybrid", "Hybrid"))
PARADIGMS.register("brainagent", lazy("runner.paradigms.brainagent.paradigm", "BrainAgent"))


def get_paradigm(name: str) -> Paradigm:
    """Build the paradigm registered as `name`; UnknownName lists the known ones."""
    return PARADIGMS.get(name)()
