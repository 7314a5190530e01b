import pytest

from validation.agentbench.aggregate import AnswerRecord, aggregate
from validation.agentbench.answers import run_length
from validation.agentbench.classification import cohen_kappa, macro_f1


def _rec(case, params, answer):
    return AnswerRecord(case_id=case, params=params, answer=answer)


def test_always_ad_on_balanced_t4_and_unparseable_counted():
    labels = ["AD", "FTD", "HC"]
    records = [_rec(f"t4-{i}", {"family": "T4", "labels": labels, "ground_truth": labels[i % 3]}, "AD")
               for i in range(69)]
    metrics = aggregate(records).families["T4"]
    assert metrics.accuracy == pytest.approx(1 / 3, abs=1e-6)
    assert metrics.macro_f1 == pytest.approx(0.166667, abs=1e-6)
    records[1] = records[1].model_copy(update={"answer": "???"})
    assert aggregate(records).families["T4"].instances == 69
    assert aggregate(records).families["T4"].unparseable == 1


def test_t5_paper_case_by_subject_with_silent_free_record():
    positive = {"family": "T5", "ground_truth": [[834, 894], [2378, 2497], [3362, 3425]],
                "duration_s": 3600, "subject": "chb15"}
    free = {"family": "T5", "ground_truth": [], "duration_s": 3600, "subject": "chb15"}
    other = {"family": "T5", "ground_truth": [[100, 150]], "duration_s": 7200, "subject": "chb01"}
    metrics = aggregate([
        _rec("a", positive, [[2354, 2500], [3358, 3426]]),
        _rec("b", free, []),
        _rec("c", other, [[5000, 5100]]),  # a miss and a false alarm
    ]).families["T5"]
    assert metrics.subjects == 2
    assert metrics.event_f1 == pytest.approx((0.8 + 0.0) / 2)
    assert metrics.dice_at_seizure == pytest.approx((0.798246 + 0.0) / 2, abs=1e-6)
    assert metrics.miss_rate == 0.5
    assert metrics.over_alarm_rate == 0.0
    assert metrics.fp_per_24h == pytest.approx((0 + 1 / (7200 / 86400)) / 2)


def test_t5_unparseable_is_wrong_everywhere():
    free = {"family": "T5", "ground_truth": [], "duration_s": 3600, "subject": "s"}
    positive = {"family": "T5", "ground_truth": [[10, 20]], "duration_s": 3600, "subject": "s"}
    metrics = aggregate([_rec("a", free, None), _rec("b", positive, "seizure at 10 s")]).families["T5"]
    assert metrics.unparseable == 2
    assert metrics.over_alarm_rate == 1.0
    assert metrics.miss_rate == 1.0
    assert metrics.event_f1 == 0.0


def test_t6_missing_hypnogram_is_all_wake_and_overall():
    labels = ["W", "W", "N1", "N2", "N2", "N3", "REM", "W"]
    params = {"family": "T6", "ground_truth": run_length(labels), "n_epochs": len(labels)}
    t1 = {"family": "T1", "labels": ["A", "B", "C", "D"], "ground_truth": "A",
          "options": {"A": "x", "B": "y", "C": "z", "D": "w"}}
    result = aggregate([_rec("s1", params, run_length(labels)), _rec("s2", params, None),
                        _rec("q1", t1, "A")])
    t6 = result.families["T6"]
    assert t6.unparseable == 1
    assert t6.recording_kappa == pytest.approx(0.5)  # 1 and 0 (all wake)
    stages = ["W", "N1", "N2", "N3", "REM"]
    pooled_truth, pooled_pred = labels * 2, labels + ["W"] * len(labels)
    assert t6.macro_f1 == pytest.approx(macro_f1(pooled_truth, pooled_pred, stages), abs=1e-6)
    assert t6.kappa == pytest.approx(cohen_kappa(pooled_truth, pooled_pred, stages), abs=1e-6)
    assert result.overall_families == 2
    assert result.overall == pytest.approx((1.0 + t6.macro_f1) / 2, abs=1e-6)


def test_t6_perfect_staging_scores_one_even_when_a_record_lacks_stages():
    short = ["W", "N2", "N2", "W"]  # no N1, N3 or REM in this record
    full = ["W", "N1", "N2", "N3", "REM"]
    records = [_rec(name, {"family": "T6", "ground_truth": run_length(x), "n_epochs": len(x)},
                    run_length(x)) for name, x in (("a", short), ("b", full))]
    t6 = aggregate(records).families["T6"]
    assert (t6.macro_f1, t6.kappa, t6.recording_macro_f1, t6.recording_kappa) == (1.0, 1.0, 1.0, 1.0)


def test_t5_subject_without_any_event_is_left_out_of_the_mean():
    positive = {"family": "T5", "ground_truth": [[100, 150]], "duration_s": 3600, "subject": "a"}
    free = {"family": "T5", "ground_truth": [], "duration_s": 3600, "subject": "b"}
    silent = aggregate([_rec("p", positive, [[100, 150]]), _rec("f", free, [])]).families["T5"]
    assert silent.event_f1 == 1.0 and silent.subjects == 2
    alarm = aggregate([_rec("p", positive, [[100, 150]]), _rec("f", free, [[5, 9]])]).families["T5"]
    assert alarm.event_f1 == 0.5  # subject b: one false alarm, F1 0
    assert alarm.over_alarm_rate == 1.0
