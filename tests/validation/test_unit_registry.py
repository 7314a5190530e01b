"""The metric-unit registry: one registration adds a metric type everywhere, and is removable.

The toy unit below is registered by one call, here, and nothing else is edited: instances
using it validate, score through score_instance, have their params checked, get a
constant-answer baseline from its chance rule, and truth generation checks its reference type.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from pydantic import ValidationError

from runner.benchmark import ensemble, sensitivity
from runner.benchmark.truth import TaskSpec, TruthError, assemble_instance
from validation.baseline import task_baselines
from validation.builtin_units import BUILTIN_UNITS
from validation.errors import InstanceError, MetricConfigError, ScoringError, UserError
from validation.instance import Instance, Reference
from validation.scoring import check_instance_metrics, score_instance
from validation.unit import Chance, ChanceCase, Unit, UnitOutcome, fail, ground_truth, ignoring_context
from validation.unit_registry import UNITS

TOY = "toy_parity_check"


def parity_check(predicted: Any, params: Mapping[str, Any]) -> UnitOutcome:
    """1 when the prediction is an integer of the reference's parity."""
    truth = ground_truth(params)
    if isinstance(truth, bool) or not isinstance(truth, int):
        raise MetricConfigError(f"ground_truth must be an integer, got {truth!r}")
    if isinstance(predicted, bool) or not isinstance(predicted, int):
        return fail("prediction is not an integer")
    same = predicted % 2 == truth % 2
    return UnitOutcome(score=1.0 if same else 0.0, detail="same parity" if same else "other parity")


def half_chance(cases: Sequence[ChanceCase], distinct_answers: int) -> Chance:
    return Chance(0.5, "two parities")


def parity(value: Any) -> str:
    """Two pipelines agree when their answers have the same parity."""
    return "even" if value % 2 == 0 else "odd"


TOY_UNIT = Unit(name=TOY, score=ignoring_context(parity_check), deterministic=True,
                ground_truth_types=(int,), chance=half_chance, ensemble="agree", answer_key=parity)


@contextmanager
def registered(unit: Unit) -> Iterator[Unit]:
    UNITS.register(unit.name, unit)
    try:
        yield unit
    finally:
        UNITS.unregister(unit.name)


def instance(truth: Any, case: str = "01", task: str = "fa_toy") -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": f"{task}-{case}", "bench_subset": "Foundational Analysis", "task_id": task},
        "agent_input": {"data_path": "a.edf", "instruction": "Odd or even?"},
        "eval_config": {"metrics": [{"metric_id": "parity", "type": TOY, "target_key": "n", "weight": 1.0,
                                     "params": {"ground_truth": truth}}]},
    })


def task_spec() -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": "fa_toy", "bench_subset": "Foundational Analysis", "difficulty": "easy",
        "difficulty_reason": "toy", "kind": "recipe", "original_dataset": "none", "script": "reference_scripts/toy.py",
        "instruction": "Odd or even?", "parser_prompt": "",
        "metrics": [{"metric_id": "parity", "type": TOY, "target_key": "n", "weight": 1.0}],
        "bindings": [{"case": "01", "data_path": "a.edf"}],
    })


