"""The deterministic validation units against hand-computed values (BrainBench semantics)."""
import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validation.errors import MetricConfigError
from validation.units import (
    categorical_check,
    numeric_check,
    sequence_match_check,
    set_match_check,
)


def num(pred, gt, tol=None):
    params = {"ground_truth": gt} if tol is None else {"ground_truth": gt, "tolerance": tol}
    return numeric_check(pred, params).score


# --- numeric -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "pred, gt, tol, expected",
    [
        (0.4, 0.3, 0.1, 1.0),  # exactly at tolerance (binary floats: 0.10000000000000003)
        (0.2, 0.3, 0.1, 1.0),  # exactly at tolerance, below
        (0.4000001, 0.3, 0.1, 0.0),
        (-0.5, -0.45, 0.05, 1.0),
        (12, 12.0, 0, 1.0),
        (5, 5, None, 1.0),  # no tolerance: exact
        (5.000001, 5, None, 0.0),
        (0.1 + 0.2, 0.3, 0, 0.0),  # tolerance 0 really means equal
        ("12.3", 12.3, 0, 1.0),
        ("12.3 Hz", 12.3, 0, 1.0),
        ("12.3Hz", 12.0, 0.3, 1.0),
        ("25%", 25, 0, 1.0),
        ("2.1 uV^2/Hz", 2.1, 0, 1.0),
        ("1e-3", 0.001, 0, 1.0),
        ("-.5", -0.5, 0, 1.0),
        ("\u22120.5", -0.5, 0, 1.0),  # typographic minus
        ("12.3 ± 0.4", 12.3, 1, 0.0),  # more than one number: not read
        ("about 12", 12, 1, 0.0),
        ("1,234", 1234, 0, 0.0),  # thousands separator is ambiguous: not read
        ("", 0, 1, 0.0),
        ("nan", 0, 1, 0.0),
        ("inf", 0, 1, 0.0),
        (float("nan"), 0, 1e9, 0.0),
        (float("inf"), 0, 1e9, 0.0),
        (float("-inf"), 0, 1e9, 0.0),
        (10**400, 0, 1e9, 0.0),  # beyond float range
        ("1e400", 0, 1e9, 0.0),
        (True, 1, 0, 0.0),  # booleans are not numbers
        (False, 0, 0.5, 0.0),
        ([0.25], 0.25, 0.1, 0.0),  # a list is not a scalar, even with one element
        ({"value": 0.25}, 0.25, 0.1, 0.0),
        (None, 0.25, 0.1, 0.0),
    ],
)
def test_numeric_check(pred, gt, tol, expected):
    assert num(pred, gt, tol) == expected


def test_numeric_detail_says_why():
    assert "missing" in numeric_check(None, {"ground_truth": 1}).detail
    assert "not finite" in numeric_check(float("nan"), {"ground_truth": 1}).detail
    assert "boolean" in numeric_check(True, {"ground_truth": 1}).detail
    assert "<= tolerance 0.1" in numeric_check(0.4, {"ground_truth": 0.3, "tolerance": 0.1}).detail


def test_numeric_reads_brainbench_gt_value():
    assert numeric_check(0.5, {"gt_value": 0.5, "tolerance": 0.000001}).score == 1.0


@pytest.mark.parametrize(
    "params",
    [
        {"tolerance": 0.1},  # no ground truth
        {"ground_truth": float("nan")},
        {"ground_truth": None},
        {"ground_truth": "12 Hz"},  # a reference value carries no unit
        {"ground_truth": True},
        {"ground_truth": 1, "tolerance": -0.1},
        {"ground_truth": 1, "tolerance": "wide"},
        {"ground_truth": 1, "tolerance": float("inf")},
    ],
)
def test_numeric_bad_params_raise(params):
    with pytest.raises(MetricConfigError):
        numeric_check(1, params)


# --- categorical -------------------------------------------------------------------------

@pytest.mark.parametrize(
    "pred, gt, expected",
    [
        ("alpha", "alpha", 1.0),
        (" Alpha\n", "alpha", 1.0),
        ("ALPHA", "Alpha", 1.0),
        ("alpha band", "alpha", 0.0),
        ("N 2", "N2", 0.0),  # internal spaces matter for labels (only set/sequence drop them)
        (1.0, 1, 1.0),
        ("1.0", 1, 1.0),
        ("1e0", "1", 1.0),
        (0.1 + 0.2, 0.3, 1.0),  # 12 significant digits
        (True, "true", 1.0),
        (True, 1, 0.0),
        (None, "alpha", 0.0),
        ("None", "alpha", 0.0),
        (["alpha"], "alpha", 0.0),
        ("", "alpha", 0.0),
    ],
)
def test_categorical_check(pred, gt, expected):
    assert categorical_check(pred, {"ground_truth": gt}).score == expected


