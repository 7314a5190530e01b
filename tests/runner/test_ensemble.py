"""Method ensembles: one ground truth from several pipelines, or a rejected binding."""
import pytest

from runner.ensemble import EnsembleRejected, EnsembleRule, check_rule, resolve

RULE = EnsembleRule(spread_factor=1.0, min_tolerance=0.01, max_tolerance=0.1)


def test_agreeing_pipelines_give_the_median_and_a_tolerance_from_their_spread():
    found = resolve(RULE, "numeric_check", {"welch": 1.00, "multitaper": 1.04, "welch_hamming": 1.01})
    assert found.value == 1.01 and found.tolerance == 0.04  # by hand: spread 1.04 - 1.00
    assert found.values == {"welch": 1.00, "multitaper": 1.04, "welch_hamming": 1.01}


def test_an_even_count_gives_the_midpoint_without_float_noise_and_the_floor_tolerance():
    found = resolve(RULE, "numeric_check", {"a": 0.1, "b": 0.2})
    assert found.value == 0.15 and found.tolerance == 0.1  # spread 0.1 (float noise rounded away)
    assert resolve(RULE, "numeric_check", {"a": 5, "b": 5}).tolerance == 0.01  # identical: min_tolerance


def test_pipelines_that_disagree_past_max_tolerance_reject_the_binding():
    with pytest.raises(EnsembleRejected, match=r"spread 0.5 gives tolerance 0.5 > max_tolerance 0.1 \(welch 1.0, multitaper 1.5\)"):
        resolve(RULE, "numeric_check", {"welch": 1.0, "multitaper": 1.5})


def test_a_categorical_answer_must_be_identical_across_the_ensemble():
    assert resolve(RULE, "categorical_check", {"a": "alpha", "b": "alpha"}).value == "alpha"
    with pytest.raises(EnsembleRejected, match="the pipelines disagree: a 'alpha', b 'theta'"):
        resolve(RULE, "categorical_check", {"a": "alpha", "b": "theta"})


@pytest.mark.parametrize("values", [{"only": 1.0}, [1.0, 2.0], {"a": 1.0, "b": "x"}, {"a": 1.0, "b": float("nan")}])
def test_what_is_not_an_ensemble_is_a_script_error_not_a_rejection(values):
    with pytest.raises(ValueError) as caught:
        resolve(RULE, "numeric_check", values)
    assert not isinstance(caught.value, EnsembleRejected)


def test_a_rule_fits_only_the_units_it_can_judge():
    with pytest.raises(ValueError, match="needs max_tolerance"):
        check_rule(EnsembleRule(), "numeric_check")
    with pytest.raises(ValueError, match="not set_match_check"):
        check_rule(RULE, "set_match_check")
    with pytest.raises(ValueError, match="min_tolerance is above max_tolerance"):
        EnsembleRule(min_tolerance=1.0, max_tolerance=0.5)
