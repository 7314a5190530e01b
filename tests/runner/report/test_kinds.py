"""The task-kinds table: mean score and solve rate by how tasks ask, from the runs' own rows."""
import json
from statistics import mean

import pytest

from runner.report.build import build_report
from runner.report.context import Settings
from tests.fixtures.synthetic_runs import kind_of, make_run


def test_each_kind_gets_the_mean_and_solved_share_of_its_scored_instances(tmp_path):
    run = make_run(tmp_path, "kinds", instances=60, seed=3)
    report = build_report([run], Settings())
    (table,) = [t for t in report.tables if t.name == "kinds"]
    lines = (tmp_path / "kinds" / "results.jsonl").read_text().splitlines()
    scored = [r for r in map(json.loads, lines) if r["status"] != "infra_error"]
    seen = set()
    for kind in ("recipe", "open", "long_horizon"):
        mine = [r for r in scored if kind_of(r["task_id"]) == kind]
        (row,) = [r for r in table.rows if r["kind"] == kind and r["subset"] == "overall"]
        assert row["instances"] == len(mine) and row["tasks"] == len({r["task_id"] for r in mine})
        assert row["mean"] == pytest.approx(mean(r["score"] for r in mine))
        assert row["solved"] == pytest.approx(sum(r["score"] == 100 for r in mine) / len(mine))
        seen.add(kind)
    assert seen == {"recipe", "open", "long_horizon"}
    assert {r["subset"] for r in table.rows} >= {"overall", "Sleep Assessment"}


def test_runs_without_kinds_make_an_empty_table(tmp_path):
    run = make_run(tmp_path, "old", instances=12, seed=1)
    for row in run.rows:
        row.kind = None
    (table,) = [t for t in build_report([run], Settings()).tables if t.name == "kinds"]
    assert table.rows == []
