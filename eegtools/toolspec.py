"""The tool core both toolsets share: a tool's spec (its function, the description and
parameters schema a model sees, and its group), the validation of a call's arguments against
that schema, and the shared parameter documentation filled into docstrings.

eegtools' registry (eegtools/registry.py) and BrainAgent's (braintools/registry.py) build
their specs here, so that what a model is told and what a call is checked against are made
one way. The schema comes from the function's signature and numpydoc docstring
(eegtools.schema); a parameter many tools share is documented once, in a docdict, and written
`%(name)s` on a line of its own in each docstring (as MNE-Python does).
"""
from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from eegtools.errors import ToolError
from eegtools.schema import JsonSchema, description, parameters_schema

F = TypeVar("F", bound=Callable[..., Any])
_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its function, the description and parameters schema the model sees, and its
    group (BrainAgent's: which subagents get it; empty for eegtools')."""

    name: str
    func: Callable[..., dict[str, Any]]
    description: str
    parameters: JsonSchema
    group: str = ""

    @classmethod
    def from_function(cls, func: Callable[..., dict[str, Any]], *, group: str = "",
                      replace: Mapping[str, JsonSchema] | None = None, exclude: tuple[str, ...] = ()) -> ToolSpec:
        """The spec generated from `func`'s signature and docstring; `replace` gives some
        parameters a schema of their own, `exclude` leaves the harness's parameters out."""
        parameters = parameters_schema(func, replace=dict(replace or {}), exclude=exclude)
        return cls(func.__name__, func, description(func), parameters, group)

    def schema(self) -> JsonSchema:
        """OpenAI `tools=` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


def schemas_of(specs: Iterable[ToolSpec]) -> list[JsonSchema]:
    """The OpenAI `tools=` entries of `specs`, in their order (a fresh copy the caller may change)."""
    return [copy.deepcopy(spec.schema()) for spec in specs]


def fill_doc(func: F, docdict: Mapping[str, str]) -> F:
    """`func` with each `%(name)s` line of its docstring replaced by `docdict[name]` (a numpydoc
    parameter entry: "name : type", then its description indented by four spaces), indented as
    the placeholder is. KeyError names the function and the missing entry."""
    doc = func.__doc__
    if not doc or "%(" not in doc:
        return func

    def entry(match: re.Match[str]) -> str:
        indent, key = match.group(1), match.group(2)
        if key not in docdict:
            raise KeyError(f"{func.__name__}: no shared parameter documentation {key!r}")
        return "\n".join(indent + line if line else line for line in docdict[key].splitlines())

    func.__doc__ = _PLACEHOLDER.sub(entry, doc)
    return func


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
    """Check `value` against the subset of JSON Schema the toolsets use; ToolError(bad_argument
    or unsupported) naming the argument."""
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


def check_arguments(spec: ToolSpec, arguments: object) -> dict[str, Any]:
    """The call's arguments once checked against the spec, with nulls (use the default)
    dropped; ToolError when they are not a JSON object or break the schema."""
    if not isinstance(arguments, dict):
        raise ToolError("bad_argument", f"arguments: expected a JSON object, got {type(arguments).__name__}", argument="arguments")
    validate(spec.parameters, arguments, "arguments")
    return {k: v for k, v in arguments.items() if v is not None}


def unknown_tool(name: object, known: Iterable[str]) -> ToolError:
    """The error of a call to a tool that does not exist, listing the ones that do (a tool
    registry's `unknown`)."""
    return ToolError("unsupported", f"tool {name!r} does not exist; tools: {', '.join(known)}", argument="tool")
