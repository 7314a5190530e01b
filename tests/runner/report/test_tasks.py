"""The per-task table: mean score, guessing floor, score above it, and mistakes caught."""
import json
from statistics import mean

import pytest

from runner.report.build import build_report
from runner.report.context import Settings
from runner.report.floors import floors_of
from tests.fixtures.synthetic_runs import make_run


def test_each_task_gets_its_mean_floor_and_the_mistakes_its_run_recorded(tmp_path):
    run = make_run(tmp_path, "tasks", instances=60, seed=5)
    first = run.rows[0].task_id
    run.info.sensitivity = {first: {"caught": 2, "mutants": 4}}
    (table,) = [t for t in build_report([run], Settings()).tables if t.name == "tasks"]
    lines = (tmp_path / "tasks" / "results.jsonl").read_text().splitlines()
    scored = [r for r in map(json.loads, lines) if r["status"] != "infra_error"]
    floors = floors_of([run])
    assert {r["task"] for r in table.rows} == {r["task_id"] for r in scored}
    for row in table.rows:
        mine = [r for r in scored if r["task_id"] == row["task"]]
        rows = [r for r in run.rows if r.task_id == row["task"] and r.scored]
        assert row["instances"] == len(mine)
        assert row["mean"] == pytest.approx(mean(r["score"] for r in mine))
        constants = [floors.of(r)[1] for r in rows]
        assert row["constant"] == pytest.approx(mean(constants))
        above = [100 * (float(r.score or 0) - c) / (100 - c) for r, c in zip(rows, constants) if c < 100]
        assert row["above_floor"] == (pytest.approx(mean(above)) if above else None)
        assert row["caught"] == ("2/4" if row["task"] == first else "-")
