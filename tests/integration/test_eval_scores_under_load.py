"""--jobs 6 on this 2-core machine: three sandboxes per core, and the oracle still scores
100 on every instance; every execution records its CPU time and the host's load beside its
wall time, so a timeout on a starved host can be told from the model's own."""
JOBS = 6


def test_oracle_at_jobs_6_on_2_cores_scores_100_and_records_cpu_time(eegbench, one_case_per_task):
    cases = one_case_per_task[::3][:18]  # a spread over the subsets, 3 instances per job
    proc = eegbench("eval", "--model", "oracle", "--jobs", str(JOBS), "--run", "loaded", "--set", ",".join(cases))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = eegbench.results("loaded")
    assert sorted(r["case_id"] for r in results) == sorted(cases)
    assert {r["case_id"]: (r["status"], r["score"]) for r in results} == {c: ("solution", 100.0) for c in cases}
    observations = [t["observation"] for c in cases for t in eegbench.transcript("loaded", c)["turns"]
                    if t.get("observation")]
    assert observations and all(o["cpu_s"] is not None and o["host_load"] is not None for o in observations)
    assert all(0 <= o["cpu_s"] <= o["duration_s"] + 1 for o in observations)  # --cpus 1: at most one CPU
    assert max(o["host_load"] for o in observations) > 0
