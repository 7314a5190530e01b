"""Replies from a file: the same list of assistant turns for every instance.

Used by tests and adversarial checks (hostile code sent through the real loop). The file is
JSON: {"replies": ["<execute>...</execute>", "<solution>...</solution>"]}. The i-th call of
an instance's session gets the i-th string; once the list is used up every reply is "", which
the controller treats as a reply without an action.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from runner.models.base import Completion, Message, Model, ModelSession
from runner.transcript import Usage
from validation.errors import UserError
from validation.instance import Instance


class RepliesFileError(UserError, ValueError):
    """A replies file that cannot be read or is not {"replies": ["...", ...]}."""


class ScriptedModel(Model):
    """Replies from a JSON file, the same list for every instance (tests, hostile code checks)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.replies = load_replies(self.path)
        self.name = f"script:{self.path}"

    def session(self, instance: Instance) -> ModelSession:
        """A session that hands out the file's replies from the first one on."""
        return ListSession(self.replies)

    def describe(self) -> dict[str, Any]:
        """Name, path, the file's sha256 (empty file's when it is gone) and the reply count."""
        raw = self.path.read_bytes() if self.path.is_file() else b""
        return {
            "name": self.name,
            "path": str(self.path),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "replies": len(self.replies),
        }


class ListSession(ModelSession):
    """Hands out a fixed list of replies in order, then "" forever."""

    def __init__(self, replies: list[str]) -> None:
        self._replies = replies
        self.calls = 0  # how many replies were handed out

    def complete(self, messages: list[Message]) -> Completion:
        """The next reply, "" once the list is used up."""
        index = self.calls
        self.calls += 1
        text = self._replies[index] if index < len(self._replies) else ""
        return Completion(text=text, usage=Usage(), latency_s=0.0)


def load_replies(path: Path) -> list[str]:
    """Read and validate a replies file; errors name the file and the bad field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RepliesFileError(f"{path}: cannot read scripted replies file: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise RepliesFileError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or "replies" not in data:
        raise RepliesFileError(f'{path}: missing field "replies" (expected {{"replies": ["...", ...]}})')
    replies = data["replies"]
    if not isinstance(replies, list):
        raise RepliesFileError(
            f'{path}: field "replies" must be a list of strings, got {type(replies).__name__}'
        )
    for i, item in enumerate(replies):
        if not isinstance(item, str):
            raise RepliesFileError(
                f'{path}: field "replies[{i}]" must be a string, got {type(item).__name__}'
            )
    return replies
