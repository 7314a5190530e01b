"""Model clients: turn a MODEL spec string into a `Model`.

Each kind lives in its own module and is imported only when asked for, so an oracle run
never imports the OpenAI SDK and the llama.cpp server child starts quickly.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from runner.models.base import Model

KINDS = (
    "oracle", "null", "script:PATH", "replay:RUN_DIR", "openai:NAME", "local", "local:GGUF_PATH",
)


@dataclass(frozen=True)
class ModelOptions:
    """Generation settings shared by the HTTP kinds; recorded in run.json.

    `max_tokens=None` means the kind's own default (2048 for openai, 512 for local, where
    generation runs on the CPU)."""

    temperature: float = 0.0
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    timeout_s: float = 120.0
    max_retries: int = 5

    def as_dict(self) -> dict:
        data = asdict(self)
        data["stop"] = list(self.stop) if self.stop is not None else None
        return data


def build_model(spec: str, *, project_root: Path, options: ModelOptions | None = None) -> Model:
    """Build the model a MODEL spec names, e.g. "oracle", "openai:gpt-4o", "local"."""
    options = options or ModelOptions()
    kind, sep, arg = spec.partition(":")
    if kind in ("oracle", "null", "local") and sep and not arg:
        raise ValueError(f"model spec {spec!r}: nothing after ':'; valid kinds: {', '.join(KINDS)}")
    if kind == "oracle" and not sep:
        from runner.models.oracle import OracleModel

        return OracleModel(project_root)
    if kind == "null" and not sep:
        from runner.models.null import NullModel

        return NullModel()
    if kind == "local":
        from runner.models.local_server import LocalModel

        return LocalModel(arg or None, project_root=project_root, options=options)
    if kind in ("script", "replay", "openai"):
        if not arg:
            raise ValueError(
                f"model spec {spec!r}: {kind} needs an argument, e.g. {_example(kind)}"
            )
        return _build_with_arg(kind, arg, options)
    raise ValueError(f"unknown model spec {spec!r}; valid kinds: {', '.join(KINDS)}")


def _build_with_arg(kind: str, arg: str, options: ModelOptions) -> Model:
    if kind == "script":
        from runner.models.scripted import ScriptedModel

        return ScriptedModel(Path(arg))
    if kind == "replay":
        from runner.models.replay import ReplayModel

        return ReplayModel(Path(arg))
    from runner.models.openai_client import OpenAIModel, endpoint_from_env

    base_url, api_key = endpoint_from_env()
    return OpenAIModel(
        arg,
        base_url,
        api_key,
        temperature=options.temperature,
        max_tokens=options.max_tokens or 2048,
        stop=list(options.stop) if options.stop else None,
        timeout_s=options.timeout_s,
        max_retries=options.max_retries,
    )


def _example(kind: str) -> str:
    examples = {
        "script": "script:replies.json",
        "replay": "replay:runs/<run_id>",
        "openai": "openai:gpt-4o",
    }
    return examples[kind]
