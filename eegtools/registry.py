"""The tool registry: each tool's JSON schema (for native function calling and prompts),
argument validation against it, and `call_tool`, which never raises for a bad request."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from eegtools import tools as T
from eegtools.budget import DEFAULT_BUDGET_TOKENS
from eegtools.errors import ToolError

_RECORD = {"type": "string", "description": "Record id as given in the task (may be omitted when the task has one record)."}
_CHANNELS = {"type": "array", "items": {"type": "string"}, "description": "Channel names; omit for all EEG channels."}
_START = {"type": "number", "minimum": 0, "description": "Start of the time range in seconds (default: recording start)."}
_END = {"type": "number", "minimum": 0, "description": "End of the time range in seconds (default: recording end)."}
_BANDS = {
    "type": "array",
    "items": {"type": ["string", "array"]},
    "description": "Band names (delta, theta, alpha, sigma, beta, gamma) or [low_hz, high_hz] pairs.",
}


def _object(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    func: Callable[..., dict]
    parameters: dict

    @property
    def description(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "").replace("\n", " ")

    def schema(self) -> dict:
        """OpenAI `tools=` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


_RANGE = {"record": _RECORD, "channels": _CHANNELS, "start_s": _START, "end_s": _END}

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("get_recording_info", T.get_recording_info, _object({"record": _RECORD})),
        ToolSpec("get_channel_list", T.get_channel_list, _object({"record": _RECORD})),
        ToolSpec("compute_noise_metrics", T.compute_noise_metrics, _object({
            **_RANGE,
            "line_freq": {"type": "number", "description": "Power-line frequency in Hz (default 50)."},
            "high_freq_hz": {"type": "number", "description": "Lower edge of the high-frequency noise band (default 40)."},
            "flat_tolerance_uv": {"type": "number", "minimum": 0, "description": "Flat-line tolerance in µV (default 0.01)."},
        })),
        ToolSpec("compute_power_spectrum", T.compute_power_spectrum, _object({
            **_RANGE,
            "fmin": {"type": "number", "minimum": 0, "description": "Lowest frequency in Hz (default 0.5)."},
            "fmax": {"type": "number", "minimum": 0, "description": "Highest frequency in Hz (default 45)."},
            "segment_s": {"type": "number", "description": "Welch segment length in s (default 2: 0.5 Hz resolution)."},
        })),
        ToolSpec("compute_band_power", T.compute_band_power, _object({**_RANGE, "bands": _BANDS})),
        ToolSpec("compute_time_features", T.compute_time_features, _object(dict(_RANGE))),
        ToolSpec("compute_windowed_features", T.compute_windowed_features, _object({
            **_RANGE,
            "window_s": {"type": "number", "description": "Window length in s (default 30)."},
            "step_s": {"type": "number", "description": "Step between window starts in s (default: window_s)."},
            "features": {"type": "array", "items": {"type": "string", "enum": list(T.WINDOW_FEATURES)},
                         "description": "Features per window (default: " + ", ".join(T.DEFAULT_WINDOW_FEATURES) + ")."},
        })),
        ToolSpec("detect_transients", T.detect_transients, _object({
            **_RANGE,
            "threshold": {"type": "number", "description": "Minimum |amplitude| in robust SDs (default 5)."},
            "min_width_ms": {"type": "number", "minimum": 0, "description": "Minimum width at half prominence (default 20)."},
            "max_width_ms": {"type": "number", "description": "Maximum width at half prominence (default 200)."},
            "max_candidates": {"type": "integer", "minimum": 1, "description": "How many candidates to return at most (default 50)."},
        })),
        ToolSpec("compute_asymmetry", T.compute_asymmetry, _object({
            "record": _RECORD, "start_s": _START, "end_s": _END, "bands": _BANDS,
            "pairs": {"type": "array", "items": {"type": "array", "items": {"type": "string"}},
                      "description": "[[left, right], ...] channel pairs (default: all 10-20 homologous pairs)."},
        })),
        ToolSpec("compute_channel_correlation", T.compute_channel_correlation, _object({
            **_RANGE, "method": {"type": "string", "enum": ["pearson"], "description": "Correlation method."},
        })),
    )
}

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def validate(schema: dict, value, path: str) -> None:
    """Check `value` against the subset of JSON Schema the registry uses; ToolError(bad_argument)."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[t](value) for t in names):
            raise ToolError("bad_argument", f"{path}: expected {' or '.join(names)}, got {type(value).__name__} {value!r}"[:300], argument=path)
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError("unsupported", f"{path}: {value!r} is not one of {schema['enum']}", argument=path)
    if "minimum" in schema and _TYPES["number"](value) and value < schema["minimum"]:
        raise ToolError("bad_argument", f"{path}: must be >= {schema['minimum']}, got {value!r}", argument=path)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(schema["items"], item, f"{path}[{i}]")
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
    arguments,
    resolve_record: Callable[[str | None], object],
    *,
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> dict:
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


def schemas() -> list[dict]:
    return [spec.schema() for spec in TOOLS.values()]
