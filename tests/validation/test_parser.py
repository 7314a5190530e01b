"""The deterministic report parser: JSON first, key: value lines as fallback, never a guess."""
import json
import math
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from validation.parser import (
    MAX_FAILED_DECODES,
    MAX_REPORT_CHARS,
    normalize_key,
    parse_report,
)

KEYS = ["alpha_rel", "dominant_band", "top_channels"]


def fields(report, keys=KEYS):
    return parse_report(report, keys).fields


# --- JSON objects ------------------------------------------------------------------------

def test_fenced_json_object():
    report = (
        "I filtered the data and computed the PSD.\n\n```json\n"
        '{"alpha_rel": 0.253, "dominant_band": "alpha", "top_channels": ["O1", "Oz"]}\n```\n'
        "Done."
    )
    parsed = parse_report(report, KEYS)
    assert parsed.method == "json"
    assert parsed.fields == {
        "alpha_rel": 0.253, "dominant_band": "alpha", "top_channels": ["O1", "Oz"]
    }


def test_bare_json_object_in_prose():
    report = 'The result is {"alpha_rel": 0.2, "dominant_band": "theta"} as computed.'
    assert fields(report) == {"alpha_rel": 0.2, "dominant_band": "theta", "top_channels": None}


def test_last_object_with_a_target_key_wins():
    report = (
        'First try: {"alpha_rel": 0.9}\nCorrected: {"alpha_rel": 0.25}\n'
        'Status: {"status": "done"}'  # holds no target key: does not shadow the answer
    )
    parsed = parse_report(report, KEYS)
    assert parsed.fields["alpha_rel"] == 0.25
    assert parsed.method == "json"


def test_nested_values_and_nested_keys():
    report = json.dumps({"results": {"alpha_rel": 0.3, "dominant_band": {"name": "alpha"}}})
    got = fields(report)
    assert got["alpha_rel"] == 0.3  # the only alpha_rel, inside one wrapper
    assert got["dominant_band"] == {"name": "alpha"}  # a nested value is kept whole


def test_nested_key_found_twice_with_different_values_is_null():
    report = json.dumps({"run1": {"alpha_rel": 0.3}, "run2": {"alpha_rel": 0.4}})
    parsed = parse_report(report, KEYS)
    assert parsed.fields["alpha_rel"] is None
    assert any("several nested" in n for n in parsed.notes)


def test_invalid_outer_brace_lets_inner_object_through():
    assert fields('{ result: {"alpha_rel": 0.1} }')["alpha_rel"] == 0.1


def test_key_matching_exact_first_then_lenient():
    assert fields('{"alpha_rel": 1, "Alpha_Rel": 2}')["alpha_rel"] == 1
    assert fields('{"Alpha Rel": 2}')["alpha_rel"] == 2
    assert fields('{"ALPHA-REL": 3}')["alpha_rel"] == 3
    assert fields('{"alphaRel": 4}')["alpha_rel"] == 4
    # two lenient matches that disagree: ambiguous, so null (never a pick)
    assert fields('{"Alpha Rel": 2, "ALPHA_REL": 3}')["alpha_rel"] is None
    assert fields('{"Alpha Rel": 2, "ALPHA_REL": 2}')["alpha_rel"] == 2


def test_explicit_null_in_json_is_not_overridden_by_a_line():
    report = 'alpha_rel: 0.5\n{"alpha_rel": null, "dominant_band": "beta"}'
    got = fields(report)
    assert got["alpha_rel"] is None
    assert got["dominant_band"] == "beta"


def test_lines_fill_keys_the_json_object_lacks():
    parsed = parse_report('{"alpha_rel": 0.2}\ndominant_band: alpha\n', KEYS)
    assert parsed.fields == {"alpha_rel": 0.2, "dominant_band": "alpha", "top_channels": None}
    assert parsed.method == "json"
    assert any("dominant_band" in n for n in parsed.notes)


def test_json_special_floats_are_kept_for_the_units_to_reject():
    assert math.isnan(fields('{"alpha_rel": NaN}')["alpha_rel"])
    assert fields('{"alpha_rel": Infinity}')["alpha_rel"] == math.inf


def test_python_dict_in_a_fence():
    report = (
        "```python\n"
        "{'alpha_rel': 0.25, 'top_channels': ('O1', 'Oz'), 'dominant_band': None}\n```"
    )
    parsed = parse_report(report, KEYS)
    assert parsed.method == "json"
    assert parsed.fields == {"alpha_rel": 0.25, "top_channels": ["O1", "Oz"], "dominant_band": None}


def test_trailing_comma_in_a_fence_reads_as_a_python_literal():
    report = '```json\n{\n  "alpha_rel": 0.25,\n  "dominant_band": "alpha",\n}\n```'
    parsed = parse_report(report, KEYS)
    assert parsed.method == "json"
    assert parsed.fields["alpha_rel"] == 0.25


def test_broken_json_falls_back_to_its_lines():
    report = 'Result:\n{\n  "alpha_rel": 0.25,\n  "dominant_band": "alpha",\n  oops\n}'
    parsed = parse_report(report, KEYS)
    assert parsed.method == "lines"
    assert parsed.fields["alpha_rel"] == 0.25
    assert parsed.fields["dominant_band"] == "alpha"


# --- key: value lines --------------------------------------------------------------------

