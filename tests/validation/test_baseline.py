"""Constant-answer baselines on hand-made instances, scored with the real unit functions."""
from __future__ import annotations

import pytest

from validation.baseline import metric_baseline, numeric_spread, task_baselines
from validation.instance import Instance


def make(case: str, metrics: list[dict], task: str = "fa_x", params: dict | None = None) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": f"{task}-{case}", "bench_subset": "Foundational Analysis",
                      "task_id": task, "difficulty": "easy"},
        "agent_input": {"data_path": "a.edf", "instruction": "i"},
        "eval_config": {"metrics": metrics},
        "reference": {"script": "s.py", "script_sha256": "0", "params": params or {}},
    })


def categorical(truth, classes=None, **extra) -> dict:
    params = {"ground_truth": truth, **extra}
    if classes is not None:
        params["classes"] = classes
    return {"metric_id": "label", "type": "categorical_check", "target_key": "label",
            "weight": 1.0, "params": params}


def numeric(truth, tolerance=0.5) -> dict:
    return {"metric_id": "value", "type": "numeric_check", "target_key": "value", "weight": 1.0,
            "params": {"ground_truth": truth, "tolerance": tolerance}}


def test_balanced_categorical_is_at_chance():
    labels = ["W", "N1", "N2", "N3", "R"] * 2
    instances = [make(f"{i:02d}", [categorical(x, ["W", "N1", "N2", "N3", "R"])])
                 for i, x in enumerate(labels)]
    (task,) = task_baselines(instances)
    (metric,) = task.metrics
    assert metric.baseline == pytest.approx(0.2) and metric.chance == pytest.approx(0.2)
    assert not metric.violation and task.violations == []
    assert {a.answer: a.count for a in metric.answers} == {x: 2 for x in set(labels)}
    assert metric.chance_source == "classes" and not metric.classes_missing


def test_constant_answer_fails_and_names_the_answer():
    labels = ["N2", "N2", "N2", "N3", "N1"]
    instances = [make(f"{i}", [categorical(x, ["W", "N1", "N2", "N3", "R"])]) for i, x in enumerate(labels)]
    metric = task_baselines(instances)[0].metrics[0]
    assert metric.best_answer == "N2" and metric.baseline == pytest.approx(0.6)
    assert metric.violation
    assert metric.answers[0].answer == "N2" and metric.answers[0].count == 3


def test_categorical_compares_canonical_forms():
    # " a " and "A" are the same answer to the unit: a constant "A" scores on both
    instances = [make("1", [categorical(" a ", ["A", "B"])]), make("2", [categorical("A", ["A", "B"])]),
                 make("3", [categorical("B", ["A", "B"])]), make("4", [categorical("B", ["A", "B"])])]
    metric = task_baselines(instances)[0].metrics[0]
    assert len(metric.answers) == 3  # distinct as written...
    assert metric.baseline == pytest.approx(0.5) and not metric.violation  # ...scored as the unit does


def test_missing_classes_fall_back_to_distinct_answers_and_are_flagged():
    instances = [make(f"{i}", [categorical(x)]) for i, x in enumerate(["A", "B", "A", "B"])]
    metric = task_baselines(instances)[0].metrics[0]
    assert metric.classes_missing and metric.chance == pytest.approx(0.5) and not metric.violation
    # one distinct answer is no excuse: chance is at most 1/2
    same = [make(f"{i}", [categorical("face")]) for i in range(4)]
    metric = task_baselines(same)[0].metrics[0]
    assert metric.chance == pytest.approx(0.5) and metric.baseline == 1.0 and metric.violation


def test_classes_param_uses_each_instance_candidate_list():
    lists = [["a", "b"], ["c", "d", "e", "f"], ["g", "h", "i", "j"], ["k", "l", "m", "n"]]
    instances = [make(f"{i}", [categorical(c[0], classes_param="channels")], params={"channels": c})
                 for i, c in enumerate(lists)]
    metric = task_baselines(instances)[0].metrics[0]
    assert metric.chance == pytest.approx((1 / 2 + 3 / 4) / 4)
    assert metric.baseline == pytest.approx(0.25) and not metric.violation


def test_numeric_spread_passes_and_clustered_fails():
    spread = [make(f"{i}", [numeric(v)]) for i, v in enumerate([1, 3, 5, 7, 9, 11, 13, 15, 17, 19])]
    metric = task_baselines(spread)[0].metrics[0]
    assert metric.baseline == pytest.approx(0.1) and metric.chance == 0.2 and not metric.violation
    assert metric.numeric_range == (1.0, 19.0) and numeric_spread(metric) == pytest.approx(36)

    # distinct values, but within one tolerance of each other: a constant 10.3 scores on 3 of 5
    clustered = [make(f"{i}", [numeric(v)]) for i, v in enumerate([10.0, 10.3, 10.6, 20.0, 30.0])]
    metric = task_baselines(clustered)[0].metrics[0]
    assert len(metric.answers) == 5
    assert metric.best_answer == 10.3 and metric.baseline == pytest.approx(0.6) and metric.violation