def test_a_registered_toy_unit_works_everywhere_and_is_gone_afterwards():
    assert TOY not in UNITS
    with pytest.raises(ValidationError, match="unknown metric type 'toy_parity_check'"):
        instance(4)

    with registered(TOY_UNIT):
        assert TOY in UNITS.names() and UNITS.get(TOY) is TOY_UNIT
        inst = instance(4)  # MetricSpec reads the registry when it validates

        assert score_instance(inst, '{"n": 10}').score == 100.0
        assert score_instance(inst, '{"n": 7}').score == 0.0
        assert score_instance(inst, "nothing").score == 0.0
        assert check_instance_metrics(inst) == []
        broken = instance("four")
        assert check_instance_metrics(broken) == ["fa_toy-01: metric parity (toy_parity_check): "
                                                  "ground_truth must be an integer, got 'four'"]
        with pytest.raises(ScoringError, match="fa_toy-01: metric parity"):
            score_instance(broken, '{"n": 1}')

        (task,) = task_baselines([instance(n, f"{n:02d}") for n in (1, 2, 3, 4)])
        (metric,) = task.metrics
        assert (metric.type, metric.chance, metric.chance_source) == (TOY, 0.5, "two parities")
        assert metric.baseline == 0.5 and not metric.violation

        spec = task_spec()
        reference = Reference(script="reference_scripts/toy.py", script_sha256="0")
        made = assemble_instance(spec, spec.bindings[0], reference, {"n": 3})
        assert made.eval_config.metrics[0].params["gt_value"] == 3
        with pytest.raises(TruthError, match=r"toy_parity_check\) got ground truth '3'"):
            assemble_instance(spec, spec.bindings[0], reference, {"n": "3"})

        # an open task's pipelines agree as the unit says, and mutants are scored on it
        rule = ensemble.EnsembleRule()
        ensemble.check_rule(rule, TOY)
        assert TOY in ensemble.ensemble_types() and sensitivity.is_field_type(TOY)
        assert ensemble.resolve(rule, TOY, {"welch": 5, "multitaper": 3}).value == 3  # pipelines by name
        with pytest.raises(ensemble.EnsembleRejected, match="disagree"):
            ensemble.resolve(rule, TOY, {"welch": 4, "multitaper": 3})

    assert TOY not in UNITS.names()
    with pytest.raises(ValidationError, match="unknown metric type"):
        instance(4)


def test_registering_a_name_twice_raises_and_keeps_the_first():
    with registered(TOY_UNIT):
        with pytest.raises(ValueError, match="registered twice"):
            UNITS.register(TOY, Unit(name=TOY, score=ignoring_context(parity_check), deterministic=True))
        assert UNITS.get(TOY) is TOY_UNIT
    with pytest.raises(ValueError, match="registered twice"):
        UNITS.register(BUILTIN_UNITS[0].name, BUILTIN_UNITS[0])


def test_unknown_type_is_a_config_error_naming_the_known_ones():
    with pytest.raises(MetricConfigError, match="unknown metric type 'nope'; expected one of .*numeric_check"):
        UNITS.get("nope")


def test_only_deterministic_units_have_a_chance_rule():
    with pytest.raises(ValueError, match="only a deterministic unit"):
        Unit(name="toy_judge", score=ignoring_context(parity_check), deterministic=False, chance=half_chance)
    for unit in UNITS.items():
        assert unit.chance is None or unit.deterministic, unit.name


def test_check_params_rejects_broken_params_of_every_builtin_unit():
    for unit in BUILTIN_UNITS:
        broken = {"check": "no_such_check"} if unit.name == "file_status_check" else {}
        with pytest.raises(MetricConfigError):
            unit.check_params(broken)


def test_builtin_vocabulary_is_brainbench_and_eegagentbench():
    assert UNITS.names()[: len(BUILTIN_UNITS)] == (
        "numeric_check", "categorical_check", "set_match_check", "sequence_match_check",
        "file_status_check", "semantic_consistency", "safety_compliance", "factual_qa_check",
        "label_check", "interval_events_check", "hypnogram_check")
    truth_types = {u.name: u.ground_truth_types for u in BUILTIN_UNITS if u.ground_truth_types}
    assert truth_types == {"numeric_check": (int, float), "categorical_check": (str, int),
                           "set_match_check": (list,), "sequence_match_check": (list,),
                           "file_status_check": (dict,)}
    assert [u.name for u in BUILTIN_UNITS if u.chance] == [
        "numeric_check", "categorical_check", "set_match_check", "sequence_match_check", "label_check"]
    assert [u.name for u in BUILTIN_UNITS if u.reasoned_params] == ["numeric_check"]
    assert {u.name: u.ensemble for u in BUILTIN_UNITS if u.ensemble} == {
        "numeric_check": "median", "categorical_check": "agree", "set_match_check": "agree",
        "sequence_match_check": "agree", "label_check": "agree"}


@pytest.mark.parametrize("error", [MetricConfigError, InstanceError, ScoringError])
def test_validation_errors_are_user_errors_and_value_errors(error):
    assert issubclass(error, UserError) and issubclass(error, ValueError)
