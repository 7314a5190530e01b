"""`Endpoint`: a model that scores (a parser, a text judge, an image judge) behind one chat
function, with an on-disk reply cache.

Each reply is cached by (model, request) with the token counts the endpoint reported for it,
so a re-score asks nothing twice, reproduces the verdicts it had and still knows what each
reply cost. Model kinds that can score build one (their `endpoint` in runner/models/kinds.py);
runner/scoring/endpoints.py picks which for each role.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from runner.core.fileio import write_atomic
from runner.models.base import Model
from validation.context import ChatReply, as_reply
from validation.errors import UserError


class EndpointError(UserError, ValueError):
    """A scoring endpoint spec or its environment is unusable; names the role and variable."""


@dataclass
class Endpoint:
    """A scoring model behind one chat function, with a reply cache and its audit settings."""

    role: str
    model: str  # what the cache and the audit record call it
    send: Callable[[list[dict[str, Any]]], str | ChatReply]  # a plain str reports no usage
    settings: dict[str, Any] = field(default_factory=dict)  # for run.json; never a key
    cache_dir: Path | None = None
    owner: Model | None = None  # a local server this endpoint started

    def ask(self, messages: list[dict[str, Any]]) -> ChatReply:
        """The reply to these messages and its token counts: from the cache when asked
        before (marked cached), else from the model."""
        path = self._cache_path(messages)
        if path is not None and path.is_file():
            return _cached_reply(json.loads(path.read_text()))
        reply = as_reply(self.send(messages))
        if path is not None:
            write_atomic(path, json.dumps({"model": self.model, "reply": reply.text,
                                           "prompt_tokens": reply.prompt_tokens,
                                           "completion_tokens": reply.completion_tokens}) + "\n")
        return reply

    def chat(self, messages: list[dict[str, Any]]) -> str:
        """The reply text alone (callers that need no usage)."""
        return self.ask(messages).text

    def describe(self) -> dict[str, Any]:
        """What run.json and score.json record about the endpoint (no key)."""
        return {"role": self.role, "model": self.model, **self.settings}

    def close(self) -> None:
        """Stop the server or client this endpoint started."""
        if self.owner is not None:
            self.owner.close()

    def _cache_path(self, messages: list[dict[str, Any]]) -> Path | None:
        if self.cache_dir is None:
            return None
        key = hashlib.sha256(json.dumps([self.model, messages], sort_keys=True).encode()).hexdigest()
        return self.cache_dir / key[:2] / f"{key}.json"


def _cached_reply(entry: dict[str, Any]) -> ChatReply:
    """A cache entry as a reply; entries written before usage was cached report none."""
    return ChatReply(text=str(entry["reply"]), prompt_tokens=_count(entry.get("prompt_tokens")),
                     completion_tokens=_count(entry.get("completion_tokens")), cached=True)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
