"""Model kinds: build the `Model` a MODEL spec names (runner/models/spec.py).

Each kind lives in its own module and is imported only when asked for, so an oracle run
never imports the OpenAI SDK and the llama.cpp server child starts quickly.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.models.base import Model
from runner.models.spec import ModelSpec

OPENAI_MAX_TOKENS = 2048  # the openai kind's default when --max-tokens is not given


def build_model(spec: str | ModelSpec, *, env: Environment, settings: ModelSettings | None = None) -> Model:
    """Build the model a MODEL spec names, e.g. "oracle", "openai:gpt-4o", "local"."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    return _BUILDERS[parsed.kind](parsed.argument, env, settings or ModelSettings())


def _oracle(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.oracle import OracleModel

    return OracleModel(env.paths.project_root)


def _null(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.null import NullModel

    return NullModel()


def _constant(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.benchmark import catalog
    from runner.models.constant import ConstantModel

    return ConstantModel(catalog.load_all(env.paths.instances_dir, env.paths.local_instances))


def _script(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.scripted import ScriptedModel

    return ScriptedModel(Path(str(argument)))


def _replay(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.replay import ReplayModel

    return ReplayModel(Path(str(argument)))


def _openai(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.openai_client import OpenAIModel, endpoint_from_env, settings_options

    base_url, api_key = endpoint_from_env(env.variables)
    return OpenAIModel(str(argument), base_url, api_key, max_tokens=settings.max_tokens or OPENAI_MAX_TOKENS,
                       **settings_options(settings))


def _local(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    from runner.models.local_server import LocalModel

    return LocalModel(argument, models_dir=env.paths.data_root / "models", settings=settings)


_BUILDERS: dict[str, Callable[[str | None, Environment, ModelSettings], Model]] = {
    "oracle": _oracle, "null": _null, "constant": _constant, "script": _script, "replay": _replay, "openai": _openai, "local": _local,
}
