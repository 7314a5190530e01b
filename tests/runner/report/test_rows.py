"""Rows come from the run directory: the saved instance, score.json and the transcript."""
import json
import shutil
from pathlib import Path

from runner.report.rows import instance_weight, load_run
from runner.run.store import RunStore
from validation.instance import load_instance

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runs_v1"


def copy_run(tmp_path, name="v1-oracle-codeact"):
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def test_a_format_1_run_reads_into_rows_with_units_and_weights(tmp_path):
    data = load_run(RunStore(copy_run(tmp_path)))
    assert data.info.format_version == 1 and data.info.model == "oracle" and data.info.paradigm == "codeact"
    by_case = {r.case_id: r for r in data.rows}
    alpha = by_case["fa_alpha_relpower-01"]
    assert (alpha.difficulty, alpha.weight, alpha.score, alpha.valid_response) == ("easy", 1.0, 100.0, True)
    assert [(u.metric_id, u.family, u.score) for u in alpha.units] == [("alpha_rel", "numeric", 1.0)]
    assert {u.family for u in by_case["sa_hypnogram_export-01"].units} >= {"artifact"}


def test_rows_read_the_saved_instance_not_the_catalog(tmp_path):
    root = copy_run(tmp_path)
    path = root / "instances" / "fa_alpha_relpower-01" / "instance.json"
    saved = json.loads(path.read_text())
    saved["meta_info"]["difficult"] = 4  # a BrainBench-style numeric weight
    path.write_text(json.dumps(saved))
    (row,) = [r for r in load_run(RunStore(root)).rows if r.case_id == "fa_alpha_relpower-01"]
    assert row.weight == 4.0


def test_named_levels_weigh_one_two_three(tmp_path):
    instance = load_instance(copy_run(tmp_path) / "instances" / "fa_alpha_relpower-01" / "instance.json")
    weights = {}
    for level in ("easy", "medium", "hard", "unknown"):
        instance.meta_info.difficult = level
        weights[level] = instance_weight(instance)
    assert weights == {"easy": 1.0, "medium": 2.0, "hard": 3.0, "unknown": 1.0}


def test_the_last_line_of_a_case_wins_and_infra_errors_have_no_score(tmp_path):
    root = copy_run(tmp_path)
    lines = (root / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    retried = {**first, "status": "infra_error", "score": None}
    (root / "results.jsonl").write_text("\n".join([json.dumps(retried), *lines[1:]]) + "\n")
    rows = {r.case_id: r for r in load_run(RunStore(root)).rows}
    assert rows[first["case_id"]].score is None and not rows[first["case_id"]].scored
    (root / "results.jsonl").write_text("\n".join([json.dumps(retried), *lines]) + "\n")
    rows = {r.case_id: r for r in load_run(RunStore(root)).rows}
    assert rows[first["case_id"]].score == first["score"] and len(rows) == len(lines)


def _time_out(root, case, **observation):
    path = root / "instances" / case / "transcript.json"
    transcript = json.loads(path.read_text())
    transcript["turns"][0]["observation"].update({"status": "timeout", **observation})
    path.write_text(json.dumps(transcript))


def test_timeouts_on_a_starved_host_are_flagged_and_listed_in_the_failures_section(tmp_path):
    from runner.report.context import ReportContext
    from runner.report.sections import failures

    root = copy_run(tmp_path)
    _time_out(root, "fa_alpha_relpower-01", duration_s=150.0, cpu_s=20.0, host_load=3.1)  # starved
    _time_out(root, "sa_hypnogram_export-01", duration_s=150.0, cpu_s=148.0, host_load=3.1)  # busy itself
    data = load_run(RunStore(root))
    flagged = {r.case_id: r.overloaded_timeouts for r in data.rows if r.overloaded_timeouts}
    assert list(flagged) == ["fa_alpha_relpower-01"]
    assert [(t.turn, t.cpu_s, t.host_load) for t in flagged["fa_alpha_relpower-01"]] == [(0, 20.0, 3.1)]
    table = {t.name: t for t in failures.tables(ReportContext(runs=[data]))}["overloaded_timeouts"]
    assert [(r["case"], r["cpu_s"], r["load"]) for r in table.rows] == [("fa_alpha_relpower-01", 20.0, 3.1)]
