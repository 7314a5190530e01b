"""Model kinds: the strings MODEL=, --parser-model, --judge and --vlm-judge take, and what
each builds.

`ModelSpec.parse("openai:gpt-4o")` -> kind "openai", argument "gpt-4o". Only the first colon
splits, so "openai:org/model:q4" names the model "org/model:q4". A kind is one `ModelKind` in
MODEL_KINDS: how it is written, its builder and, when it can parse or judge, its scoring
endpoint's builder. The built-in kinds' builders live in their own modules and are imported
only when used, so an oracle run never imports the OpenAI SDK and the llama.cpp server child
starts quickly. A new kind is one module that defines its model and registers itself here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from extensions.registry import Registry, lazy
from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.models.base import Model
from validation.errors import UserError

if TYPE_CHECKING:
    from runner.models.endpoint import Endpoint

Argument = Literal["none", "optional", "required"]
# (argument, environment, settings) -> the evaluated model
Builder = Callable[[str | None, Environment, ModelSettings], Model]
# (role, argument, environment, reply cache folder) -> a scoring endpoint
EndpointBuilder = Callable[[str, str | None, Environment, Path | None], "Endpoint"]


class BadModelSpec(UserError, ValueError):
    """A spec string that names no known kind, or misses or wrongly has an argument."""


@dataclass(frozen=True)
class ModelKind:
    """One kind of model: how it is written, what it builds, how it behaves in a run."""

    name: str
    argument: Argument
    example: str  # as the help text writes it, e.g. "script:PATH", "local[:GGUF]"
    build: Builder
    endpoint: EndpointBuilder | None = None  # it can be a parser or judge
    default_parser: bool = False  # as the evaluated model, it also parses when no parser is named
    remote: bool = False  # reached at a URL with a key from the environment: each Ray node reads
    #                       the key itself, and the cluster's workers share one rate limiter


MODEL_KINDS: Registry[ModelKind] = Registry("model kind")


def register(kind: ModelKind) -> ModelKind:
    """Add a model kind; MODEL=<name>[:argument] then builds it."""
    return MODEL_KINDS.register(kind.name, kind)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: a kind and its argument (None when it takes none or none was given)."""

    kind: str
    argument: str | None = None

    def __str__(self) -> str:
        return self.kind if self.argument is None else f"{self.kind}:{self.argument}"

    @property
    def model_kind(self) -> ModelKind:
        """The registered kind this spec names (parse has checked it exists)."""
        return MODEL_KINDS.get(self.kind)

    @classmethod
    def parse(cls, text: str, *, role: Literal["evaluated", "scoring"] = "evaluated") -> ModelSpec:
        """Read a spec for the evaluated model or for a scoring endpoint; BadModelSpec names
        the spec and the kinds valid for that role. A scoring endpoint may be given as a bare
        model name, which means openai:NAME."""
        allowed = {k.name: k for k in MODEL_KINDS.items() if role == "evaluated" or k.endpoint is not None}
        name, sep, argument = text.partition(":")
        kind = allowed.get(name)
        if kind is None and role == "scoring" and text:
            return cls("openai", text)
        valid = "valid kinds: " + ", ".join(k.example for k in allowed.values())
        if kind is None:
            raise BadModelSpec(f"unknown model spec {text!r}; {valid}")
        if kind.argument == "none" and sep:
            raise BadModelSpec(f"model spec {text!r}: {name} takes nothing after ':'; {valid}")
        if kind.argument == "required" and not argument:
            raise BadModelSpec(f"model spec {text!r}: {name} needs an argument, e.g. {kind.example}; {valid}")
        if kind.argument == "optional" and sep and not argument:
            raise BadModelSpec(f"model spec {text!r}: nothing after ':' (write {name} or {kind.example}); {valid}")
        return cls(name, argument or None)


def build_model(spec: str | ModelSpec, *, env: Environment, settings: ModelSettings | None = None) -> Model:
    """Build the model a MODEL spec names, e.g. "oracle", "openai:gpt-4o", "local"."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    return parsed.model_kind.build(parsed.argument, env, settings or ModelSettings())


def _build(module: str) -> Builder:
    """A built-in kind's builder, by reference: `build` in runner/models/<module>.py."""
    return lazy(f"runner.models.{module}", "build")


def _endpoint(module: str) -> EndpointBuilder:
    """A built-in kind's scoring endpoint builder: `endpoint` in runner/models/<module>.py."""
    return lazy(f"runner.models.{module}", "endpoint")


register(ModelKind("oracle", "none", "oracle", _build("oracle")))
register(ModelKind("null", "none", "null", _build("null")))
register(ModelKind("constant", "none", "constant", _build("constant")))
register(ModelKind("script", "required", "script:PATH", _build("scripted"), _endpoint("scripted")))
register(ModelKind("replay", "required", "replay:RUN_DIR", _build("replay")))
register(ModelKind("human", "none", "human", _build("human")))
register(ModelKind("openai", "required", "openai:NAME", _build("openai_client"), _endpoint("openai_client"),
                   default_parser=True, remote=True))
register(ModelKind("local", "optional", "local[:GGUF]", _build("local_server"), _endpoint("local_server"),
                   default_parser=True))
