"""Replies from a file: the same list of assistant turns for every instance.

Used by tests and adversarial checks (hostile code sent through the real loop). The file is
JSON: {"replies": ["<execute>...</execute>", "<solution>...</solution>"]}. The i-th call of
an instance's session gets the i-th string; once the list is used up every reply is "", which
the controller treats as a reply without an action.

Repeated runs (`eval --epochs N`): an optional "epochs" object gives some epochs their own
list, keyed by the epoch number, e.g. {"replies": [A], "epochs": {"2": [B], "3": [C]}}: epoch
2 of every instance gets B, epoch 3 gets C, every other epoch `replies`. So a script can stand
in for a sampling model deterministically (the epoch comes with the instance the session is for).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import threading
from pathlib import Path
from typing import Any

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.core.transcript import Usage
from runner.models.base import Completion, Message, Model, ModelSession
from runner.models.endpoint import Endpoint, EndpointError
from runner.run.records import epoch_of
from validation.errors import UserError
from validation.instance import Instance


class RepliesFileError(UserError, ValueError):
    """A replies file that cannot be read or is not {"replies": ["...", ...]}."""


class ScriptedModel(Model):
    """Replies from a JSON file, the same list for every instance (tests, hostile code checks),
    optionally another list per epoch."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        data = read_script(self.path)
        self.replies = string_list(self.path, data["replies"], "replies")
        self.epochs = epochs_field(self.path, data)
        self.name = f"script:{self.path}"

    def session(self, instance: Instance) -> ModelSession:
        """A session that hands out the replies of the instance's epoch from the first one on."""
        return ListSession(self.epochs.get(epoch_of(instance), self.replies))

    def describe(self) -> dict[str, Any]:
        """Name, path, the file's sha256 (empty file's when it is gone), the reply count and
        the epochs with replies of their own."""
        raw = self.path.read_bytes() if self.path.is_file() else b""
        described: dict[str, Any] = {
            "name": self.name,
            "path": str(self.path),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "replies": len(self.replies),
        }
        if self.epochs:
            described["epochs"] = {str(k): len(v) for k, v in sorted(self.epochs.items())}
        return described


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
    return string_list(path, read_script(path)["replies"], "replies")


def read_script(path: Path) -> dict[str, Any]:
    """The file as a JSON object with a "replies" field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RepliesFileError(f"{path}: cannot read scripted replies file: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise RepliesFileError(f"{path}: not UTF-8 text (byte {exc.start}); expected JSON {{\"replies\": [...]}}") from None
    except json.JSONDecodeError as exc:
        raise RepliesFileError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or "replies" not in data:
        raise RepliesFileError(f'{path}: missing field "replies" (expected {{"replies": ["...", ...]}})')
    return data


def string_list(path: Path, replies: Any, field: str) -> list[str]:
    """A field's value as a list of strings; errors name the file and the field."""
    if not isinstance(replies, list):
        raise RepliesFileError(
            f'{path}: field "{field}" must be a list of strings, got {type(replies).__name__}'
        )
    for i, item in enumerate(replies):
        if not isinstance(item, str):
            raise RepliesFileError(
                f'{path}: field "{field}[{i}]" must be a string, got {type(item).__name__}'
            )
    return replies


def epochs_field(path: Path, data: dict[str, Any]) -> dict[int, list[str]]:
    """The optional "epochs" object: epoch number ("2") -> that epoch's replies."""
    epochs = data.get("epochs", {})
    if not isinstance(epochs, dict):
        raise RepliesFileError(
            f'{path}: field "epochs" must be an object {{"2": ["...", ...]}}, got {type(epochs).__name__}'
        )
    parsed: dict[int, list[str]] = {}
    for key, replies in epochs.items():
        if not (key.isascii() and key.isdigit() and int(key) >= 1):
            raise RepliesFileError(f'{path}: field "epochs" has key {key!r}; keys are epoch numbers ("1", "2", ...)')
        parsed[int(key)] = string_list(path, replies, f"epochs.{key}")
    return parsed


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=script:PATH: replies from a JSON file."""
    return ScriptedModel(Path(str(argument)))


def endpoint(role: str, argument: str | None, env: Environment, cache_dir: Path | None) -> Endpoint:
    """A parser or judge answering from a replies file in turn, every role cycling its list.
    Not cached: the file is its own record."""
    path = str(argument)
    try:
        replies = load_replies(Path(path))
    except ValueError as exc:
        raise EndpointError(f"{role} script:{path}: {exc}") from None
    if not replies:
        raise EndpointError(f"{role} script:{path}: 'replies' must be a non-empty list of strings")
    turn = itertools.cycle(replies)
    lock = threading.Lock()

    def send(messages: list[dict[str, Any]]) -> str:
        with lock:
            return next(turn)

    return Endpoint(role, f"script:{Path(path).name}", send, {"path": path}, cache_dir=None)
