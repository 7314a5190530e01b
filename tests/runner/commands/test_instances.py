"""`eegbench instances`: filtering and rendering on hand-made instances, and the real command
on the committed instance set."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from runner.benchmark import catalog
from runner.commands.instances import (
    filter_instances,
    instances_table,
    stats_table,
    unit_summary,
)
from validation.baseline import task_baselines
from validation.errors import UserError
from validation.instance import Instance

PROJECT = Path(__file__).resolve().parents[3]


def make(task: str, case: str, subset: str, difficulty: str, metrics: list[dict]) -> Instance:
    return Instance.model_validate({
        "meta_info": {"case_id": f"{task}-{case}", "bench_subset": subset, "task_id": task,
                      "difficulty": difficulty},
        "agent_input": {"data_path": "a.edf", "instruction": "i"},
        "eval_config": {"metrics": metrics},
    })


def label(truth, classes=("A", "B"), metric_id="label") -> dict:
    return {"metric_id": metric_id, "type": "categorical_check", "target_key": "label", "weight": 0.5,
            "params": {"ground_truth": truth, "classes": list(classes)}}


def value(truth) -> dict:
    return {"metric_id": "value", "type": "numeric_check", "target_key": "value", "weight": 0.5,
            "params": {"ground_truth": truth, "tolerance": 0.1}}


@pytest.fixture
def instances() -> list[Instance]:
    return [
        make("sa_x", "01", "Sleep Assessment", "easy", [label("A"), value(1.0)]),
        make("sa_x", "02", "Sleep Assessment", "easy", [label("B"), value(2.0)]),
        make("fa_y", "01", "Foundational Analysis", "hard", [label("A"), label("B", metric_id="other")]),
        make("fa_y", "02", "Foundational Analysis", "hard", [label("A"), label("A", metric_id="other")]),
        make("nc_z", "01", "Neurocognitive Assessment", "medium", [value(3.0), value(9.0)]),
    ]


def render(renderable) -> str:
    console = Console(width=250, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_filters_combine_and_accept_names_or_slugs(instances):
    def ids(chosen):
        return [i.case_id for i in chosen]
    assert ids(filter_instances(instances, subsets=["sleep_assessment"])) == ["sa_x-01", "sa_x-02"]
    assert ids(filter_instances(instances, subsets=["Sleep Assessment", "neurocognitive_assessment"])) == \
        ["nc_z-01", "sa_x-01", "sa_x-02"]
    assert ids(filter_instances(instances, tasks=["fa_y"])) == ["fa_y-01", "fa_y-02"]
    assert ids(filter_instances(instances, difficulties=["hard", "medium"])) == ["fa_y-01", "fa_y-02", "nc_z-01"]
    assert ids(filter_instances(instances, subsets=["sleep_assessment"], difficulties=["hard"])) == []
    assert len(filter_instances(instances)) == 5


@pytest.mark.parametrize("kwargs, named", [
    ({"subsets": ["dreams"]}, "subset dreams"),
    ({"tasks": ["sa_nope"]}, "task sa_nope"),
    ({"difficulties": ["trivial"]}, "difficulty trivial"),
])
def test_unknown_filter_value_is_named(instances, kwargs, named):
    with pytest.raises(UserError, match=named):
        filter_instances(instances, **kwargs)


def test_table_lists_case_subset_task_difficulty_units(instances):
    text = render(instances_table(instances))
    assert "5 instance(s)" in text
    row = next(line for line in text.splitlines() if "fa_y-01" in line)
    assert "Foundational Analysis" in row and "hard" in row and "categorical_check x2" in row
    assert unit_summary(instances[0]) == "categorical_check, numeric_check"


def test_stats_table_marks_violations(instances):
    text = render(stats_table(task_baselines(instances)))
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in text.splitlines()
             if line.startswith("│ ")]
    verdicts = {(c[0], c[2]): c[-1] for c in cells}
    assert verdicts[("fa_y", "label")] == "VIOLATION"  # always "A": 1.0 > 1/2
    assert verdicts[("sa_x", "label")] == "ok"  # A once, B once
    assert verdicts[("sa_x", "value")] == "VIOLATION"  # two instances: 1/2 > 0.2
    assert verdicts[("fa_y", "other")] == "ok"
    assert verdicts[("nc_z", "value")] == "VIOLATION"  # one instance: always right
    assert "3 task(s), 3 violation(s)" in text


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner.cli", "instances", *args], check=False, cwd=PROJECT,
                          capture_output=True, text=True, timeout=120)


def test_cli_lists_one_committed_task():
    proc = run_cli("--task", "sa_sleep_metrics", "--difficulty", "easy")
    assert proc.returncode == 0, proc.stderr
    files = sorted((PROJECT / "instances/sleep_assessment").glob("sa_sleep_metrics-*.json"))
    rows = [line for line in proc.stdout.splitlines() if "sa_sleep_metrics-" in line]
    assert len(rows) == len(files) > 0
    assert f"{len(files)} instance(s)" in proc.stdout
    assert all("Sleep Assessment" in r and "numeric_check x2" in r for r in rows)


def test_cli_stats_on_a_balanced_committed_task():
    proc = run_cli("--stats", "--task", "sa_n2n3_fraction")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 violation(s)" in proc.stdout and "epoch_stage" in proc.stdout


def test_cli_rejects_an_unknown_subset():
    proc = run_cli("--subset", "dreams")
    assert proc.returncode == 2 and "subset dreams" in proc.stderr


def test_manifests_are_not_instances(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests/sleep_assessment.json").write_text(json.dumps({"instances": 0}))
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks/sa_x.json").write_text("{}")
    (tmp_path / "sensitivity").mkdir()
    (tmp_path / "sensitivity/sa_x.json").write_text(json.dumps({"task_id": "sa_x", "mutants": {}}))
    (tmp_path / "sleep_assessment").mkdir()
    inst = make("sa_x", "01", "Sleep Assessment", "easy", [value(1.0)])
    (tmp_path / "sleep_assessment/sa_x-01.json").write_text(inst.model_dump_json())
    assert catalog.instance_files(tmp_path) == [tmp_path / "sleep_assessment/sa_x-01.json"]
    assert [i.case_id for i in catalog.load_all(tmp_path)] == ["sa_x-01"]


def test_floors_fail_a_gated_task_above_30_and_a_whole_benchmark_above_15():
    from runner.commands.instances import floor_failures, floors_table

    floors = {"eab_t": 33.3, "fa_a": 31.0, "nc_b": 10.0, "sa_c": 12.0}
    gated = {"fa_a", "nc_b", "sa_c"}
    assert floor_failures(floors, gated, whole=False) == ["fa_a 31.0 > 30"]
    assert floor_failures(floors, gated, whole=True) == ["fa_a 31.0 > 30", "overall 17.7 > 15"]
    assert floor_failures({**floors, "fa_a": 20.0}, gated, whole=True) == []  # mean 14.0
    rows = {line.split("│")[1].strip(): line for line in render(floors_table(floors, gated)).splitlines()
            if line.startswith("│ ")}
    assert "ABOVE 30" in rows["fa_a"] and "not gated" in rows["eab_t"] and "ok" in rows["nc_b"]


def test_cli_stats_names_the_task_above_the_floor_limit():
    proc = run_cli("--stats", "--task", "sa_psg_stage_window_open", "--task", "sa_n2n3_fraction")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "sa_psg_stage_window_open 33.3 > 30" in proc.stderr.replace("\n", " ")
    assert "overall" not in proc.stderr  # a selection is not the whole benchmark
