"""The schema generator: numpydoc reading, annotation -> JSON Schema, defaults, drift refused."""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Annotated, Literal

import pytest

from eegtools.schema import (
    Minimum,
    canonical_json,
    description,
    doc_sections,
    function_schema,
    json_type,
    parameter_docs,
    parameters_schema,
    parse_parameters,
    sha256_of,
)


def sample_tool(
    record: str, channels: Sequence[str] | None = None, start_s: Annotated[float, Minimum(0)] | None = None, *,
    mode: Literal["fast", "slow"] = "fast", count: Annotated[int, Minimum(1)] = 3,
    items: Sequence[Literal["a", "b"] | Sequence[float]] = ("a",), budget_tokens: int | None = 10,
) -> dict[str, object]:
    """Do a sample thing.

    An extended description
    over two lines.

    Parameters
    ----------
    record : str
        The record.
    channels : sequence of str, optional
        Channel names; omit for all.
    start_s : float, optional
        Start in s
        (continued on a second line).
    mode : {'fast', 'slow'}, optional
        How.
    count : int, optional
        How many.
    items : sequence, optional
        Names or ranges.
    budget_tokens : int or None, optional
        Harness-side.

    Returns
    -------
    dict
        Something.

    Raises
    ------
    ToolError
        ``bad_argument`` sometimes.
    """
    return {}


def test_doc_sections_split_head_and_titled_sections():
    head, sections = doc_sections(sample_tool.__doc__)
    assert head == "Do a sample thing.\n\nAn extended description\nover two lines."
    assert list(sections) == ["Parameters", "Returns", "Raises"]
    assert sections["Returns"] == ["dict", "    Something.", ""]
    assert doc_sections(None) == ("", {})
    assert doc_sections("One line.") == ("One line.", {})


def test_doc_sections_refuse_a_repeated_section():
    with pytest.raises(ValueError, match="twice"):
        doc_sections("S.\n\nNotes\n-----\na\n\nNotes\n-----\nb\n")


def test_parse_parameters_reads_names_types_and_joined_descriptions():
    docs = parameter_docs(sample_tool)
    assert list(docs) == list(inspect.signature(sample_tool).parameters)
    assert docs["start_s"].type == "float, optional"
    assert docs["start_s"].description == "Start in s (continued on a second line)."
    assert docs["record"].type == "str" and docs["record"].description == "The record."
    untyped = parse_parameters(["flag", "    A flag.", "", "    Second paragraph."])
    assert untyped["flag"].type == "" and untyped["flag"].description == "A flag. Second paragraph."


def test_parse_parameters_refuses_duplicates_and_orphan_text():
    with pytest.raises(ValueError, match="twice"):
        parse_parameters(["a : int", "    x", "a : int", "    y"])
    with pytest.raises(ValueError, match="before any parameter"):
        parse_parameters(["    orphan text"])


def test_description_is_summary_and_extended_text_on_one_line():
    assert description(sample_tool) == "Do a sample thing. An extended description over two lines."


@pytest.mark.parametrize("annotation,schema", [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (float | None, {"type": "number"}),
    (Literal["x", "y"], {"type": "string", "enum": ["x", "y"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (Sequence[str], {"type": "array", "items": {"type": "string"}}),
    (list[Sequence[str]], {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}),
    (tuple[float, float], {"type": "array", "items": {"type": "number"}}),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (list, {"type": "array"}),
    (Annotated[float, Minimum(0)], {"type": "number", "minimum": 0}),
    (Annotated[int, Minimum(1)] | None, {"type": "integer", "minimum": 1}),
    (Annotated[float, "unrelated metadata"], {"type": "number"}),
    (str | int, {"type": ["string", "integer"]}),
    (Literal["a"] | Sequence[float], {"type": ["string", "array"]}),
    (Sequence[str] | list[str], {"type": "array", "items": {"type": "string"}}),
    (dict[str, list[float]], {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}),
])
def test_json_type_mapping(annotation, schema):
    assert json_type(annotation) == schema


@pytest.mark.parametrize("annotation", [
    dict[int, int], object, Literal["a", 1], tuple[int, str], set[int], Annotated[str, Minimum(0)],
])
def test_json_type_refuses_what_it_cannot_express(annotation):
    with pytest.raises(TypeError):
        json_type(annotation)


def test_parameters_schema_types_defaults_bounds_and_harness_parameters():
    record = {"type": "string", "description": "Record id."}
    schema = parameters_schema(sample_tool, replace={"record": record}, exclude=("budget_tokens",))
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["record", "channels", "start_s", "mode", "count", "items"]
    assert schema["required"] == []  # record is replaced (the harness's), the rest have defaults
    props = schema["properties"]
    assert props["record"] == record and props["record"] is not record
    assert props["channels"] == {"type": "array", "items": {"type": "string"}, "description": "Channel names; omit for all."}
    assert props["start_s"] == {"type": "number", "minimum": 0, "description": "Start in s (continued on a second line)."}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "description": 'How. Default: "fast".'}
    assert props["count"] == {"type": "integer", "minimum": 1, "description": "How many. Default: 3."}
    assert props["items"] == {"type": "array", "items": {"type": ["string", "array"]},
                              "description": 'Names or ranges. Default: ["a"].'}


def test_parameters_without_default_are_required():
    schema = parameters_schema(sample_tool, exclude=("budget_tokens",))
    assert schema["required"] == ["record"]
    assert schema["properties"]["record"] == {"type": "string", "description": "The record."}


def test_function_schema_is_an_openai_tools_entry():
    entry = function_schema(sample_tool, exclude=("budget_tokens",))
    assert entry["type"] == "function"
    assert entry["function"]["name"] == "sample_tool"
    assert entry["function"]["description"] == description(sample_tool)
    assert entry["function"]["parameters"] == parameters_schema(sample_tool, exclude=("budget_tokens",))


def undocumented(record: str, extra: int = 1) -> dict[str, object]:
    """Summary.

    Parameters
    ----------
    record : str
        The record.
    """
    return {}


def stale(record: str) -> dict[str, object]:
    """Summary.

    Parameters
    ----------
    record : str
        The record.
    gone : int, optional
        A parameter the signature no longer has.
    """
    return {}


def reordered(a: int, b: int) -> None:
    """Summary.

    Parameters
    ----------
    b : int
        B.
    a : int
        A.
    """


@pytest.mark.parametrize("func", [undocumented, stale, reordered])
def test_docstring_and_signature_must_agree(func):
    with pytest.raises(TypeError, match="the docstring documents"):
        parameters_schema(func)


def test_canonical_json_and_sha256_ignore_key_order_but_not_text():
    a = {"b": [1, {"y": "µV", "x": 2}], "a": None}
    b = {"a": None, "b": [1, {"x": 2, "y": "µV"}]}
    assert canonical_json(a) == canonical_json(b) == '{"a":null,"b":[1,{"x":2,"y":"µV"}]}'
    assert sha256_of(a) == sha256_of(b)
    assert len(sha256_of(a)) == 64 and int(sha256_of(a), 16) >= 0
    assert sha256_of({"a": "x"}) != sha256_of({"a": "x "})
