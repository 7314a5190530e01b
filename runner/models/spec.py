"""Model specs: the strings MODEL=, --parser-model, --judge and --vlm-judge take.

`ModelSpec.parse("openai:gpt-4o")` -> kind "openai", argument "gpt-4o". Only the first colon
splits, so "openai:org/model:q4" names the model "org/model:q4". Each kind declares whether
it takes an argument; the kinds are registered once here and both the evaluated model and
the scoring endpoints parse with this one function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from validation.errors import UserError

Argument = Literal["none", "optional", "required"]


class BadModelSpec(UserError, ValueError):
    """A spec string that names no known kind, or misses or wrongly has an argument."""


@dataclass(frozen=True)
class ModelKind:
    """How one kind is written: its name, whether it takes an argument, an example."""

    name: str
    argument: Argument
    example: str
    evaluated: bool = True  # usable as the evaluated model
    scoring: bool = False  # usable as a parser or judge endpoint

    def usage(self) -> str:
        """The kind as the help text writes it (e.g. "script:PATH", "local[:GGUF]")."""
        return self.example


KINDS: dict[str, ModelKind] = {k.name: k for k in (
    ModelKind("oracle", "none", "oracle"),
    ModelKind("null", "none", "null"),
    ModelKind("constant", "none", "constant"),
    ModelKind("script", "required", "script:PATH", scoring=True),
    ModelKind("replay", "required", "replay:RUN_DIR"),
    ModelKind("openai", "required", "openai:NAME", scoring=True),
    ModelKind("local", "optional", "local[:GGUF]", scoring=True),
)}


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: a kind and its argument (None when it takes none or none was given)."""

    kind: str
    argument: str | None = None

    def __str__(self) -> str:
        return self.kind if self.argument is None else f"{self.kind}:{self.argument}"

    @classmethod
    def parse(cls, text: str, *, role: Literal["evaluated", "scoring"] = "evaluated") -> ModelSpec:
        """Read a spec for the evaluated model or for a scoring endpoint; BadModelSpec names
        the spec and the kinds valid for that role. A scoring endpoint may be given as a bare
        model name, which means openai:NAME."""
        allowed = {name: k for name, k in KINDS.items() if (k.evaluated if role == "evaluated" else k.scoring)}
        name, sep, argument = text.partition(":")
        kind = allowed.get(name)
        if kind is None and role == "scoring" and text:
            return cls("openai", text)
        valid = "valid kinds: " + ", ".join(k.usage() for k in allowed.values())
        if kind is None:
            raise BadModelSpec(f"unknown model spec {text!r}; {valid}")
        if kind.argument == "none" and sep:
            raise BadModelSpec(f"model spec {text!r}: {name} takes nothing after ':'; {valid}")
        if kind.argument == "required" and not argument:
            raise BadModelSpec(f"model spec {text!r}: {name} needs an argument, e.g. {kind.example}; {valid}")
        if kind.argument == "optional" and sep and not argument:
            raise BadModelSpec(f"model spec {text!r}: nothing after ':' (write {name} or {kind.example}); {valid}")
        return cls(name, argument or None)
