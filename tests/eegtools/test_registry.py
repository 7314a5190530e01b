"""The registry: schemas for function calling, argument validation, call_tool never raises."""
import json

import pytest

import eegtools
from eegtools import ERROR_CODES, TOOLS, ToolError, call_tool, schemas


def resolver(path):
    def resolve(record):
        if record not in (None, "rec"):
            raise ToolError("bad_argument", f"record: {record!r} unknown", argument="record")
        return path
    return resolve


def test_ten_tools_with_openai_function_schemas():
    entries = schemas()
    assert len(entries) == 10 == len(TOOLS)
    for entry in entries:
        function = entry["function"]
        assert entry["type"] == "function" and function["description"]
        assert function["parameters"]["type"] == "object"
        assert function["parameters"]["additionalProperties"] is False
        assert "record" in function["parameters"]["properties"]
    json.dumps(entries)


def test_valid_call_returns_the_result(mmidb):
    out = call_tool("compute_band_power", {"record": "rec", "channels": ["O1"], "bands": ["alpha", [1, 4]]}, resolver(mmidb))
    assert out["channels"][0]["channel"] == "O1.." and "1-4Hz_relative" in out["channels"][0]


@pytest.mark.parametrize("name,args,code,argument", [
    ("no_such_tool", {}, "unsupported", "tool"),
    ("compute_band_power", {"channels": "O1"}, "bad_argument", "channels"),
    ("compute_band_power", {"channels": ["O1"], "colour": "red"}, "bad_argument", "colour"),
    ("compute_band_power", {"channels": ["Q9"]}, "unknown_channel", "channels"),
    ("compute_band_power", {"start_s": 500}, "out_of_range", "start_s"),
    ("compute_band_power", {"bands": ["kappa"]}, "unsupported", "bands"),
    ("compute_windowed_features", {"features": ["magic"]}, "unsupported", "features[0]"),
    ("compute_windowed_features", {"window_s": "ten"}, "bad_argument", "window_s"),
    ("compute_windowed_features", {"window_s": 0.5}, "budget_exceeded", None),
    ("detect_transients", {"max_candidates": 2.5}, "bad_argument", "max_candidates"),
    ("get_recording_info", {"record": "other"}, "bad_argument", "record"),
    ("get_recording_info", ["not", "an", "object"], "bad_argument", "arguments"),
])
def test_bad_requests_get_standardized_errors(mmidb, name, args, code, argument):
    out = call_tool(name, args, resolver(mmidb))
    assert set(out) == {"error"}
    assert out["error"]["code"] == code and out["error"]["code"] in ERROR_CODES
    assert out["error"]["argument"] == argument and out["error"]["message"]


def test_null_arguments_mean_defaults(mmidb):
    out = call_tool("compute_time_features", {"channels": ["Cz"], "start_s": None, "end_s": None}, resolver(mmidb))
    assert out["time_range_s"] == [0.0, 61.0]


def test_tool_error_rejects_unknown_codes():
    with pytest.raises(ValueError):
        ToolError("oops", "x")


def test_package_imports_nothing_from_the_harness():
    import sys

    assert eegtools.__doc__ and "import eegtools" in eegtools.__doc__
    for name in list(sys.modules):
        module = sys.modules[name]
        if name.startswith("eegtools") and getattr(module, "__file__", None):
            source = open(module.__file__).read()
            assert "import runner" not in source and "from runner" not in source, name
            assert "from validation" not in source and "import validation" not in source, name


def test_validate_checks_every_value_of_a_typed_object():
    from eegtools.toolspec import validate

    schema = {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}
    validate(schema, {"alpha": [8, 13]}, "bands")
    with pytest.raises(ToolError, match=r"bands\.beta\[1\]"):
        validate(schema, {"alpha": [8, 13], "beta": [13, "x"]}, "bands")
