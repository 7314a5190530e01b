"""The models that score: parser, text judge and image (VLM) judge endpoints.

A spec names one: `openai:NAME` (OpenAI-compatible; base URL and key from
EEGBENCH_<ROLE>_BASE_URL / _API_KEY, else the evaluated model's EEGBENCH_BASE_URL /
EEGBENCH_API_KEY), `local[:GGUF]` (a llama.cpp server started for the run), `script:PATH`
(replies from a JSON file {"replies": [...]}, taken in turn: tests and audits), or `none`.
With no spec, EEGBENCH_<ROLE>_MODEL is read; the parser alone then falls back to the
evaluated model's own endpoint (BrainBench's default), judges to none.

Every reply is cached on disk by (model, request), with the token counts the endpoint
reported for it: a re-score asks nothing twice, reproduces the verdicts it had and still
knows what each reply cost.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from runner.core.fileio import write_atomic
from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.models.base import Model
from runner.models.scripted import load_replies
from runner.models.spec import ModelSpec
from validation.context import ChatReply, as_reply
from validation.errors import UserError

if TYPE_CHECKING:  # the SDK is imported only when an openai endpoint is built
    from runner.models.openai_client import OpenAIModel

ROLES = ("parser", "judge", "vlm")
JSON_MODE = {"type": "json_object"}


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


def resolve(role: str, spec: str | None, *, evaluated: str | None, env: Environment,
            cache_dir: Path | None) -> Endpoint | None:
    """The endpoint a role's spec names, or None (rules only / no judge)."""
    spec = spec or env.get(f"EEGBENCH_{role.upper()}_MODEL")
    if spec is None and role == "parser" and evaluated and ModelSpec.parse(evaluated).kind in ("openai", "local"):
        spec = evaluated
    if spec is None or spec == "none":
        return None
    parsed = ModelSpec.parse(spec, role="scoring")
    if parsed.kind == "script":
        return _scripted(role, str(parsed.argument), cache_dir)
    if parsed.kind == "local":
        return _local(role, parsed.argument, env, cache_dir)
    return _openai(role, str(parsed.argument), env, cache_dir)


def _openai(role: str, name: str, env: Environment, cache_dir: Path | None) -> Endpoint:
    from runner.models.credentials import API_KEY_VARS, first_key, key_sources
    from runner.models.openai_client import OpenAIModel, check_base_url, public_url

    prefix = f"EEGBENCH_{role.upper()}_"
    variables = (prefix + "BASE_URL", "EEGBENCH_BASE_URL", "OPENAI_BASE_URL")
    variable = next((v for v in variables if env.get(v)), None)
    base_url = check_base_url(variable, env.get(variable) or "") if variable else None
    api_key = first_key(env.variables, (prefix + "API_KEY", *API_KEY_VARS))
    if not base_url or not api_key:
        raise EndpointError(f"{role} model {name!r}: set {prefix}BASE_URL and {key_sources((prefix + 'API_KEY',))} "
                            "(or the evaluated model's EEGBENCH_BASE_URL and EEGBENCH_API_KEY)")
    client = OpenAIModel(name, base_url, api_key, temperature=0.0, max_tokens=1024)
    return Endpoint(role, f"openai:{name}", _sender(client), {"base_url": public_url(base_url)},
                    cache_dir=cache_dir, owner=client)


def _local(role: str, gguf: str | None, env: Environment, cache_dir: Path | None) -> Endpoint:
    from runner.models.local_server import LocalModel

    model = LocalModel(gguf, models_dir=env.paths.data_root / "models", settings=ModelSettings(max_tokens=256))
    return Endpoint(role, model.name, _sender(model.client), {"server": "xllamacpp (started for scoring)"},
                    cache_dir=cache_dir, owner=model)


def _sender(client: OpenAIModel) -> Callable[[list[dict[str, Any]]], ChatReply]:
    def send(messages: list[dict[str, Any]]) -> ChatReply:
        completion = client.complete(messages, response_format=JSON_MODE)
        return ChatReply(text=completion.text, prompt_tokens=completion.usage.prompt_tokens,
                         completion_tokens=completion.usage.completion_tokens)
    return send


def _scripted(role: str, path: str, cache_dir: Path | None) -> Endpoint:
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

    # No cache: a scripted endpoint is its own record.
    return Endpoint(role, f"script:{Path(path).name}", send, {"path": str(path)}, cache_dir=None)
