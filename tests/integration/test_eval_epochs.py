"""`eegbench eval --epochs 3`: every instance runs three times in one run directory, each
epoch in its own instances/<case>[@k]/, and a resumed run reruns only the missing (case, epoch)
pairs. The scripted model answers the T2 artifact question differently per epoch (clean,
then ocular, then clean again), so an instance scores 100 in the epochs whose answer is its
ground truth (read here from the committed instance files): the clean and ocular cases change
score between epochs, the muscle case never does. `eegbench report` is held to that."""
from __future__ import annotations

import itertools
import json
import statistics

import pytest

from tests.integration.conftest import PROJECT_ROOT

ANSWERS = {1: "clean", 2: "ocular", 3: "clean"}  # the script's answer in each epoch


def t2_truth() -> dict[str, str]:
    """Four T2 cases and their labels: the first two ocular ones, the first clean and the
    first muscle one (so the epochs' mean scores differ: 25, 50, 25)."""
    truth = {}
    for path in sorted((PROJECT_ROOT / "instances" / "eegagentbench").glob("eab_t2_artifact-*.json")):
        data = json.loads(path.read_text())
        truth[data["meta_info"]["case_id"]] = data["eval_config"]["metrics"][0]["params"]["gt_value"]
    picked = [case for case, label in truth.items() if label == "ocular"][:2]
    picked += [next(case for case, label in truth.items() if label == wanted) for wanted in ("clean", "muscle")]
    return {case: truth[case] for case in picked}


def expected_scores(truth: dict[str, str]) -> dict[tuple[str, int], float]:
    return {(case, epoch): 100.0 if label == answer else 0.0
            for case, label in truth.items() for epoch, answer in ANSWERS.items()}


def write_script(tmp_path) -> str:
    def answer(label: str) -> str:
        return json.dumps({"action": "final_answer", "answer": label})

    path = tmp_path / "per-epoch.json"
    path.write_text(json.dumps({"replies": [answer(ANSWERS[1])],
                                "epochs": {"2": [answer(ANSWERS[2])], "3": [answer(ANSWERS[3])]}}))
    return f"script:{path}"


def evaluate(eegbench, tmp_path, truth, run):
    return eegbench("eval", "--paradigm", "tools", "--model", write_script(tmp_path), "--set", ",".join(truth),
                    "--epochs", "3", "--run", run, "--jobs", "2")


def entry_dir(eegbench, run, case, epoch):
    return eegbench.runs_dir / run / "instances" / (case if epoch == 1 else f"{case}@{epoch}")


def test_eval_with_three_epochs_runs_every_instance_three_times(eegbench, tmp_path):
    truth = t2_truth()
    assert sorted(set(truth.values())) == ["clean", "muscle", "ocular"]
    done = evaluate(eegbench, tmp_path, truth, "epochs")
    assert done.returncode == 0, done.stderr[-3000:]
    results = eegbench.results("epochs")
    assert sorted((r["case_id"], r["epoch"]) for r in results) == sorted(expected_scores(truth))
    assert {(r["case_id"], r["epoch"]): r["score"] for r in results} == expected_scores(truth)
    for case, epoch in expected_scores(truth):
        folder = entry_dir(eegbench, "epochs", case, epoch)
        transcript = json.loads((folder / "transcript.json").read_text())
        assert (transcript["case_id"], transcript["epoch"], transcript["status"]) == (case, epoch, "solution")
        assert json.loads((folder / "report.md").read_text()) == {"answer": ANSWERS[epoch]}
        assert json.loads((folder / "instance.json").read_text())["meta_info"]["case_id"] == case
    # 100 in the epochs answering its label, else 0: clean 100/0/100, ocular 0/100/0, muscle 0/0/0
    per_case = {case: [r["score"] for r in sorted(results, key=lambda r: r["epoch"]) if r["case_id"] == case]
                for case in truth}
    assert per_case == {case: [100.0 if label == ANSWERS[e] else 0.0 for e in (1, 2, 3)] for case, label in truth.items()}
    summary = json.loads((eegbench.runs_dir / "epochs" / "summary.json").read_text())
    assert summary["results"] == 12 and summary["groups"]["all"]["instances"] == 12
    means = {epoch: 100.0 * sum(label == answer for label in truth.values()) / len(truth)
             for epoch, answer in ANSWERS.items()}
    assert {int(k): g["mean_score"] for k, g in summary["epochs"].items()} == means == {1: 25.0, 2: 50.0, 3: 25.0}
    assert json.loads((eegbench.runs_dir / "epochs" / "run.json").read_text())["config"]["epochs"] == 3
    ocular = next(case for case, label in truth.items() if label == "ocular")
    shown = eegbench("show", "epochs", f"{ocular}@2")
    assert shown.returncode == 0 and '"ocular"' in shown.stdout and "score 100.0" in shown.stdout
    listed = eegbench("logs", "epochs", "--epoch", "3")
    assert listed.returncode == 0 and "epoch" in listed.stdout
    assert sum(case in listed.stdout for case in truth) == len(truth) and "4 instances (epoch 3)" in listed.stdout


