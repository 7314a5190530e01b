"""Method ensembles: one ground truth from several pipelines, or a rejected binding."""
import pytest

from runner.benchmark.ensemble import EnsembleRejected, EnsembleRule, check_rule, consensus, resolve

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
    with pytest.raises(EnsembleRejected, match=r"spread 0.5 gives tolerance 0.5 > max_tolerance 0.1 \(multitaper 1.5, welch 1.0\)"):
        resolve(RULE, "numeric_check", {"welch": 1.0, "multitaper": 1.5})


def test_a_categorical_answer_must_be_identical_across_the_ensemble():
    assert resolve(RULE, "categorical_check", {"a": "alpha", "b": "alpha"}).value == "alpha"
    with pytest.raises(EnsembleRejected, match="the pipelines disagree: a 'alpha', b 'theta'"):
        resolve(RULE, "categorical_check", {"a": "alpha", "b": "theta"})


def test_a_set_must_be_the_same_set_across_the_ensemble_whatever_its_order():
    found = resolve(RULE, "set_match_check", {"zscore": ["T7", "Fp1"], "corr": ["fp1", "T7"]})
    assert found.value == ["fp1", "T7"] and found.tolerance is None  # the first pipeline by name (corr)
    with pytest.raises(EnsembleRejected, match="the pipelines disagree"):
        resolve(RULE, "set_match_check", {"zscore": ["T7", "Fp1"], "corr": ["T7"]})
    with pytest.raises(ValueError, match="holds lists"):
        resolve(RULE, "set_match_check", {"zscore": "T7", "corr": "T7"})


def test_a_sequence_must_be_the_same_sequence_across_the_ensemble():
    assert resolve(RULE, "sequence_match_check", {"a": ["O1", "O2"], "b": ["O1", "O2"]}).value == ["O1", "O2"]
    with pytest.raises(EnsembleRejected, match="the pipelines disagree"):
        resolve(RULE, "sequence_match_check", {"a": ["O1", "O2"], "b": ["O2", "O1"]})


def test_nothing_hangs_on_the_order_the_pipelines_are_listed_in():
    forward = {"zscore": ["T7", "Fp1"], "corr": ["fp1", "T7"]}
    backward = dict(reversed(list(forward.items())))
    assert resolve(RULE, "set_match_check", forward) == resolve(RULE, "set_match_check", backward)
    assert resolve(RULE, "set_match_check", forward).value == ["fp1", "T7"]  # the first pipeline by name
    assert consensus("set_match_check", backward) == ["fp1", "T7"]
    with pytest.raises(EnsembleRejected) as one:
        resolve(RULE, "numeric_check", {"welch": 1.0, "multitaper": 1.5})
    with pytest.raises(EnsembleRejected) as other:
        resolve(RULE, "numeric_check", {"multitaper": 1.5, "welch": 1.0})
    assert str(one.value) == str(other.value) == (
        "spread 0.5 gives tolerance 0.5 > max_tolerance 0.1 (multitaper 1.5, welch 1.0)")


def test_the_consensus_is_the_ground_truth_resolve_writes():
    values = {"welch": 1.00, "multitaper": 1.04, "welch_hamming": 1.01, "tapers": 1.03}
    assert consensus("numeric_check", values) == resolve(RULE, "numeric_check", values).value == 1.02
    assert consensus("categorical_check", {"a": "N2", "b": "N2"}) == "N2"


@pytest.mark.parametrize("values", [{"only": 1.0}, [1.0, 2.0], {"a": 1.0, "b": "x"}, {"a": 1.0, "b": float("nan")}])
def test_what_is_not_an_ensemble_is_a_script_error_not_a_rejection(values):
    with pytest.raises(ValueError) as caught:
        resolve(RULE, "numeric_check", values)
    assert not isinstance(caught.value, EnsembleRejected)


def test_a_rule_fits_only_the_units_it_can_judge():
    with pytest.raises(ValueError, match="needs max_tolerance"):
        check_rule(EnsembleRule(), "numeric_check")
    with pytest.raises(ValueError, match="not file_status_check"):
        check_rule(RULE, "file_status_check")
    check_rule(EnsembleRule(), "set_match_check")  # agreement needs no tolerance
    with pytest.raises(ValueError, match="min_tolerance is above max_tolerance"):
        EnsembleRule(min_tolerance=1.0, max_tolerance=0.5)
