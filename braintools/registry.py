"""The toolset's registry: each tool's group, schema and validation, and `call`, which never
raises for a bad request.

A tool is a plain function taking JSON arguments (ids of shared_state entries, numbers,
names) and returning a dict of outputs. An output wrapped in `New` is registered in
shared_state and replaced by its id and description; everything else is returned as is.
`@tool("group")` registers a function; the group decides which subagents get it (the
paradigm's agents list their groups). Specs, schemas and argument checks are the tool core's
(eegtools.toolspec), generated from each function's signature and numpydoc docstring, so what
a model is told cannot drift from the code; parameters many tools share are documented once
(braintools/docdict.py).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

import eegtools.errors
from braintools.data import jsonable
from braintools.docdict import DOCDICT
from braintools.errors import ToolError
from braintools.state import STATE, Branch
from eegtools.schema import JsonSchema, sha256_of
from eegtools.toolspec import ToolSpec, check_arguments, fill_doc, schemas_of, unknown_tool
from extensions.registry import Registry

Group = Literal["inspection", "preparation", "segmentation", "features", "statistics", "artifacts",
                "sleep", "neurocog", "physiol"]
COMMON_GROUPS: tuple[Group, ...] = ("inspection", "preparation", "segmentation", "features", "statistics", "artifacts")
MAX_ARRAY_ELEMENTS = 60_000_000  # about 480 MB of float64: the largest array a tool may create
INLINE_CHARS = 6000  # a result value longer than this as JSON is kept in state, not shown


@dataclass(frozen=True)
class New:
    """An output to register: the branch, the id prefix, the object and its description."""

    branch: Branch
    prefix: str
    value: Any
    info: dict[str, Any] | None = None  # default: value.describe()


def result(kind: str, value: Any, **meta: Any) -> New:
    """An analysis result (JSON value) to register under results: `res<N>`."""
    return New("results", "res", jsonable(value), {"kind": kind, **jsonable(meta)})


TOOLS: Registry[ToolSpec] = Registry("tool", unknown=unknown_tool)


def tool(group: Group) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register the decorated function as a tool of `group` (its name is the tool's name)."""
    def register(func: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        TOOLS.register(func.__name__, ToolSpec.from_function(fill_doc(func, DOCDICT), group=group))
        return func
    return register


def call(name: str, arguments: object, *, max_chars: int = 12000) -> dict[str, Any]:
    """Run one tool request against shared_state: the response, or {"error": {...}}; never raises."""
    try:
        spec = TOOLS.get(name)
        kwargs = check_arguments(spec, arguments)
        repeats = STATE.planning.note(spec.name, cast(dict[str, Any], arguments))  # a dict: checked above
        outputs = _run(spec, kwargs)
        return _response(spec.name, outputs, repeats, max_chars, made_by(spec.name, kwargs))
    except eegtools.errors.ToolError as exc:  # braintools' ToolError is one; the core's validation raises the base
        return exc.to_dict()


def _run(spec: ToolSpec, kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        with np.errstate(all="ignore"):
            return spec.func(**kwargs)
    except ToolError:
        raise
    except MemoryError:
        raise ToolError("budget_exceeded", f"{spec.name}: out of memory for these arguments; narrow channels or time") from None
    except Exception as exc:  # a library error on odd input is the call's failure, not the kernel's
        raise ToolError("failed", f"{spec.name} failed: {type(exc).__name__}: {exc}"[:600]) from None


def made_by(name: str, kwargs: dict[str, Any]) -> str:
    """The call as the state summary shows it: the tool and its short arguments."""
    parts = []
    for key, value in kwargs.items():
        text = json.dumps(value, default=str, ensure_ascii=False)
        parts.append(f"{key}={text if len(text) <= 24 else text[:21] + '...'}")
    return f"{name}({', '.join(parts)})"[:160]


def _response(name: str, outputs: dict[str, Any], repeats: int, max_chars: int, origin: str) -> dict[str, Any]:
    response: dict[str, Any] = {"tool": name}
    for key, value in outputs.items():
        response[key] = _register(value, origin) if isinstance(value, New) else jsonable(value)
    if repeats > 1:
        response["note"] = f"this exact call has now run {repeats} times"
    text = json.dumps(response, default=str)
    if len(text) > max_chars:
        for item in response.values():
            if isinstance(item, dict) and "value" in item:
                item["value"] = f"omitted ({len(json.dumps(item['value'], default=str))} characters); read parts with get_result"
    return response


def _register(new: New, made_by: str) -> dict[str, Any]:
    info = dict(new.info if new.info is not None else new.value.describe())
    entry = STATE.add(new.branch, new.prefix, new.value, info, made_by)
    shown = {"id": entry.id, **info}
    if new.branch == "results":
        text = json.dumps(new.value, default=str)
        shown["value"] = new.value if len(text) <= INLINE_CHARS else f"omitted ({len(text)} characters); read parts with get_result"
    return shown


def check_size(elements: float, what: str) -> None:
    """ToolError budget_exceeded before allocating more than MAX_ARRAY_ELEMENTS values."""
    if elements > MAX_ARRAY_ELEMENTS:
        raise ToolError("budget_exceeded", f"{what} would hold {elements:.3g} values (limit {MAX_ARRAY_ELEMENTS:.3g}); narrow channels or time")


def specs(groups: tuple[str, ...] | None = None) -> list[ToolSpec]:
    """The tools of `groups` (all when None), in registration order."""
    return [spec for spec in TOOLS.items() if groups is None or spec.group in groups]


def schemas(groups: tuple[str, ...] | None = None) -> list[JsonSchema]:
    """The OpenAI `tools=` entries of `groups` (a fresh copy)."""
    return schemas_of(specs(groups))


def schemas_sha256() -> str:
    """Hex sha256 of every tool's schema (what models are told), for run.json."""
    return sha256_of(schemas())
