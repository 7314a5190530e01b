"""What an adapter returns: the cases of one task family, ready for staging."""
from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from validation.errors import UserError

_T = TypeVar("_T")


class AdapterError(UserError, ValueError):
    """The local copy does not have the layout the adapter reads; the message names the path."""


@dataclass
class LocalCase:
    """One instance. `files` are sources in the user's copy, staged under opaque names
    (`<name><suffix>`) so neither path nor name tells the label; `content` replaces a
    source by derived bytes (a trimmed EDF). `params` hold the answer, the instruction
    placeholders and whatever the unit needs (duration_s, subject, n_epochs)."""

    name: str
    files: list[tuple[Path, str]]  # (source path, staged suffix such as ".txt")
    params: dict[str, Any]
    content: dict[str, Callable[[], bytes]] = field(default_factory=dict)  # suffix -> bytes maker


@dataclass
class DatasetTask:
    """One task family built from a local copy: the task spec's fields and its cases."""

    dataset: str
    task_id: str
    family: str
    difficulty: str
    difficulty_reason: str
    original_dataset: str
    instruction: str
    metric_params: dict[str, Any]
    cases: list[LocalCase]


def opaque_names(keys: list[str], prefix: str, seed: str) -> dict[str, str]:
    """key -> opaque name (prefix + running number) in an order shuffled by `seed`, so the
    number says nothing about the class or the source file."""
    order = sorted(keys)
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    rng.shuffle(order)
    width = max(3, len(str(len(order))))
    return {key: f"{prefix}{index:0{width}d}" for index, key in enumerate(order, start=1)}


def pick(items: list[_T], count: int, seed: str) -> list[_T]:
    """A deterministic sample of `count` items (all of them when fewer), kept in input order."""
    if count >= len(items):
        return list(items)
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    chosen = set(rng.sample(range(len(items)), count))
    return [item for index, item in enumerate(items) if index in chosen]
