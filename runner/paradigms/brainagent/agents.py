"""The subagents the supervisor can delegate to: each is the common toolset plus its extension.

A subagent is data (name, the subsets it serves, its toolset groups, what it is good at);
adding one is one `register` line here, and its tools come from the groups braintools
registers. The supervisor is told every subagent's name and expertise.
"""
from __future__ import annotations

from dataclasses import dataclass

from braintools import COMMON_GROUPS
from extensions.registry import Registry


@dataclass(frozen=True)
class Subagent:
    """One specialist: the tool groups it may call and the subsets it is the default for."""

    name: str
    expertise: str
    groups: tuple[str, ...]
    subsets: tuple[str, ...] = ()


SUBAGENTS: Registry[Subagent] = Registry("subagent")


def _register(agent: Subagent) -> None:
    SUBAGENTS.register(agent.name, agent)


_register(Subagent(
    "FoundationalAgent", "recording inspection, signal preparation, spectra, band power, time-domain features, "
    "channel statistics and quality checks", COMMON_GROUPS, ("Foundational Analysis",)))
_register(Subagent(
    "SleepAgent", "hypnograms, sleep staging, stage statistics and sleep metrics, transitions and awakenings, "
    "slow waves and spindles", COMMON_GROUPS + ("sleep",), ("Sleep Assessment",)))
_register(Subagent(
    "NeurocogAgent", "event-locked epochs, ERPs and difference waves, peak amplitudes and latencies, GFP, "
    "trial rejection, reaction times", COMMON_GROUPS + ("neurocog",), ("Neurocognitive Assessment",)))
_register(Subagent(
    "PhysiolAgent", "EOG and EMG channels, blinks, regression-based artefact removal, artefact windows, "
    "eye-state segments, physiological ratios", COMMON_GROUPS + ("physiol",), ("Physiological Integration",)))


def default_agent(bench_subset: str) -> Subagent:
    """The subagent serving a subset (FoundationalAgent when none claims it)."""
    for name in SUBAGENTS.names():
        agent = SUBAGENTS.get(name)
        if bench_subset in agent.subsets:
            return agent
    return SUBAGENTS.get("FoundationalAgent")


def all_agents() -> list[Subagent]:
    """Every registered subagent, in registration order."""
    return list(SUBAGENTS.items())
