"""Instance scoring: weighted aggregation, unscored units, missing reports, determinism."""
import json

import pytest

from validation.builtin_units import BUILTIN_UNITS
from validation.instance import Instance, load_instance
from validation.scoring import (
    InstanceScore,
    ScoringError,
    check_instance_metrics,
    score_instance,
)
from validation.unit import ground_truth
from validation.unit_registry import UNITS


def make_instance(metrics, case_id="fa_test-01"):
    return Instance.model_validate({
        "meta_info": {"case_id": case_id, "bench_subset": "Foundational Analysis"},
        "agent_input": {"data_path": "eegmmidb/S001R02.edf", "instruction": "Do it."},
        "eval_config": {"parser_prompt": "", "metrics": metrics},
    })


def metric(metric_id, type_, key, weight, **params):
    return {"metric_id": metric_id, "type": type_, "target_key": key, "weight": weight,
            "params": params}


MIXED = [
    metric("alpha", "numeric_check", "alpha_rel", 0.5, ground_truth=0.25, tolerance=0.02),
    metric("band", "categorical_check", "band", 0.3, ground_truth="alpha"),
    metric("chans", "set_match_check", "channels", 0.2, ground_truth=["O1", "Oz"],
           match_mode="per_hit_fraction"),
]


def test_weighted_score_by_hand():
    report = '```json\n{"alpha_rel": 0.26, "band": "theta", "channels": ["O1", "Pz"]}\n```'
    result = score_instance(make_instance(MIXED), report)
    # 100 * (0.5*1 + 0.3*0 + 0.2*0.5) / (0.5+0.3+0.2) = 60
    assert result.score == 60.0
    assert [m.score for m in result.metrics] == [1.0, 0.0, 0.5]
    assert result.parse_method == "json"
    assert result.all_scored and result.unscored_weight == 0.0
    first = result.metrics[0]
    assert (first.predicted, first.expected, first.weight) == (0.26, 0.25, 0.5)


def test_all_correct_is_100():
    report = "alpha_rel: 0.25\nband: Alpha\nchannels: Oz, O1"
    result = score_instance(make_instance(MIXED), report)
    assert result.score == 100.0
    assert result.parse_method == "lines"


@pytest.mark.parametrize("report", [None, "", "   ", "I could not finish the analysis."])
def test_missing_report_scores_zero_everywhere(report):
    result = score_instance(make_instance(MIXED), report)
    assert result.score == 0.0
    assert [m.score for m in result.metrics] == [0.0, 0.0, 0.0]
    assert all(m.predicted is None for m in result.metrics)
    assert result.fields == {"alpha_rel": None, "band": None, "channels": None}


def test_unscored_units_leave_the_denominator_and_are_flagged():
    metrics = [
        metric("alpha", "numeric_check", "alpha_rel", 0.6, ground_truth=0.25, tolerance=0.02),
        metric("judge", "semantic_consistency", "full_text", 0.4, judge_prompt="Is it right?"),
    ]
    result = score_instance(make_instance(metrics), '{"alpha_rel": 0.25}')
    assert result.score == 100.0  # 100 * 0.6*1 / 0.6
    assert result.unscored_weight == 0.4
    assert result.all_scored is False
    judge = result.metrics[1]
    assert judge.scored is False and judge.score is None and "no judge configured" in judge.detail
    assert result.unscored == ["judge"]
    assert judge.predicted == '{"alpha_rel": 0.25}'  # full_text: the whole report


def test_only_unscored_units_give_no_score():
    metrics = [metric("verdict", "safety_compliance", "full_text", 1.0, judge_prompt="Refused?")]
    result = score_instance(make_instance(metrics), "I cannot do that safely.")
    assert result.score is None
    assert result.unscored_weight == 1.0 and not result.all_scored


def test_brainbench_weights_and_gt_value():
    metrics = [
        metric("m1", "numeric_check", "mean_square", 60, gt_value=0.5, tolerance=0.000001),
        metric("m2", "categorical_check", "label", 40, gt_value="ok"),
    ]
    result = score_instance(make_instance(metrics), '{"mean_square": 0.5000005, "label": "bad"}')
    assert result.score == 60.0  # BrainBench: 60*1 + 40*0 out of 100


def test_rounding_to_six_decimals():
    metrics = [metric("rank", "sequence_match_check", "rank", 1.0, ground_truth=["A", "B", "C"])]
    result = score_instance(make_instance(metrics), '{"rank": ["B", "A", "C"]}')
    assert result.metrics[0].score == 0.181818  # 2/11
    assert result.score == 18.1818  # 100 * 0.181818


def test_deterministic_and_serialisable():
    report = '{"alpha_rel": "0.25 Hz", "band": "ALPHA", "channels": "O1"}'
    first = score_instance(make_instance(MIXED), report).model_dump_json()
    second = score_instance(make_instance(MIXED), report).model_dump_json()
    assert first == second
    again = InstanceScore.model_validate(json.loads(first))
    assert again.score == 90.0  # 100 * (0.5 + 0.3 + 0.2*0.5)


def test_broken_metric_params_raise_with_case_and_metric():
    metrics = [metric("alpha", "numeric_check", "alpha_rel", 1.0, tolerance=0.1)]
    instance = make_instance(metrics, case_id="fa_broken-07")
    with pytest.raises(ScoringError, match=r"fa_broken-07: metric alpha \(numeric_check\)"):
        score_instance(instance, '{"alpha_rel": 1}')
    problems = check_instance_metrics(instance)
    assert len(problems) == 1 and "ground_truth" in problems[0]


def test_check_instance_metrics_accepts_a_valid_instance():
    assert check_instance_metrics(make_instance(MIXED)) == []


def test_every_metric_type_has_exactly_one_unit():
    assert UNITS.names() == tuple(u.name for u in BUILTIN_UNITS)
    assert len(set(UNITS.names())) == len(BUILTIN_UNITS)
    assert all(UNITS.get(u.name) is u for u in BUILTIN_UNITS)


def test_committed_instances_score_their_own_ground_truth_100():
    """Each shipped instance is scorable, and a report stating its ground truth gets 100
    whether written as JSON or as key: value lines; an empty report gets 0. Only the
    report-only units take part here: artifacts and judges have their own tests (and the
    oracle run scores the artifacts for real)."""
    from runner.benchmark.catalog import INSTANCES_DIR, instance_files

    paths = instance_files()
    assert paths, f"no instance files under {INSTANCES_DIR}"
    for path in paths:
        full = load_instance(path)
        assert check_instance_metrics(full) == [], path
        kept = [m for m in full.eval_config.metrics if UNITS.get(m.type).deterministic]
        if not kept:
            continue
        instance = full.model_copy(update={"eval_config": full.eval_config.model_copy(update={"metrics": kept})})
        answer = {m.target_key: ground_truth(m.params) for m in kept}
        as_json = "Final result:\n```json\n" + json.dumps(answer) + "\n```"
        as_lines = "\n".join(f"{k}: {json.dumps(v)}" for k, v in answer.items())
        assert score_instance(instance, as_json).score == 100.0, path
        assert score_instance(instance, as_lines).score == 100.0, path
        assert score_instance(instance, "").score == 0.0, path
