"""Attempt: what one instance's work produced, before scoring.

Made in this process by an InstanceRunner (runner/run/instance.py), or from a remote worker's
Bundle (runner/run/bundle.py); the scheduler scores and records it. Its own module, so that
the executors, the bundle and the instance runner share it without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from runner.core.transcript import InfraEvent
from runner.paradigms.loop import InstanceOutcome
from runner.run.records import ArtifactEntry
from validation.instance import Instance


@dataclass
class Attempt:
    """What one instance's work produced, before scoring."""

    instance: Instance
    outcome: InstanceOutcome
    artifacts: list[ArtifactEntry]
    duration_s: float
    events: list[InfraEvent] = field(default_factory=list)
    started_at: float | None = None  # Unix time