def test_sequence_latin_square_is_at_chance_and_a_repeated_ranking_is_not():
    labels = ["S1", "S2", "S3", "S4", "S5"]
    square = [[labels[(i + j) % 5] for i in range(5)] for j in range(5)]
    def seq(truth):
        return {"metric_id": "ranking", "type": "sequence_match_check", "target_key": "ranking",
                "weight": 1.0, "params": {"ground_truth": truth}}
    metric = task_baselines([make(f"{j}", [seq(r)]) for j, r in enumerate(square)])[0].metrics[0]
    assert metric.baseline == pytest.approx(0.2) and not metric.violation
    repeated = square[:3] + [square[0], square[0]]
    metric = task_baselines([make(f"{j}", [seq(r)]) for j, r in enumerate(repeated)])[0].metrics[0]
    assert metric.best_answer == square[0] and metric.baseline == pytest.approx(0.6) and metric.violation


def test_set_partial_credit_counts_toward_the_baseline():
    def item(truth):
        return {"metric_id": "chans", "type": "set_match_check", "target_key": "chans", "weight": 1.0,
                "params": {"ground_truth": truth, "match_mode": "per_hit_fraction"}}
    # every reference shares 'Cz' with the others: a constant set earns 1/2 on each
    sets = [["Cz", "A"], ["Cz", "B"], ["Cz", "C"], ["Cz", "D"]]
    metric = task_baselines([make(f"{i}", [item(s)]) for i, s in enumerate(sets)])[0].metrics[0]
    assert metric.baseline == pytest.approx((1 + 0.5 * 3) / 4) and metric.violation


def test_unscored_units_are_skipped_and_tasks_are_grouped():
    artifact = {"metric_id": "file", "type": "file_status_check", "target_key": "file", "weight": 0.5,
                "params": {"ground_truth": {"channel_count": 3}}}
    instances = [make("1", [artifact, numeric(1.0)]), make("2", [artifact, numeric(5.0)]),
                 make("1", [numeric(2.0)], task="fa_y")]
    baselines = task_baselines(instances)
    assert [t.task_id for t in baselines] == ["fa_x", "fa_y"]
    assert [m.metric_id for m in baselines[0].metrics] == ["value"]
    assert baselines[1].metrics[0].violation  # one instance: its own answer is always right


def test_metric_without_ground_truth_names_the_case():
    broken = make("7", [{"metric_id": "value", "type": "numeric_check", "target_key": "v",
                         "weight": 1.0, "params": {"tolerance": 1}}])
    with pytest.raises(ValueError, match="fa_x-7: metric value has no gt_value"):
        metric_baseline("fa_x", "value", [broken])


def test_a_held_out_constant_is_chosen_without_the_case_it_is_scored_on():
    from validation.baseline import held_out_baseline

    distinct = [make(f"{i}", [categorical(x, ["a", "b", "c"])]) for i, x in enumerate("abc")]
    (metric,) = task_baselines(distinct)[0].metrics
    assert metric.baseline == pytest.approx(1 / 3)  # in sample: any answer hits its own case
    assert held_out_baseline(metric, distinct) == 0.0  # no case's answer is another's
    repeated = [make(f"{i}", [categorical(x, ["a", "b"])]) for i, x in enumerate("aab")]
    (metric,) = task_baselines(repeated)[0].metrics
    # each "a" case: the others hold one "a" and one "b", tied; "a" comes first: a hit; the "b" case: "a" wins
    assert held_out_baseline(metric, repeated) == pytest.approx(2 / 3)
    (alone,) = task_baselines(distinct[:1])[0].metrics
    assert held_out_baseline(alone, distinct[:1]) == alone.chance  # nothing to choose from


def test_an_instance_floor_weighs_metrics_as_its_score_does():
    from validation.baseline import instance_floor

    judged = {"metric_id": "text", "type": "semantic_consistency", "target_key": "text", "weight": 1.0,
              "params": {"gt_value": "x", "judge_prompt": "same reading?"}}
    instance = make("01", [categorical("a", ["a", "b"]), judged])
    levels = {"fa_x": {"label": (0.5, 0.6)}}
    assert instance_floor(instance, levels) == pytest.approx((25.0, 30.0))  # the judge unit counts 0
    assert instance_floor(instance, levels, unscored=["text"]) == pytest.approx((50.0, 60.0))  # left out


def test_a_task_floor_is_the_mean_over_its_instances_of_what_the_best_constants_score():
    from validation.baseline import task_floors

    # a refusal-style task: the label on two instances, the value on four (one metric each)
    label_only = [make(f"{i}", [categorical(x, ["a", "b"])]) for i, x in enumerate("ab")]
    value_only = [make(f"{i + 2}", [numeric(v)]) for i, v in enumerate([1.0, 5.0, 9.0, 13.0])]
    instances = label_only + value_only + [make("01", [categorical("a", ["a"])], task="sa_y")]
    floors = task_floors(instances, task_baselines(instances))
    # label: a constant is right on one of two (0.5); value: on one of four (0.25)
    assert floors == {"fa_x": pytest.approx(100 * (2 * 0.5 + 4 * 0.25) / 6), "sa_y": pytest.approx(100.0)}
