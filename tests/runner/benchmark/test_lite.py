"""SET=lite: the published file is what the seeded rule gives, the subset holds every task in
about the whole set's proportions, SET=lite selects it, and it ranks models as the full set does."""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from runner.benchmark import catalog, lite
from runner.report.stats import clustered_standard_error, detectable_difference
from validation.errors import UserError

PROJECT_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def every():
    return catalog.select(catalog.load_all(), [])


def test_the_published_subset_is_what_the_rule_gives(every):
    published = (PROJECT_ROOT / lite.LITE_PATH).read_text(encoding="utf-8")
    assert published == lite.manifest_text(every), "lite.json is stale: run `eegbench instances --lite`"


def test_every_task_is_present_in_the_whole_sets_proportions(every):
    chosen = catalog.select(catalog.load_all(), [catalog.LITE])
    assert 150 <= len(chosen) <= 250
    assert {i.task_id for i in chosen} == {i.task_id for i in every}
    for field in ("bench_subset", "difficulty", "kind"):
        whole = Counter(getattr(i.meta_info, field) for i in every)
        part = Counter(getattr(i.meta_info, field) for i in chosen)
        for value, n in whole.items():
            assert abs(part[value] / len(chosen) - n / len(every)) < 0.05, (field, value)


def test_the_rule_is_seeded_and_keeps_at_least_two_per_task(every):
    chosen = lite.choose(every)
    assert chosen == lite.choose(list(reversed(every)))  # the order instances load in does not matter
    per_task = Counter(c.rsplit("-", 1)[0] for c in chosen)
    assert min(per_task.values()) >= lite.MIN_PER_TASK


def test_a_published_case_missing_from_the_set_is_named(every):
    kept = [i for i in every if i.case_id != lite.read(PROJECT_ROOT)[0]]
    with pytest.raises(UserError, match="SET=lite: 1 published case"):
        catalog.select(kept, ["lite"])


def simulated_scores(every, rng: random.Random, models: int, gap: float) -> list[dict[str, float]]:
    """Per model, case -> 0 or 100: a skill `gap` apart from the next model's, task effects all
    models share, a per-task strength of its own, and an independent draw per instance."""
    tasks = sorted({i.task_id for i in every})
    shared = {t: rng.gauss(0, 0.15) for t in tasks}
    runs = []
    for model in range(models):
        skill = {t: min(1.0, max(0.0, 0.3 + gap * model + shared[t] + rng.gauss(0, 0.05))) for t in tasks}
        runs.append({i.case_id: 100.0 * (rng.random() < skill[i.task_id]) for i in every})
    return runs


def test_lite_ranks_models_as_the_full_set_does_beyond_its_detectable_difference(every):
    """Models further apart than lite's minimum detectable difference (80% power, paired by
    instance, clustered by task: what the report prints) rank alike on lite and on the full set."""
    task_of = {i.case_id: i.task_id for i in every}
    chosen = sorted(lite.read(PROJECT_ROOT))
    for seed in range(5):
        runs = simulated_scores(every, random.Random(seed), models=3, gap=0.2)
        full = [sum(r.values()) / len(r) for r in runs]
        part = [sum(r[c] for c in chosen) / len(chosen) for r in runs]
        for a, b in zip(runs, runs[1:]):
            d = [b[c] - a[c] for c in chosen]
            mdd = detectable_difference(clustered_standard_error(d, [task_of[c] for c in chosen]) or 0.0)
            assert sum(b.values()) / len(b) - sum(a.values()) / len(a) > mdd  # the regime the claim is about
        assert sorted(range(3), key=full.__getitem__) == sorted(range(3), key=part.__getitem__) == list(range(3)), seed


def test_the_manifest_records_the_rule(every):
    written = json.loads(lite.manifest_text(every))
    assert written["rule"] == {"seed": lite.SEED, "target": lite.TARGET, "min_per_task": lite.MIN_PER_TASK}
    assert written["instances"] == len(written["case_ids"]) == sum(written["by_subset"].values())
