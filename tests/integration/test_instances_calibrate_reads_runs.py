"""`eegbench instances --calibrate RUN...` over runs this test makes: an oracle run (every
instance solved) and a null run (none solved) of one task give it a solve rate of one half
over twice its instances."""
import json

from runner.benchmark import catalog
from tests.integration.conftest import PROJECT_ROOT

TASK = "fa_alpha_relpower"


def test_calibrate_counts_scored_runs_and_solves_over_the_runs_given(eegbench):
    cases = [i.case_id for i in catalog.select(catalog.load_all(), [TASK])]
    for model, run in (("oracle", "solved"), ("null", "unsolved")):
        proc = eegbench("eval", "--model", model, "--set", TASK, "--run", run, "--jobs", "2")
        assert proc.returncode == 0, proc.stderr[-2000:]
    proc = eegbench("instances", "--task", TASK, "--calibrate", "solved", "unsolved")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (row,) = [line for line in proc.stdout.splitlines() if TASK in line]
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[0] == TASK and cells[1] == "easy" and cells[2] == "recipe" and cells[3] == str(len(cases))
    assert int(cells[6]) == len(json.loads((PROJECT_ROOT / "reference_plans" / f"{TASK}.json").read_text())["steps"])
    assert cells[7] == "-"  # no method ensemble in this task
    summary = json.loads((PROJECT_ROOT / "instances" / "sensitivity" / f"{TASK}.json").read_text())["summary"]
    assert cells[8] == f"{summary['caught']}/{summary['mutants']}"  # mistakes caught, from the task's record
    assert cells[9] == str(2 * len(cases)) and cells[10] == "0.50"
    assert "over solved, unsolved: 1 task(s), 0 flagged" in proc.stdout
    missing = eegbench("instances", "--calibrate", "no-such-run")
    assert missing.returncode == 2 and "no run named 'no-such-run'" in missing.stderr