def test_categorical_list_truth_raises():
    with pytest.raises(MetricConfigError):
        categorical_check("a", {"ground_truth": ["a", "b"]})


# --- set ---------------------------------------------------------------------------------

def sets(pred, gt, **params):
    return set_match_check(pred, {"ground_truth": gt, **params}).score


@pytest.mark.parametrize(
    "pred, expected",
    [
        (["Oz", "O1"], 1.0),
        (["o1", " OZ "], 1.0),
        (["O 1", "Oz"], 1.0),  # internal spaces dropped from elements
        (["O1", "O1", "Oz"], 1.0),  # duplicates collapse
        (["O1"], 0.0),
        (["O1", "Oz", "Pz"], 0.0),
        ("O1, Oz", 1.0),
        ("O1; Oz", 1.0),
        ('["O1", "Oz"]', 1.0),
        ("[O1, 'Oz']", 1.0),
        ([], 0.0),
        (None, 0.0),
        ({"O1": 1, "Oz": 2}, 0.0),
    ],
)
def test_set_exact(pred, expected):
    assert sets(pred, ["O1", "Oz"]) == expected


def test_set_numbers_are_canonical():
    assert sets([1.0, "2"], [1, 2]) == 1.0
    assert sets(5, [5]) == 1.0  # a scalar is a one-element collection


def test_set_per_hit_fraction():
    gt = ["A", "B", "C", "D"]
    assert sets(["A", "B", "X"], gt, match_mode="per_hit_fraction") == 0.5
    assert sets(["A", "B", "C", "D", "X", "Y"], gt, match_mode="per_hit_fraction") == 1.0
    assert sets(["A", "B", "C"], gt, match_mode="per_hit_fraction", score_per_hit=0.4) == 1.0
    assert sets(["A"], gt, match_mode="per_hit_fraction", score_per_hit=0.4) == 0.4


def test_set_top_k_cuts_before_deduplication():
    gt = ["A", "B", "C", "D"]
    assert sets(["X", "A", "B"], gt, match_mode="per_hit_fraction", top_k=2) == 0.25
    assert sets(["A", "A", "B"], gt, match_mode="per_hit_fraction", top_k=2) == 0.25
    assert sets(["A", "B", "C"], ["A", "B"], top_k=2) == 1.0
    assert sets(["C", "A", "B"], ["A", "B"], top_k=2) == 0.0
    assert sets(["A", "B", "C"], ["A", "B"], top_k=0) == 0.0  # 0: no cut


def test_set_empty_reference():
    assert sets([], []) == 1.0
    assert sets(["A"], []) == 0.0
    assert sets(None, []) == 0.0  # missing is never a match


@pytest.mark.parametrize(
    "params",
    [
        {"ground_truth": ["A"], "match_mode": "fuzzy"},
        {"ground_truth": ["A"], "top_k": -1},
        {"ground_truth": ["A"], "top_k": 1.5},
        {"ground_truth": ["A"], "score_per_hit": -1, "match_mode": "per_hit_fraction"},
        {"ground_truth": {"A": 1}},
        {"ground_truth": None},
        {"match_mode": "exact"},
    ],
)
def test_set_bad_params_raise(params):
    with pytest.raises(MetricConfigError):
        set_match_check(["A"], params)


# --- sequence ----------------------------------------------------------------------------
# Default weights for 3 positions: 1, 1/2, 1/3 (sum 11/6).

def seq(pred, gt, **params):
    return sequence_match_check(pred, {"ground_truth": gt, **params}).score


ABC = ["A", "B", "C"]


@pytest.mark.parametrize(
    "pred, params, expected",
    [
        (ABC, {}, 1.0),
        (["a", " b", "C "], {}, 1.0),
        (["B", "A", "C"], {}, 0.181818),  # only C in place: (1/3)/(11/6) = 2/11
        (["B", "A", "C"], {"allow_order_slip": 1}, 0.590909),  # (1/2+1/4+1/3)/(11/6) = 13/22
        (["C", "B", "A"], {}, 0.272727),  # B in place: (1/2)/(11/6) = 3/11
        (["C", "B", "A"], {"allow_order_slip": 2}, 0.515152),  # (1/3+1/2+1/9)/(11/6) = 17/33
        (["A", "C"], {}, 0.363636),  # coverage 2/3 x position 6/11 = 4/11
        (["A", "X"], {}, 0.181818),  # coverage 1/3 x 6/11 = 2/11
        (["A", "X"], {"min_overlap": 2}, 0.0),
        ([], {"min_overlap": 0}, 0.0),
        (["B", "A", "C"], {"position_weights": [1, 1, 1]}, 0.333333),
        (["A", "A", "B", "C"], {}, 1.0),  # duplicates: first occurrence kept
        (["A", "B", "C", "D"], {}, 1.0),  # top_k defaults to len(gt): extra tail cut
        (["A", "B"], {"top_k": 2}, 1.0),  # reference cut to its first 2 as well
        ("A, B, C", {}, 1.0),
        ("A > B > C", {}, 0.0),  # not a list separator: one element 'a>b>c'
        (None, {}, 0.0),
        ({"A": 1}, {}, 0.0),
    ],
)
def test_sequence_weighted_partial_order(pred, params, expected):
    assert seq(pred, ABC, **params) == expected


