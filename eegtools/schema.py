"""JSON schemas for function calling, generated from a function's signature and numpydoc docstring.

One source of truth per tool: the signature gives each parameter's name, JSON type and default;
the docstring's ``Parameters`` section gives its description; ``typing.Annotated`` markers give
bounds. Nothing is written twice, so what a model is told cannot drift from what the code does.

Type mapping (``json_type``):

- ``str``, ``int``, ``float``, ``bool``: ``string``, ``integer``, ``number``, ``boolean``;
- ``Literal["a", "b"]``: ``{"type": "string", "enum": ["a", "b"]}``;
- ``Sequence[X]``, ``list[X]``, ``tuple[X, ...]``, ``tuple[X, X]``: ``{"type": "array", "items": X}``;
- ``X | None``: X (JSON null, or omitting the argument, means "use the default");
- ``X | Y`` with differing schemas: ``{"type": [X's type, Y's type]}``. Detail inside the members
  (an enum, items) is dropped, since the registry's validator has no ``anyOf``: the parameter's
  description and the tool's own check carry it;
- ``dict[str, X]``, ``Mapping[str, X]``: ``{"type": "object", "additionalProperties": X}``;
- ``Annotated[float, Minimum(0)]``: adds ``"minimum": 0``.

The docstring convention (numpydoc): ``name : type`` at the section's indentation, the
description indented below it; a parameter with a default says ``, optional`` in its type, and
its description does not repeat the value: ``parameters_schema`` appends ``Default: <JSON>.``
from the signature (nothing for a ``None`` default, whose meaning the description states).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

JsonSchema = dict[str, Any]


@dataclass(frozen=True)
class Minimum:
    """Lower bound (inclusive) of a numeric parameter: ``Annotated[float, Minimum(0)]``."""

    value: float


@dataclass(frozen=True)
class ParamDoc:
    """One entry of a numpydoc ``Parameters`` section."""

    name: str
    type: str
    description: str


# --- the numpydoc reader: sections, and the Parameters section's entries --------------------


def doc_sections(doc: str | None) -> tuple[str, dict[str, list[str]]]:
    """Split a numpydoc docstring into the text before its first section and its sections.

    A section starts at an unindented title line underlined by dashes at least as long.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    head: list[str] = []
    sections: dict[str, list[str]] = {}
    body, i = head, 0
    while i < len(lines):
        line, under = lines[i], lines[i + 1].strip() if i + 1 < len(lines) else ""
        title = line.strip()
        if title and not line[0].isspace() and under and set(under) == {"-"} and len(under) >= len(title):
            if title in sections:
                raise ValueError(f"docstring section {title!r} appears twice")
            body = sections[title] = []
            i += 2
        else:
            body.append(line)
            i += 1
    return "\n".join(head).strip(), sections


def parse_parameters(lines: Sequence[str]) -> dict[str, ParamDoc]:
    """The entries of a ``Parameters`` section: ``name : type`` then indented description lines."""
    entries: list[tuple[str, str, list[str]]] = []
    for line in lines:
        if line.strip() and not line[0].isspace():
            name, _, type_ = line.partition(" : ")
            entries.append((name.strip(), type_.strip(), []))
        elif line.strip():
            if not entries:
                raise ValueError(f"description line before any parameter: {line.strip()!r}")
            entries[-1][2].append(line.strip())
    names = [name for name, _, _ in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"a parameter is documented twice: {names}")
    return {name: ParamDoc(name, type_, " ".join(text)) for name, type_, text in entries}


def description(func: Callable[..., Any]) -> str:
    """The summary line and extended description of `func`'s docstring, as one line."""
    head, _ = doc_sections(func.__doc__)
    return " ".join(line.strip() for line in head.splitlines() if line.strip())


def parameter_docs(func: Callable[..., Any]) -> dict[str, ParamDoc]:
    """`func`'s documented parameters, in the docstring's order."""
    return parse_parameters(doc_sections(func.__doc__)[1].get("Parameters", []))


# --- annotations -> JSON Schema -------------------------------------------------------------

_SCALARS: dict[object, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}
_ARRAYS: tuple[object, ...] = (list, tuple, Sequence)


