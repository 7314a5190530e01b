"""The tool registry: each tool's JSON schema (for native function calling and prompts),
argument validation against it, and `call_tool`, which never raises for a bad request.

The specs, the schemas and the validation are the tool core's (eegtools.toolspec), which
BrainAgent's toolset shares: the schemas are generated from each tool's signature and numpydoc
docstring. Two parameters are the harness's, not the tool's: `record` is a file path or
Recording in Python but a record id for the model (`RECORD_SCHEMA`, never required: a task
with one record may omit it), and `budget_tokens` is set by the harness (`HARNESS_ONLY`, not
in the schema).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eegtools import tools as T
from eegtools.budget import DEFAULT_BUDGET_TOKENS
from eegtools.docdict import DOCDICT
from eegtools.errors import ToolError
from eegtools.schema import JsonSchema, sha256_of
from eegtools.toolspec import ToolSpec, check_arguments, fill_doc, schemas_of, unknown_tool
from extensions.registry import Registry

RECORD_SCHEMA: JsonSchema = {
    "type": "string",
    "description": "Record id as given in the task (may be omitted when the task has one record).",
}
HARNESS_ONLY: tuple[str, ...] = ("budget_tokens",)


TOOLS: Registry[ToolSpec] = Registry("tool", unknown=unknown_tool)


def register(func: Callable[..., dict[str, Any]]) -> ToolSpec:
    """Add a tool: `func(record, ..., budget_tokens)` with a numpydoc docstring (DOCDICT's
    entries filled in), named as the function; its schema is generated from both."""
    spec = ToolSpec.from_function(fill_doc(func, DOCDICT), replace={"record": RECORD_SCHEMA}, exclude=HARNESS_ONLY)
    return TOOLS.register(spec.name, spec)


for _func in (
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
):
    register(_func)


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
        kwargs = check_arguments(spec, arguments)
        record = resolve_record(kwargs.pop("record", None))
        return spec.func(record, budget_tokens=budget_tokens, **kwargs)
    except ToolError as exc:
        return exc.to_dict()


def schemas() -> list[JsonSchema]:
    """Every tool's OpenAI `tools=` entry, in registry order (a fresh copy on each call)."""
    return schemas_of(TOOLS.items())


def schemas_sha256() -> str:
    """Hex sha256 identifying what the model is told about the tools.

    The hash of `schemas()` as canonical JSON (sorted keys, no whitespace, UTF-8 text; see
    eegtools.schema.canonical_json): any change to a tool's name, description, parameter,
    type, enum, bound or default changes it, while dict order does not. Recorded in run.json
    so that runs are compared only when their models saw the same tools.
    """
    return sha256_of(schemas())
