"""What changed in a run's instance set between the run's start and a resume.

A run records the hash of every instance it was started on (run.json `instance_hashes`); a run
made before that was recorded is compared through the instance.json each started entry saved.
Resuming over a changed set would score a mixture of old and new instances, so the store
refuses it, unless the user asks to rerun exactly the changed cases (--rerun-changed).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from validation.instance import Instance


def instance_hash(instance: Instance) -> str:
    """sha256 of the instance as the run scores it (the same text instance_set_hash reads)."""
    return hashlib.sha256(instance.model_dump_json(exclude_none=True).encode()).hexdigest()


@dataclass(frozen=True)
class Changes:
    """Case ids whose instance differs, that are new, and that are gone."""

    changed: list[str]
    added: list[str]
    removed: list[str]

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def describe(self, limit: int = 8) -> str:
        """One line: counts and the first `limit` case ids of each kind of change."""
        parts = []
        for name, cases in (("changed", self.changed), ("added", self.added), ("removed", self.removed)):
            if cases:
                more = f" and {len(cases) - limit} more" if len(cases) > limit else ""
                parts.append(f"{len(cases)} {name} ({', '.join(cases[:limit])}{more})")
        return "; ".join(parts)


def compare(recorded: dict[str, str], current: dict[str, str]) -> Changes:
    """The differences between the recorded and the current case -> hash maps."""
    return Changes(
        changed=sorted(c for c in recorded.keys() & current.keys() if recorded[c] != current[c]),
        added=sorted(current.keys() - recorded.keys()),
        removed=sorted(recorded.keys() - current.keys()),
    )
