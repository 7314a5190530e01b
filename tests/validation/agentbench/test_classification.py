import pytest

from validation.agentbench.classification import accuracy, cohen_kappa, macro_f1, per_class_f1

T4 = ["AD", "FTD", "HC"]


def test_always_ad_on_balanced_t4_gives_paper_macro_f1():
    truth = ["AD"] * 23 + ["FTD"] * 23 + ["HC"] * 23
    guess = ["AD"] * 69
    assert accuracy(truth, guess) == pytest.approx(1 / 3)
    assert macro_f1(truth, guess, T4) == pytest.approx(1 / 6)
    assert round(macro_f1(truth, guess, T4), 3) == 0.167


def test_never_predicted_label_has_f1_zero_and_unparseable_is_a_miss():
    truth = ["AD", "FTD", "HC"]
    guess = ["AD", None, "HC"]  # None: an unparseable answer, kept and wrong
    scores = per_class_f1(truth, guess, T4)
    assert scores == {"AD": 1.0, "FTD": 0.0, "HC": 1.0}
    assert accuracy(truth, guess) == pytest.approx(2 / 3)


def test_kappa_perfect_chance_and_negative():
    labels = ["W", "N2"]
    assert cohen_kappa(["W", "N2", "W", "N2"], ["W", "N2", "W", "N2"], labels) == 1.0
    assert cohen_kappa(["W", "N2", "W", "N2"], ["N2", "W", "N2", "W"], labels) == -1.0
    # all-wake guess on a mixed night: p_o = p_e, kappa 0
    assert cohen_kappa(["W", "W", "N2", "N2"], ["W"] * 4, labels) == 0.0


def test_kappa_degenerate_single_class():
    # p_e = 1: one class fills both sequences; a perfect match scores 1 ...
    assert cohen_kappa(["W"] * 5, ["W"] * 5, ["W", "N1"]) == 1.0


def test_kappa_degenerate_mismatch_scores_zero():
    # ... and a sequence of one class against a reference of another has p_e = 0, p_o = 0
    assert cohen_kappa(["W"] * 5, ["N1"] * 5, ["W", "N1"]) == 0.0
    # a prediction outside the label set never agrees
    assert cohen_kappa(["W"] * 3, ["X"] * 3, ["W", "N1"]) == 0.0
