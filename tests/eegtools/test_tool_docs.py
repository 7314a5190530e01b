"""Each tool's docstring documents exactly its parameters, and the schemas generated from
signatures and docstrings keep what the model relies on (types, enums, bounds, required)."""
from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import pytest

import eegtools
from eegtools import ERROR_CODES, TOOLS, schemas, schemas_sha256
from eegtools import features as F
from eegtools import tools as T
from eegtools.registry import HARNESS_ONLY, RECORD_SCHEMA
from eegtools.schema import doc_sections, parameter_docs

FUNCS = [spec.func for spec in TOOLS.items()]
IDS = list(TOOLS)

RANGE = {
    "channels": {"type": "array", "items": {"type": "string"}},
    "start_s": {"type": "number", "minimum": 0},
    "end_s": {"type": "number", "minimum": 0},
}
BANDS = {"type": "array", "items": {"type": ["string", "array"]}}
# What the hand-written schemas declared before they were generated (descriptions aside):
# the generated ones must keep every type, enum, bound and the parameter set.
STRUCTURE = {
    "get_recording_info": {},
    "get_channel_list": {},
    "compute_noise_metrics": {**RANGE, "line_freq": {"type": "number"}, "high_freq_hz": {"type": "number"},
                              "flat_tolerance_uv": {"type": "number", "minimum": 0}},
    "compute_power_spectrum": {**RANGE, "fmin": {"type": "number", "minimum": 0},
                               "fmax": {"type": "number", "minimum": 0}, "segment_s": {"type": "number"}},
    "compute_band_power": {**RANGE, "bands": BANDS},
    "compute_time_features": dict(RANGE),
    "compute_windowed_features": {**RANGE, "window_s": {"type": "number"}, "step_s": {"type": "number"},
                                  "features": {"type": "array", "items": {"type": "string", "enum": [
                                      "rms_uv", "ptp_uv", "line_length_uv_per_s", "zero_crossing_rate_hz",
                                      "hjorth_activity_uv2", "hjorth_mobility_hz", "hjorth_complexity",
                                      "alpha_power", "alpha_relative", "beta_power", "beta_relative",
                                      "delta_power", "delta_relative", "gamma_power", "gamma_relative",
                                      "peak_frequency_hz", "sigma_power", "sigma_relative", "theta_power",
                                      "theta_relative"]}}},
    "detect_transients": {**RANGE, "threshold": {"type": "number"}, "min_width_ms": {"type": "number", "minimum": 0},
                          "max_width_ms": {"type": "number"}, "max_candidates": {"type": "integer", "minimum": 1}},
    "compute_asymmetry": {"pairs": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                          "start_s": RANGE["start_s"], "end_s": RANGE["end_s"], "bands": BANDS},
    "compute_channel_correlation": {**RANGE, "method": {"type": "string", "enum": ["pearson"]}},
}


@pytest.mark.parametrize("func", FUNCS, ids=IDS)
def test_docstring_documents_exactly_the_parameters_in_order(func):
    documented = list(parameter_docs(func))
    assert documented == list(inspect.signature(func).parameters), "docstring and signature disagree"


@pytest.mark.parametrize("func", FUNCS, ids=IDS)
def test_optional_in_the_docstring_means_a_default_in_the_signature(func):
    docs = parameter_docs(func)
    for name, param in inspect.signature(func).parameters.items():
        has_default = param.default is not inspect.Parameter.empty
        assert docs[name].type.endswith(", optional") == has_default, name
        assert docs[name].description.endswith("."), name
        assert not re.search(r"\(default \d", docs[name].description), f"{name}: the default comes from the signature"


@pytest.mark.parametrize("func", FUNCS, ids=IDS)
def test_every_parameter_is_annotated_and_the_result_is_a_dict(func):
    hints = typing.get_type_hints(func, include_extras=True)
    assert set(inspect.signature(func).parameters) <= set(hints)
    assert hints["return"] == T.ToolResult


@pytest.mark.parametrize("func", FUNCS, ids=IDS)
def test_numpydoc_sections_summary_returns_and_raises(func):
    head, sections = doc_sections(func.__doc__)
    summary = head.splitlines()[0]
    assert summary.endswith(".") and len(summary) <= 110
    assert set(sections) == {"Parameters", "Returns", "Raises"}
    assert sections["Returns"][0] == "dict"
    raises = " ".join(sections["Raises"])
    assert sections["Raises"][0] == "ToolError"
    codes = set(re.findall(r"``(\w+)``", raises))
    assert codes and codes <= set(ERROR_CODES), codes