def test_line_values():
    report = "\n".join([
        "Summary of results",
        "alpha_rel: 0.25",
        "- **dominant_band**: Alpha.",
        'top_channels: ["O1", "Oz"]',
        "peak = 10",
        "count: 3.",
        "tiny: 1e-3",
        "flag: true",
        "nothing: null",
        "freq: 10.2 Hz",
        "chans: ['Fz', 'Cz']",
        "**quoted:** 'N2'",
    ])
    keys = KEYS + ["peak", "count", "tiny", "flag", "nothing", "freq", "chans", "quoted"]
    parsed = parse_report(report, keys)
    assert parsed.method == "lines"
    assert parsed.fields == {
        "alpha_rel": 0.25,
        "dominant_band": "Alpha",
        "top_channels": ["O1", "Oz"],
        "peak": 10,
        "count": 3,
        "tiny": 0.001,
        "flag": True,
        "nothing": None,
        "freq": "10.2 Hz",  # text: the numeric unit decides whether a unit is acceptable
        "chans": ["Fz", "Cz"],
        "quoted": "N2",
    }


def test_later_line_overrides_earlier():
    parsed = parse_report("alpha_rel: 0.9\nalpha_rel: 0.3\n", KEYS)
    assert parsed.fields["alpha_rel"] == 0.3
    assert any("several lines" in n for n in parsed.notes)


def test_lines_with_spaced_or_cased_keys():
    assert fields("Alpha Rel: 0.4")["alpha_rel"] == 0.4
    assert fields("1. DOMINANT_BAND = theta")["dominant_band"] == "theta"


def test_prose_is_not_a_field():
    report = "The alpha_rel is about 0.25 and the band is alpha.\nNote: alpha_rel was high."
    parsed = parse_report(report, KEYS)
    assert parsed.fields == {k: None for k in KEYS}
    assert parsed.method == "none"


# --- degenerate input --------------------------------------------------------------------

def test_empty_and_non_text_reports():
    for report in (None, "", "   \n", 42, b'{"alpha_rel": 1}', ["x"], {"alpha_rel": 1}):
        parsed = parse_report(report, KEYS)
        assert set(parsed.fields) == set(KEYS)
    assert parse_report(b'{"alpha_rel": 1}', KEYS).fields["alpha_rel"] == 1
    assert parse_report({"alpha_rel": 1}, KEYS).fields["alpha_rel"] is None  # not a report
    assert parse_report(None, KEYS).method == "none"


def test_bad_target_keys():
    assert parse_report('{"a": 1}', None).fields == {}
    assert parse_report('{"a": 1}', ["a", "a", 3, ""]).fields == {"a": 1}


def test_long_report_is_parsed_from_its_tail():
    report = "x" * (MAX_REPORT_CHARS + 10) + '\n{"alpha_rel": 0.5}'
    parsed = parse_report(report, KEYS)
    assert parsed.fields["alpha_rel"] == 0.5
    assert any("tail" in n for n in parsed.notes)


def test_hostile_reports_parse_quickly():
    hostile = [
        '{"a":1,' * 28_000,
        '{"' * 100_000,
        "x" * 180_000 + '{"' * 10_000,  # failed decodes late in the text cost the most
        "{" * 100_000,
        "{}" * 100_000,
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        "[" * 50_000 + "\nalpha_rel: [" + "[" * 10_000,
        "```python\n{" + "(" * 5_000 + "\n```",
        "```" * 60_000,
        "```\n" * 50_000,
        "alpha_rel: " + "9" * 10_000,
        "```\n{'alpha_rel': 0x" + "f" * 15_000 + "}\n```",
    ]
    for report in hostile:
        start = time.perf_counter()
        parsed = parse_report(report, KEYS)
        assert time.perf_counter() - start < 3.0
        assert set(parsed.fields) == set(KEYS)


def test_normalize_key():
    assert normalize_key(" Alpha_Rel-Power ") == "alpharelpower"


# --- properties --------------------------------------------------------------------------

JSONISH = '{}[]()":,=\n \t-*`\'abcAB_019.eE#>'


@settings(max_examples=500, deadline=None)
@given(
    report=st.text(alphabet=st.sampled_from(list(JSONISH)), max_size=300)
    | st.text(max_size=300),
    keys=st.lists(st.text(max_size=12), max_size=5),
)
def test_parse_report_never_raises(report, keys):
    parsed = parse_report(report, keys)
    assert set(parsed.fields) == {k for k in keys if k}
    assert parsed.method in ("json", "lines", "none")


key_names = st.from_regex(r"[a-z][a-z0-9]{0,10}(_[a-z0-9]{1,5})?", fullmatch=True)
json_scalars = (
    st.none() | st.booleans() | st.integers(-10**12, 10**12)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(
    answer=st.dictionaries(key_names, json_values, min_size=1, max_size=5),
    prose=st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=80),
)
def test_a_json_answer_round_trips(answer, prose):
    keys = list(answer)
    if len({normalize_key(k) for k in keys}) < len(keys):
        return  # keys equal under lenient matching are ambiguous by design
    report = f"{prose}\n```json\n{json.dumps(answer)}\n```\n{prose}"
    parsed = parse_report(report, keys)
    assert parsed.fields == answer
    assert parsed.method == "json"


def test_json_scan_budget_is_reported_and_lines_still_work():
    report = '{"a":1,' * (MAX_FAILED_DECODES + 10) + "\nalpha_rel: 0.5"
    parsed = parse_report(report, KEYS)
    assert any("JSON scan stopped" in n for n in parsed.notes)
    assert parsed.fields["alpha_rel"] == 0.5
