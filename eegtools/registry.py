"""The tool registry: each tool's JSON schema (for native function calling and prompts),
argument validation against it, and `call_tool`, which never raises for a bad request.

The schemas are generated (eegtools.schema) from each tool's signature and numpydoc
docstring. Two parameters are the harness's, not the tool's: `record` is a file path or
Recording in Python but a record id for the model (`RECORD_SCHEMA`, never required: a task
with one record may omit it), and `budget_tokens` is set by the harness (`HARNESS_ONLY`, not
in the schema).
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eegtools import tools as T
from eegtools.budget import DEFAULT_BUDGET_TOKENS
from eegtools.errors import ToolError
from eegtools.schema import JsonSchema, description, parameters_schema, sha256_of

RECORD_SCHEMA: JsonSchema = {
    "type": "string",
    "description": "Record id as given in the task (may be omitted when the task has one record).",
}
HARNESS_ONLY: tuple[str, ...] = ("budget_tokens",)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its function, and the description and parameters schema the model sees."""

    name: str
    func: Callable[..., dict[str, Any]]
    description: str
    parameters: JsonSchema

    @classmethod
    def from_function(cls, func: Callable[..., dict[str, Any]]) -> ToolSpec:
        """The spec generated from `func`'s signature and docstring."""
        parameters = parameters_schema(func, replace={"record": RECORD_SCHEMA}, exclude=HARNESS_ONLY)
        return cls(func.__name__, func, description(func), parameters)

    def schema(self) -> JsonSchema:
        """OpenAI `tools=` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in map(ToolSpec.from_function, (
        T.get_recording_info,
        T.get_channel_list,
        T.compute_noise_metrics,
        T.compute_power_spectrum,
        T.compute_band_power,
        T.compute_time_features,
        T.compute_windowed_features,
        T.detect_transients,
        T.compute_asymmetry,
        T.compute_channel_correlation,
    ))
}

_TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def validate(schema: Mapping[str, Any], value: object, path: str) -> None:
    """Check `value` against the subset of JSON Schema the registry uses; ToolError(bad_argument)."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[t](value) for t in names):
            raise ToolError("bad_argument", f"{path}: expected {' or '.join(names)}, got {type(value).__name__} {value!r}"[:300], argument=path)
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError("unsupported", f"{path}: {value!r} is not one of {schema['enum']}", argument=path)
    if "minimum" in schema and isinstance(value, (int, float)) and not isinstance(value, bool) and value < schema["minimum"]:
        raise ToolError("bad_argument", f"{path}: must be >= {schema['minimum']}, got {value!r}", argument=path)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(schema["items"], item, f"{path}[{i}]")
    if isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for key, item in value.items():
            validate(schema["additionalProperties"], item, f"{path}.{key}")
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        for key in schema.get("required", []):
            if key not in value:
                raise ToolError("bad_argument", f"{key}: required argument missing", argument=key)
        for key, item in value.items():
            if key not in props:
                if schema.get("additionalProperties", True) is False:
                    raise ToolError("bad_argument", f"{key}: unknown argument; accepted: {', '.join(props)}", argument=key)
                continue
            if item is None:
                continue  # null means "use the default"
            validate(props[key], item, key)


def call_tool(
    name: str,
    arguments: object,
    resolve_record: Callable[[str | None], T.RecordLike],
    *,
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> dict[str, Any]:
    """Run one tool request. `resolve_record(record_id or None)` turns the model's record id
    into a path or Recording (raising ToolError for an unknown id). Returns the result, or
    the standardized {"error": {...}} response; never raises for a bad request."""
    try:
        spec = TOOLS.get(name)
        if spec is None:
            raise ToolError("unsupported", f"tool {name!r} does not exist; tools: {', '.join(TOOLS)}", argument="tool")
        if not isinstance(arguments, dict):
            raise ToolError("bad_argument", f"arguments: expected a JSON object, got {type(arguments).__name__}", argument="arguments")
        validate(spec.parameters, arguments, "arguments")
        kwargs = {k: v for k, v in arguments.items() if v is not None}
        record = resolve_record(kwargs.pop("record", None))
        return spec.func(record, budget_tokens=budget_tokens, **kwargs)
    except ToolError as exc:
        return exc.to_dict()


def schemas() -> list[JsonSchema]:
    """Every tool's OpenAI `tools=` entry, in registry order (a fresh copy on each call)."""
    return [copy.deepcopy(spec.schema()) for spec in TOOLS.values()]


def schemas_sha256() -> str:
    """Hex sha256 identifying what the model is told about the tools.

    The hash of `schemas()` as canonical JSON (sorted keys, no whitespace, UTF-8 text; see
    eegtools.schema.canonical_json): any change to a tool's name, description, parameter,
    type, enum, bound or default changes it, while dict order does not. Recorded in run.json
    so that runs are compared only when their models saw the same tools.
    """
    return sha256_of(schemas())