def test_parser_agrees_with_numpydoc():
    from numpydoc import docscrape
    for spec in TOOLS.items():
        parsed = docscrape.FunctionDoc(spec.func)
        theirs = {p.name: (p.type, " ".join(line.strip() for line in p.desc if line.strip())) for p in parsed["Parameters"]}
        assert theirs == {k: (v.type, v.description) for k, v in parameter_docs(spec.func).items()}, spec.name
        assert " ".join(" ".join(parsed["Summary"] + parsed["Extended Summary"]).split()) == spec.description


def test_numpydoc_validation_passes():
    from numpydoc import validate
    # Not required here: See Also, Examples, an extended summary, and SS05's verb heuristic
    # (it reads "Features in sliding windows" as a third-person verb).
    waived = {"SA01", "EX01", "ES01", "SS05"}
    for name in TOOLS:
        errors = [(code, message) for code, message in validate.validate(f"eegtools.tools.{name}")["errors"]
                  if code not in waived]
        assert not errors, (name, errors)


def test_generated_schemas_keep_the_structure_the_model_relied_on():
    for entry in schemas():
        function = entry["function"]
        params = function["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert params["required"] == [], "every argument is optional for the model"
        properties = {k: {f: v for f, v in p.items() if f != "description"} for k, p in params["properties"].items()}
        expected = {"record": {"type": "string"}, **STRUCTURE[function["name"]]}
        assert properties == expected, function["name"]
        assert list(properties) == list(inspect.signature(TOOLS.get(function["name"]).func).parameters)[:-1]
        assert params["properties"]["record"] == RECORD_SCHEMA
        assert not set(HARNESS_ONLY) & set(params["properties"])
        for name, prop in params["properties"].items():
            assert prop["description"].endswith("."), (function["name"], name)


def test_defaults_come_from_the_signature_into_the_description():
    props = {e["function"]["name"]: e["function"]["parameters"]["properties"] for e in schemas()}
    assert props["compute_noise_metrics"]["line_freq"]["description"].endswith(" Default: 50.0.")
    assert props["detect_transients"]["max_candidates"]["description"].endswith(" Default: 50.")
    assert props["compute_asymmetry"]["bands"]["description"].endswith(' Default: ["alpha"].')
    defaults = ", ".join(f'"{f}"' for f in T.DEFAULT_WINDOW_FEATURES)
    assert props["compute_windowed_features"]["features"]["description"].endswith(f" Default: [{defaults}].")
    assert "Default" not in props["compute_windowed_features"]["step_s"]["description"]  # None: described in words
    assert props["compute_windowed_features"]["step_s"]["description"] == "Step between window starts in s (default: window_s)."


def test_enumerations_match_the_code():
    assert typing.get_args(T.BandName) == tuple(F.BANDS)
    assert T.WINDOW_FEATURES == T.TIME_FEATURES + tuple(sorted(T.SPECTRAL_FEATURES))
    assert set(T.DEFAULT_WINDOW_FEATURES) <= set(T.WINDOW_FEATURES)


def test_schemas_sha256_is_stable_and_tracks_what_the_model_sees():
    first = schemas_sha256()
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert schemas_sha256() == first
    entries = schemas()
    entries[0]["function"]["description"] = "mutated by a caller"
    assert schemas_sha256() == first, "schemas() hands out copies"
    spec = TOOLS.get("compute_band_power")
    TOOLS.replace(spec.name, dataclasses.replace(spec, description=spec.description + " More."))
    try:
        assert schemas_sha256() != first
    finally:
        TOOLS.replace(spec.name, spec)
    assert schemas_sha256() == first


def test_schemas_sha256_changes_when_a_parameter_description_changes():
    first = schemas_sha256()
    spec = TOOLS.get("detect_transients")
    parameters = {**spec.parameters, "properties": dict(spec.parameters["properties"])}
    parameters["properties"]["threshold"] = {**parameters["properties"]["threshold"], "description": "Changed."}
    TOOLS.replace(spec.name, dataclasses.replace(spec, parameters=parameters))
    try:
        assert schemas_sha256() != first
    finally:
        TOOLS.replace(spec.name, spec)


def test_schemas_sha256_is_exported_and_documented():
    assert eegtools.schemas_sha256 is schemas_sha256
    assert "canonical JSON" in (schemas_sha256.__doc__ or "")
