"""Difficulty calibration: solve rates per task from runs, and labels the rates disagree with."""
from collections import defaultdict

from runner.benchmark import catalog
from runner.benchmark.calibration import calibrate, level_medians, script_measures
from runner.core.paths import Environment
from runner.run.records import ResultRecord

ENV = Environment.from_os()


def two_tasks_per_level():
    by_level = defaultdict(list)
    for instance in catalog.select(catalog.load_all(ENV.paths.instances_dir), []):
        tasks = by_level[instance.meta_info.difficulty]
        if instance.task_id not in tasks and len(tasks) < 2:
            tasks.append(instance.task_id)
    return by_level


def records(task, difficulty, scores):
    return [ResultRecord(case_id=f"{task}-{i}", task_id=task, bench_subset="s", difficulty=difficulty, status="solution",
                         score=s, rounds=1, prompt_tokens=0, completion_tokens=0, duration_s=1.0)
            for i, s in enumerate(scores)]


def test_a_task_solved_like_another_level_is_flagged_with_that_level():
    levels = two_tasks_per_level()
    (e1, e2), (m1, m2), (h1, h2) = levels["easy"], levels["medium"], levels["hard"]
    results = (records(e1, "easy", [100] * 4) + records(e2, "easy", [100, 100, 100, 40])
               + records(m1, "medium", [100, 0, 100, 0]) + records(m2, "medium", [100, 100, 0, 0])
               + records(h1, "hard", [0, 0, 0, 99.9]) + records(h2, "hard", [100] * 4)
               + [r.model_copy(update={"status": "infra_error", "score": None}) for r in records(h1, "hard", [0] * 5)])
    instances = [i for i in catalog.load_all(ENV.paths.instances_dir) if i.task_id in {e1, e2, m1, m2, h1, h2}]
    rows = {r.task_id: r for r in calibrate(instances, results, ENV.paths.project_root)}
    # by hand: easy 1.0 and 0.75 (median 0.875), medium 0.5 and 0.5, hard 0.0 and 1.0 (median 0.5)
    assert level_medians(list(rows.values())) == {"easy": 0.875, "medium": 0.5, "hard": 0.5}
    assert rows[h1].runs == 4 and rows[h1].solve_rate == 0.0  # infra errors and 99.9 are not solves
    assert {t for t, r in rows.items() if r.flagged} == {h2}
    assert rows[h2].suggested == "easy"  # |1.0 - 0.875| < |1.0 - 0.5|
    assert not rows[h1].flagged  # 0.0 is as near medium as its own level: a tie keeps the label
    assert rows[e1].script is not None and rows[e1].script.lines > 5


def test_tasks_with_too_few_runs_are_not_judged():
    levels = two_tasks_per_level()
    task = levels["hard"][0]
    instances = [i for i in catalog.load_all(ENV.paths.instances_dir) if i.task_id == task]
    (row,) = calibrate(instances, records(task, "hard", [100, 100]), ENV.paths.project_root)
    assert row.runs == 2 and not row.judged and not row.flagged


def test_script_measures_count_code_lines_and_distinct_calls(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("# a comment\nimport numpy as np\n\n\ndef run(inputs, params):\n"
                      "    x = np.zeros(3)\n    y = np.zeros(4)\n    return {'n': len(x) + abs(len(y))}\n")
    measures = script_measures(script)
    assert (measures.lines, measures.calls) == (5, 3)  # zeros, len, abs


def test_ensemble_spread_is_the_median_relative_spread_over_the_instances():
    from runner.benchmark.calibration import ensemble_spread

    (first,) = catalog.select(catalog.load_all(ENV.paths.instances_dir), ["fa_alpha_relpower-01"])
    assert ensemble_spread([first]) is None  # no ensemble
    made = []
    for values in ({"welch": 1.0, "multitaper": 1.1}, {"welch": 2.0, "multitaper": 2.0}, {"a": 4.0, "b": 5.0}):
        copy = first.model_copy(deep=True)
        copy.reference.ensembles = {"alpha": values, "label": {"a": "x", "b": "x"}}  # categorical ones are left out
        made.append(copy)
    # by hand: 0.1 / 1.05, 0 / 2, 1 / 4.5 -> median 0.0952...
    assert abs(ensemble_spread(made) - 0.1 / 1.05) < 1e-12


def test_plan_steps_measure_the_label_and_say_what_a_task_is_built_like():
    from dataclasses import replace

    from runner.benchmark.calibration import TaskCalibration, _with_suggestions, step_medians

    def row(task, label, steps):
        return TaskCalibration(task_id=task, label=label, instances=5, script=None, runs=0, solved=0, plan_steps=steps)

    rows = [row("e1", "easy", 2), row("e2", "easy", 4), row("m1", "medium", 6), row("m2", "medium", 6),
            row("h1", "hard", 12), row("h2", "hard", 3), row("h3", "hard", 14), row("x", "hard", None)]
    assert step_medians(rows) == {"easy": 3, "medium": 6, "hard": 12}  # by hand
    built = {r.task_id: r.built_like for r in _with_suggestions(rows)}
    assert built == {"e1": None, "e2": None, "m1": None, "m2": None, "h1": None, "h2": "easy", "h3": None, "x": None}
    assert not replace(rows[5], built_like="easy").flagged  # a prompt, not a flag: only solve rates flag


def test_every_task_has_its_kind_plan_steps_and_kept_share():
    rows = calibrate(catalog.select(catalog.load_all(ENV.paths.instances_dir), []), [], ENV.paths.project_root)
    assert all(r.kind in ("recipe", "open", "long_horizon") for r in rows)
    assert all(r.plan_steps and r.plan_steps >= 1 for r in rows)
    assert all(r.bindings is not None and r.bindings >= r.instances for r in rows)
