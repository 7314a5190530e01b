"""Runs that differ are never ranked together silently."""
import json
import shutil
from pathlib import Path

import pytest

from runner.report.comparability import NotComparable, comparable, differences
from runner.report.rows import load_run
from runner.run.store import RunStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs_v1"


def run_copy(tmp_path, name, model=None, controls=None):
    root = Path(shutil.copytree(FIXTURES / "v1-oracle-codeact", tmp_path / name))
    record = json.loads((root / "run.json").read_text())
    record["config"]["run_id"] = name
    if model:
        record["model"] = {"name": model}
    if controls:
        record["config"]["controls"].update(controls)
    (root / "run.json").write_text(json.dumps(record))
    return load_run(RunStore(root))


def test_identical_settings_and_cases_compare_without_warnings(tmp_path):
    runs = [run_copy(tmp_path, "a"), run_copy(tmp_path, "b", model="other")]
    kept, warnings = comparable(runs, intersect=False)
    assert kept == runs and warnings == []


def test_different_controls_are_refused_then_named_under_intersect(tmp_path):
    runs = [run_copy(tmp_path, "a"), run_copy(tmp_path, "b", controls={"max_rounds": 5})]
    assert differences(runs) and "controls differs" in differences(runs)[0]
    with pytest.raises(NotComparable, match="controls differs"):
        comparable(runs, intersect=False)
    _, warnings = comparable(runs, intersect=True)
    assert any("controls differs" in w for w in warnings)


def test_different_cases_are_intersected(tmp_path):
    a, b = run_copy(tmp_path, "a"), run_copy(tmp_path, "b", model="other")
    b.rows = b.rows[:2]
    with pytest.raises(NotComparable, match="different cases"):
        comparable([a, b], intersect=False)
    kept, _ = comparable([a, b], intersect=True)
    assert [len(r.rows) for r in kept] == [2, 2]
    assert {r.case_id for r in kept[0].rows} == {r.case_id for r in b.rows}


def test_no_shared_case_is_refused_even_under_intersect(tmp_path):
    a, b = run_copy(tmp_path, "a"), run_copy(tmp_path, "b", model="other")
    a.rows, b.rows = a.rows[:1], b.rows[1:2]
    with pytest.raises(NotComparable, match="share no case"):
        comparable([a, b], intersect=True)
