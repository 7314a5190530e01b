"""The paradigms by name: `PARADIGMS.get("codeact")`.

codeact: BrainBench's CodeAct protocol (code in a sandboxed kernel, then a report);
tools: EEGAgentBench's tool calling (ten deterministic EEG tools, no code);
hybrid: codeact with the tools importable in the kernel;
brainagent: BrainBench's BrainAgent (a supervisor delegating to subagents that plan calls to
the braintools toolset, which runs in the sandboxed kernel).
A new paradigm is one module with a `Paradigm` subclass and one `register` line here.
"""
from __future__ import annotations

from runner.core.registry import Registry
from runner.paradigms.base import Paradigm

PARADIGMS: Registry[Paradigm] = Registry("paradigm")


def _codeact() -> Paradigm:
    from runner.paradigms.codeact import CodeAct

    return CodeAct()


def _tools() -> Paradigm:
    from runner.paradigms.tools import Tools

    return Tools()


def _hybrid() -> Paradigm:
    from runner.paradigms.hybrid import Hybrid

    return Hybrid()


def _brainagent() -> Paradigm:
    from runner.paradigms.brainagent.paradigm import BrainAgent

    return BrainAgent()


PARADIGMS.register("codeact", _codeact)
PARADIGMS.register("tools", _tools)
PARADIGMS.register("hybrid", _hybrid)
PARADIGMS.register("brainagent", _brainagent)