def test_sequence_exact_order():
    assert seq(ABC, ABC, match_mode="exact_order") == 1.0
    assert seq(["A", "C", "B"], ABC, match_mode="exact_order") == 0.0
    assert seq(["A", "B"], ABC, match_mode="exact_order") == 0.0
    assert seq(["A", "B", "C", "D"], ABC, match_mode="exact_order") == 1.0  # cut to top_k=3
    assert seq(["A", "B", "C", "D"], ABC, match_mode="exact_order", top_k=4) == 0.0
    assert seq([], [], match_mode="exact_order") == 1.0
    assert seq(["A"], [], match_mode="exact_order") == 0.0


def test_sequence_positionwise():
    gt = ["W", "N1", "N2", "N2"]
    mode = {"match_mode": "per_hit_fraction_order"}
    assert seq(["W", "N2", "N2", "N2"], gt, **mode) == 0.75  # no deduplication here
    assert seq(["W"], gt, **mode) == 0.25
    assert seq(["w", "n 1", "N2", "N2", "R"], gt, **mode) == 1.0
    assert seq("W, N1, N2, N2", gt, **mode) == 1.0
    assert seq(None, gt, **mode) == 0.0


@pytest.mark.parametrize(
    "params",
    [
        {"ground_truth": ABC, "match_mode": "fuzzy"},
        {"ground_truth": ABC, "position_weights": [1, 1]},
        {"ground_truth": ABC, "position_weights": [1, -1, 1]},
        {"ground_truth": ABC, "position_weights": [0, 0, 0]},
        {"ground_truth": ABC, "position_weights": "1,1,1"},
        {"ground_truth": ABC, "allow_order_slip": -1},
        {"ground_truth": ABC, "min_overlap": 1.5},
        {"ground_truth": ABC, "top_k": 0},
        {"ground_truth": None},
    ],
)
def test_sequence_bad_params_raise(params):
    with pytest.raises(MetricConfigError):
        sequence_match_check(ABC, params)


# --- any prediction, never an exception ------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=15,
)
PARAMS = [
    (numeric_check, {"ground_truth": 1.5, "tolerance": 0.5}),
    (categorical_check, {"ground_truth": "alpha"}),
    (set_match_check, {"ground_truth": ["A", 1], "match_mode": "per_hit_fraction", "top_k": 2}),
    (sequence_match_check, {"ground_truth": ["A", "B", 3], "allow_order_slip": 1}),
    (sequence_match_check, {"ground_truth": ["A", "B"], "match_mode": "per_hit_fraction_order"}),
]


@settings(max_examples=300, deadline=None)
@given(pred=json_values)
def test_units_score_any_prediction_within_bounds(pred):
    for unit, params in PARAMS:
        outcome = unit(pred, params)
        assert outcome.scored
        assert 0.0 <= outcome.score <= 1.0 and not math.isnan(outcome.score)


def test_long_hostile_predictions_score_quickly():
    hostile = [
        "a" + " " * 100_000 + "b", "9" * 10_000 + "x y", "a, " * 50_000, "\t" * 100_000 + ",",
    ]
    for pred in hostile:
        for unit, params in PARAMS:
            start = time.perf_counter()
            outcome = unit(pred, params)
            assert time.perf_counter() - start < 1.0
            assert len(outcome.detail) < 1_000


def test_explicit_null_order_params_are_config_errors():
    """An explicit null min_overlap or allow_order_slip is a broken instance (it used to be a TypeError)."""
    with pytest.raises(MetricConfigError, match="min_overlap"):
        sequence_match_check(["a"], {"ground_truth": ["a", "b"], "min_overlap": None})
    with pytest.raises(MetricConfigError, match="allow_order_slip"):
        sequence_match_check(["a"], {"ground_truth": ["a", "b"], "allow_order_slip": None})
    # without overlap the slip is never used: scored as before
    assert sequence_match_check(["z"], {"ground_truth": ["a", "b"], "allow_order_slip": None}).score == 0.0
