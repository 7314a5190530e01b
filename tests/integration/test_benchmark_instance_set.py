"""The committed instance set is a benchmark: big enough, covering every subset, difficulty
and unit type, described by current manifests, and never rewarding a fixed guess."""
from __future__ import annotations

import json

import pytest

from runner.benchmark import catalog
from runner.benchmark.truth import SUBSET_SLUGS
from tests.integration.conftest import PROJECT_ROOT
from validation.baseline import OVERALL_FLOOR_LIMIT, TASK_FLOOR_LIMIT, task_baselines, task_floors
from validation.instance import SUBSETS

DETERMINISTIC_TYPES = {"numeric_check", "categorical_check", "set_match_check", "sequence_match_check"}
SEMANTIC_TYPES = {"semantic_consistency", "factual_qa_check", "safety_compliance"}
REQUIRED_TYPES = {"numeric_check", "categorical_check", "set_match_check", "sequence_match_check",
                  "file_status_check"}


@pytest.fixture(scope="module")
def instances():
    return catalog.select(catalog.load_all(), [])  # the default (BrainBench) benchmark


def test_size_and_coverage(instances):
    tasks = {i.task_id for i in instances}
    assert len(tasks) >= 80, f"{len(tasks)} tasks"
    assert len(instances) >= 1000, f"{len(instances)} instances"
    assert {i.meta_info.bench_subset for i in instances} == set(SUBSETS)
    for subset in SUBSETS:
        mine = [i for i in instances if i.meta_info.bench_subset == subset]
        assert len({i.task_id for i in mine}) >= 15, subset
        assert {i.meta_info.difficulty for i in mine} == {"easy", "medium", "hard"}, subset
    types = {m.type for i in instances for m in i.eval_config.metrics}
    assert REQUIRED_TYPES <= types, f"missing unit types: {sorted(REQUIRED_TYPES - types)}"
    assert types & SEMANTIC_TYPES, "no semantic unit (judge prompt + reference conclusion)"


def test_every_task_has_several_instances_and_a_deterministic_unit(instances):
    by_task: dict[str, list] = {}
    for inst in instances:
        by_task.setdefault(inst.task_id, []).append(inst)
    thin = sorted(t for t, items in by_task.items() if len(items) < 5)
    assert not thin, f"tasks with fewer than 5 instances: {thin}"
    blind = sorted(t for t, items in by_task.items()
                   if not any(m.type in REQUIRED_TYPES - {"file_status_check"}
                              for m in items[0].eval_config.metrics))
    assert not blind, f"tasks the oracle cannot score today (no deterministic unit): {blind}"


def test_no_task_rewards_a_constant_answer(instances):
    violations = [
        f"{m.task_id}.{m.metric_id}: baseline {m.baseline:.3f} > chance {m.chance:.3f} "
        f"(always {json.dumps(m.best_answer)[:40]})"
        for task in task_baselines(instances) for m in task.violations
    ]
    assert not violations, "constant-answer baseline above chance:\n" + "\n".join(violations)


# Tasks whose best constant answer scores above TASK_FLOOR_LIMIT (may only shrink). The open
# staging task asks two three-way stage labels, each balanced over N2, N3 and REM (WAKE and N1
# never dominate, and stagings agree on no WAKE epoch, in this nap excerpt): 1/3 by design.
KNOWN_HIGH_FLOORS = {"sa_psg_stage_window_open"}


def test_the_best_constant_answer_scores_at_most_30_per_task_and_15_overall(instances):
    floors = task_floors(instances, task_baselines(instances))
    high = {task for task, floor in floors.items() if floor > TASK_FLOOR_LIMIT}
    assert high == KNOWN_HIGH_FLOORS, {task: floors[task] for task in high ^ KNOWN_HIGH_FLOORS}
    overall = sum(floors.values()) / len(floors)
    assert overall <= OVERALL_FLOOR_LIMIT, f"overall floor {overall:.2f}"


def test_every_categorical_unit_declares_its_label_set(instances):
    undeclared = sorted({
        f"{i.task_id}.{m.metric_id}" for i in instances for m in i.eval_config.metrics
        if m.type == "categorical_check" and not (m.params.get("classes") or m.params.get("classes_param"))
    })
    assert not undeclared, f"categorical units without params.classes: {undeclared}"


def test_manifests_describe_the_committed_instances(instances):
    for subset in SUBSETS:
        path = PROJECT_ROOT / "instances" / "manifests" / f"{SUBSET_SLUGS[subset]}.json"
        assert path.is_file(), f"{path} missing: run `eegbench truth`"
        expected = catalog.manifest_text(catalog.subset_manifest(subset, instances))
        assert path.read_text() == expected, f"{path.name} is stale: run `eegbench truth`"


def test_a_quarter_of_the_tasks_are_open_or_long_horizon(instances):
    kinds = {i.task_id: i.meta_info.kind for i in instances}
    assert None not in kinds.values(), sorted(t for t, k in kinds.items() if k is None)
    beyond_recipes = sum(k in ("open", "long_horizon") for k in kinds.values())
    assert beyond_recipes >= len(kinds) / 4, f"{beyond_recipes} of {len(kinds)} tasks are open or long-horizon"
    assert "open" in kinds.values() and "long_horizon" in kinds.values()


def test_open_tasks_take_their_ground_truth_from_method_ensembles(instances):
    """An open task leaves the method to the agent, so no answer of it may hang on one pipeline."""
    single = sorted({
        f"{i.task_id}.{m.metric_id}" for i in instances if i.meta_info.kind == "open"
        for m in i.eval_config.metrics
        if m.type in DETERMINISTIC_TYPES and m.metric_id not in ((i.reference.ensembles or {}) if i.reference else {})
    })
    assert not single, f"open-task metrics without an ensemble: {single}"


def test_long_horizon_tasks_score_the_pipeline_at_several_points(instances):
    short = sorted({i.task_id for i in instances if i.meta_info.kind == "long_horizon"
                    and len(i.eval_config.metrics) < 5})
    assert not short, f"long-horizon tasks with fewer than 5 scored units: {short}"
