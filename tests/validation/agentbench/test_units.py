import pytest

import validation.builtin_units  # noqa: F401 (registers the built-in units)
from validation.agentbench.answers import run_length
from validation.agentbench.units import hypnogram_check, interval_events_check, label_check
from validation.errors import MetricConfigError
from validation.unit_registry import UNITS

T1 = {"family": "T1", "ground_truth": "C", "labels": ["A", "B", "C", "D"],
      "options": {"A": "a", "B": "b", "C": "3 Hz spike & wave", "D": "d"}}
T5 = {"family": "T5", "ground_truth": [[834, 894], [2378, 2497], [3362, 3425]],
      "duration_s": 3600, "subject": "chb15"}
T5_FREE = {"family": "T5", "ground_truth": [], "duration_s": 3600, "subject": "chb15"}


def test_units_are_registered():
    assert {"label_check", "interval_events_check", "hypnogram_check"} <= set(UNITS.names())


def test_label_check():
    unit = label_check
    assert unit("(C)", T1).score == 1.0
    assert unit("3 Hz spike & wave", T1).score == 1.0
    assert unit("B", T1).score == 0.0
    assert unit(None, T1).score == 0.0
    t3 = {"family": "T3", "ground_truth": "normal", "labels": ["normal", "epileptic"]}
    assert unit(" Normal", t3).score == 1.0
    with pytest.raises(MetricConfigError):
        unit("x", {**t3, "ground_truth": "ictal"})


def test_interval_unit_is_record_dice():
    unit = interval_events_check
    assert unit([[2354, 2500], [3358, 3426]], T5).score == pytest.approx(0.798246)
    assert unit(T5["ground_truth"], T5).score == 1.0
    assert unit([], T5_FREE).score == 1.0
    assert unit([[10, 20]], T5_FREE).score == 0.0
    assert unit(None, T5_FREE).score == 0.0  # unparseable is not a valid "no seizure"
    with pytest.raises(MetricConfigError):
        unit([], {**T5, "duration_s": 0})


def test_hypnogram_unit_is_floored_kappa():
    labels = ["W"] * 3 + ["N2"] * 4 + ["REM"] * 2 + ["W"]
    params = {"family": "T6", "ground_truth": run_length(labels), "n_epochs": len(labels)}
    unit = hypnogram_check
    assert unit(run_length(labels), params).score == 1.0
    assert unit(None, params).score == 0.0  # all wake: kappa 0
    with pytest.raises(MetricConfigError):
        unit(None, {**params, "n_epochs": 11})
    for bad in ([[0, 4, "W"], [4, 9, "N2"]], [[0, 9, "deep"]], [["0", 9, "W"]], "W" * 10):
        with pytest.raises(MetricConfigError):
            unit(None, {**params, "ground_truth": bad})
