"""`eegbench instances --export brainbench DIR` writes a set that `eegbench eval --cases DIR`
runs unchanged: the oracle scores 100 on every exported case, read from the caseK folders."""
import json

from runner.core.paths import Environment


def test_exported_set_runs_as_case_files_and_scores_100(eegbench, tmp_path):
    dest = tmp_path / "brainbench"
    data_root = Environment.from_os().paths.data_root
    proc = eegbench("instances", "--task", "fa_alpha_relpower", "--task", "sa_hypnogram_export",
                    "--export", "brainbench", str(dest), "--data-root", str(data_root.parent))
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split("\t") for line in (dest / "index.tsv").read_text().splitlines()[1:]]
    cases = [row[3] for row in rows]
    assert sorted({row[0].split("/")[0] for row in rows}) == ["case1", "case2"] and len(cases) >= 6
    first = json.loads(next(dest.glob("case1/case1_01.json")).read_text())
    assert first["agent_input"]["data_path"][0].startswith(f"{data_root.name}/")  # relative to the root given
    run = eegbench("eval", "--model", "oracle", "--cases", str(dest), "--data-root", str(data_root.parent),
                   "--run", "exported", "--jobs", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    results = eegbench.results("exported")
    assert {r["case_id"]: (r["status"], r["score"]) for r in results} == {c: ("solution", 100.0) for c in cases}
    assert {r["difficulty"] for r in results} <= {"easy", "medium", "hard"}  # levels read back from the numbers


def test_export_into_a_used_folder_is_refused_and_writes_nothing(eegbench, tmp_path):
    dest = tmp_path / "used"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    proc = eegbench("instances", "--task", "fa_alpha_relpower", "--export", "brainbench", str(dest))
    assert proc.returncode == 2 and "not an empty directory" in proc.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["notes.txt"]