def json_type(annotation: object) -> JsonSchema:
    """The JSON Schema of one annotation (see the module docstring for the mapping)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        schema = json_type(args[0])
        for mark in args[1:]:
            if isinstance(mark, Minimum):
                if schema["type"] not in ("number", "integer"):
                    raise TypeError(f"{annotation!r}: Minimum applies to numbers only")
                schema["minimum"] = mark.value
        return schema
    if origin is Union or origin is types.UnionType:
        members = [json_type(a) for a in args if a is not type(None)]
        if all(m == members[0] for m in members):
            return members[0]
        names = [t for m in members for t in ([m["type"]] if isinstance(m["type"], str) else m["type"])]
        return {"type": list(dict.fromkeys(names))}
    if origin is Literal:
        kinds = {json_type(type(value))["type"] for value in args}
        if len(kinds) != 1:
            raise TypeError(f"{annotation!r}: a Literal's values must share one JSON type")
        return {"type": kinds.pop(), "enum": list(args)}
    if origin in _ARRAYS or annotation in _ARRAYS:
        items = list(dict.fromkeys(a for a in args if a is not Ellipsis))
        if len(items) > 1:
            raise TypeError(f"{annotation!r}: an array's items must share one type")
        return {"type": "array", "items": json_type(items[0])} if items else {"type": "array"}
    if origin in (dict, Mapping):
        if not args or args[0] is not str:
            raise TypeError(f"{annotation!r}: an object's keys must be str")
        return {"type": "object", "additionalProperties": json_type(args[1])}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    raise TypeError(f"no JSON Schema for the annotation {annotation!r}")


def _as_json(value: object) -> object:
    """A default as the model would write it: tuples become lists."""
    if isinstance(value, (tuple, list)):
        return [_as_json(v) for v in value]
    return value


def parameters_schema(
    func: Callable[..., Any],
    *,
    replace: Mapping[str, JsonSchema] | None = None,
    exclude: Collection[str] = (),
) -> JsonSchema:
    """The ``parameters`` object of `func`'s function-calling schema.

    Parameters
    ----------
    func : callable
        A function with type annotations and a numpydoc docstring documenting exactly its
        parameters.
    replace : mapping of str to dict, optional
        Parameters whose schema the caller defines instead (the tools' `record`, a path in
        Python but a record id for the model). They keep their place and are never required.
    exclude : collection of str, optional
        Parameters left out of the schema (harness-side settings such as `budget_tokens`).

    Returns
    -------
    dict
        ``{"type": "object", "properties", "required", "additionalProperties": False}``:
        properties in signature order; required are the parameters without a default.

    Raises
    ------
    TypeError
        When the docstring and the signature disagree on the parameters, or an annotation
        has no JSON Schema.
    """
    replace = replace or {}
    signature = inspect.signature(func)
    docs = parameter_docs(func)
    if list(docs) != list(signature.parameters):
        raise TypeError(
            f"{func.__name__}: the docstring documents {list(docs)}, the signature has {list(signature.parameters)}"
        )
    hints = typing.get_type_hints(func, include_extras=True)
    properties: dict[str, JsonSchema] = {}
    required: list[str] = []
    for name, param in signature.parameters.items():
        if name in exclude:
            continue
        if name in replace:
            properties[name] = dict(replace[name])
            continue
        text = docs[name].description
        if param.default is not inspect.Parameter.empty and param.default is not None:
            text += f" Default: {json.dumps(_as_json(param.default), ensure_ascii=False)}."
        properties[name] = {**json_type(hints[name]), "description": text}
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def function_schema(
    func: Callable[..., Any],
    *,
    replace: Mapping[str, JsonSchema] | None = None,
    exclude: Collection[str] = (),
) -> JsonSchema:
    """`func`'s OpenAI ``tools=`` entry: name, description, and `parameters_schema`."""
    return {
        "type": "function",
        "function": {
            "name": func.__name__,
            "description": description(func),
            "parameters": parameters_schema(func, replace=replace, exclude=exclude),
        },
    }


def canonical_json(value: object) -> str:
    """Compact JSON with sorted keys and UTF-8 text (not ``\\u`` escapes): the hashed form."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(value: object) -> str:
    """Hex sha256 of `value`'s `canonical_json`, UTF-8 encoded."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
