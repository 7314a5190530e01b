"""Which model scores for each role: parser, text judge and image (VLM) judge.

A spec names one: `openai:NAME` (OpenAI-compatible; base URL and key from
EEGBENCH_<ROLE>_BASE_URL / _API_KEY, else the evaluated model's EEGBENCH_BASE_URL /
EEGBENCH_API_KEY), `local[:GGUF]` (a llama.cpp server started for the run), `script:PATH`
(replies from a JSON file {"replies": [...]}, taken in turn: tests and audits), or `none`; a
bare name means openai:NAME. Any model kind with an endpoint builder may score
(runner/models/kinds.py). With no spec, EEGBENCH_<ROLE>_MODEL is read; the parser alone then
falls back to the evaluated model when its kind allows (BrainBench's default), judges to none.
"""
from __future__ import annotations

from pathlib import Path

from runner.core.paths import Environment
from runner.models.endpoint import Endpoint, EndpointError
from runner.models.kinds import ModelSpec

ROLES = ("parser", "judge", "vlm")


def resolve(role: str, spec: str | None, *, evaluated: str | None, env: Environment,
            cache_dir: Path | None) -> Endpoint | None:
    """The endpoint a role's spec names, or None (rules only / no judge)."""
    spec = spec or env.get(f"EEGBENCH_{role.upper()}_MODEL")
    if spec is None and role == "parser" and evaluated and ModelSpec.parse(evaluated).model_kind.default_parser:
        spec = evaluated
    if spec is None or spec == "none":
        return None
    parsed = ModelSpec.parse(spec, role="scoring")
    build = parsed.model_kind.endpoint
    if build is None:  # parse(role="scoring") admits only kinds that have one
        raise EndpointError(f"{role} model {spec!r}: the {parsed.kind} kind cannot score")
    endpoint: Endpoint = build(role, parsed.argument, env, cache_dir)
    return endpoint
