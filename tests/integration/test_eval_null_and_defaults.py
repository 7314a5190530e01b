"""`make eval MODEL=null` over one instance of every task (the floor: every one a solution
scoring 0); `make eval` without a model runs the oracle and says so; bad options are refused
with their names."""


def test_eval_null_every_task_solution_and_score_0(eegbench, one_case_per_task):
    proc = eegbench("eval", "--model", "null", "--jobs", "2", "--run", "null", "--set", ",".join(one_case_per_task))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("null")
    assert sorted(r["case_id"] for r in results) == one_case_per_task
    assert {(r["status"], r["score"]) for r in results} == {("solution", 0.0)}


def test_eval_without_model_says_so_and_runs_the_oracle(eegbench):
    proc = eegbench("eval", "--set", "fa_alpha_relpower-01", "--run", "check")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "No MODEL given" in proc.stderr
    assert [(r["status"], r["score"]) for r in eegbench.results("check")] == [("solution", 100.0)]


def test_eval_rejects_bad_options_naming_them(eegbench):
    proc = eegbench("eval", "--model", "nosuch:thing", "--set", "fa_alpha_relpower-01", "--run", "bad")
    assert proc.returncode == 2 and "nosuch:thing" in proc.stderr
    proc = eegbench("eval", "--model", "null", "--set", "no_such_task", "--run", "bad2")
    assert proc.returncode == 2 and "no_such_task" in proc.stderr
    proc = eegbench("eval", "--model", "null", "--run", "../escape")
    assert proc.returncode == 2 and "RUN=" in proc.stderr
