"""The BrainAgent paradigm: the LLM stays in the controller, the toolset runs in the sandbox.

BrainBench's BrainAgent runs the model inside its container, which therefore needs network
access. Here only tool execution happens in the instance's network-less sandbox (braintools
mounted read-only and imported by the kernel), so both paradigms keep CodeAct's black-box
isolation.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import braintools
import eegtools
import extensions
from runner.core.settings import ControlLimits
from runner.models.base import CHARS_PER_TOKEN
from runner.paradigms.base import Episode, FirstRequest, Paradigm
from runner.paradigms.brainagent.agents import all_agents
from runner.paradigms.brainagent.kernel import KernelTools
from runner.paradigms.brainagent.loop import BrainAgentLoop, supervisor_messages
from runner.paradigms.loop import InstanceOutcome
from validation.instance import Instance

RESULT_MARGIN = 200  # characters of the output budget kept for the marker and the kernel's own text


class BrainAgent(Paradigm):
    """Supervisor + registered subagents over the braintools toolset in the kernel."""

    name = "brainagent"
    # braintools builds on the tool core in eegtools and registers its tools in an
    # extensions.Registry, so the three packages are mounted
    libraries: tuple[Path, ...] = (Path(braintools.__file__).resolve().parent, Path(eegtools.__file__).resolve().parent,
                                   Path(extensions.__file__).resolve().parent)

    def run(self, episode: Episode) -> InstanceOutcome:
        """The supervisor loop, with the toolset in the episode's sandbox."""
        if episode.sandbox is None:
            raise ValueError(f"{episode.instance.case_id}: the {self.name} paradigm needs a sandbox")
        controls = episode.controls
        max_chars = min(controls.tool_budget_tokens * 4, controls.output_budget_chars - RESULT_MARGIN)
        tools = KernelTools(episode.sandbox, max_chars, min(controls.state_summary_chars, controls.output_budget_chars - RESULT_MARGIN))
        return BrainAgentLoop(episode.instance, episode.session, tools, controls, should_stop=episode.should_stop,
                              on_turn=episode.on_turn, on_event=episode.on_event).run()

    def first_request(self, instance: Instance, controls: ControlLimits, data_root: Path) -> FirstRequest:
        """The supervisor's first call."""
        return FirstRequest(supervisor_messages(instance, controls))

    def typical_calls(self, controls: ControlLimits, reply_tokens: int) -> tuple[int, int]:
        """The supervisor's two turns around one objective of half the planning rounds, each
        round adding half the reply limit, the tool-output budget and the state summary."""
        rounds = math.ceil(controls.max_planning_rounds / 2)
        added = reply_tokens + controls.tool_budget_tokens + controls.state_summary_chars // CHARS_PER_TOKEN
        return 2 + rounds, added // 2

    def describe(self) -> dict[str, Any]:
        """The toolset's schemas and the subagent roster change what the model sees."""
        return {"name": self.name, "tool_schemas_sha256": braintools.schemas_sha256(),
                "subagents": {a.name: list(a.groups) for a in all_agents()}}