def test_a_resumed_run_reruns_only_the_missing_case_epoch_pairs(eegbench, tmp_path):
    truth = t2_truth()
    done = evaluate(eegbench, tmp_path, truth, "resumed")
    assert done.returncode == 0, done.stderr[-3000:]
    path = eegbench.runs_dir / "resumed" / "results.jsonl"
    lines = path.read_text().splitlines()
    first_ocular = next(case for case, label in truth.items() if label == "ocular")
    # as a kill would leave it: epoch 3 not reached, one epoch-2 entry lost, a torn last line
    kept = [line for line in lines if json.loads(line)["epoch"] == 1
            or (json.loads(line)["epoch"] == 2 and json.loads(line)["case_id"] != first_ocular)]
    path.write_text("".join(line + "\n" for line in kept) + lines[-1][:40])
    missing = {(first_ocular, 2)} | {(case, 3) for case in truth}
    started = {(case, epoch): json.loads((entry_dir(eegbench, "resumed", case, epoch) / "transcript.json")
                                         .read_text())["started_at"] for case, epoch in expected_scores(truth)}

    rerun = evaluate(eegbench, tmp_path, truth, "resumed")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"resuming resumed: {len(kept)} finished, {len(missing)} to run" in rerun.stderr
    results = eegbench.results("resumed")
    pairs = [(r["case_id"], r["epoch"]) for r in results]
    assert len(pairs) == len(set(pairs)) == 12
    assert {(r["case_id"], r["epoch"]): r["score"] for r in results} == expected_scores(truth)
    for pair, was in started.items():
        now = json.loads((entry_dir(eegbench, "resumed", *pair) / "transcript.json").read_text())["started_at"]
        assert (now != was) == (pair in missing), pair  # only the missing pairs ran again


def test_report_of_a_three_epoch_run_gives_the_changed_share_and_pass_at_k(eegbench, tmp_path):
    truth = t2_truth()
    done = evaluate(eegbench, tmp_path, truth, "repeats")
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "report.json"
    reported = eegbench("report", "repeats", "--json", str(out))
    assert reported.returncode == 0, reported.stderr[-3000:]
    (row,) = [r for r in json.loads(out.read_text())["tables"]["repeats"]["rows"] if r["subset"] == "overall"]
    scores = {case: [100.0 if label == ANSWERS[e] else 0.0 for e in (1, 2, 3)] for case, label in truth.items()}
    passes = {case: sum(s == 100.0 for s in v) for case, v in scores.items()}
    epoch_means = [statistics.mean(v[e] for v in scores.values()) for e in range(3)]
    pairwise = {case: statistics.mean(abs(a - b) for a, b in itertools.combinations(v, 2)) for case, v in scores.items()}
    assert row["attempts"] == 3 and row["instances"] == len(truth)
    assert row["changed"] == pytest.approx(sum(len(set(v)) > 1 for v in scores.values()) / len(truth)) == 0.75
    assert row["mean_abs_diff"] == pytest.approx(statistics.mean(pairwise.values()))
    assert row["mean"] == pytest.approx(statistics.mean(epoch_means))
    assert row["sd"] == pytest.approx(statistics.stdev(epoch_means))
    assert row["pass_at_1"] == pytest.approx(statistics.mean(c / 3 for c in passes.values()))
    assert row["pass_at_k"] == pytest.approx(statistics.mean(c > 0 for c in passes.values()))
    assert row["pass_hat_k"] == pytest.approx(statistics.mean(c == 3 for c in passes.values()))
