"""`eegbench report` and `compare` on real runs: oracle, null, constant and a "half-right"
script model (right on some instances, wrong on others) under codeact and hybrid, on eight
instances of four tasks at two difficulty levels. Every number the report prints is recomputed
here, from results.jsonl and the instance files, with code independent of runner.report and
validation.baseline."""
import itertools
import json
import math
import random
import shutil
import statistics
from decimal import Decimal

import pytest

from runner.benchmark import catalog
from runner.core.paths import PROJECT_ROOT
from tests.browser import open_file
from tests.integration.conftest import Eval, assert_no_leftover

TASKS = ("fa_alpha_relpower", "fa_spectral_edge", "nc_p1_peak", "nc_face_house_diff")  # easy, medium, easy, medium
LEVEL = {"easy": 1, "medium": 2, "hard": 3}


def two_cases_per_task():
    instances = sorted(catalog.load_all(), key=lambda i: i.case_id)
    picked = {t: [i for i in instances if i.task_id == t][:2] for t in TASKS}
    return {t: {i.case_id: i for i in v} for t, v in picked.items()}


def truth(instance):
    (metric,) = instance.eval_config.metrics
    return metric.target_key, metric.params["gt_value"]


def solution(fields):
    return {"replies": ["<solution>" + json.dumps(fields) + "</solution>"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """oracle, null, half (codeact) and half (hybrid: the same script path, other replies)."""
    base = tmp_path_factory.mktemp("report")
    ev = Eval(base / "runs")
    cases = two_cases_per_task()
    first = {t: list(v.values())[0] for t, v in cases.items()}
    second = {t: list(v.values())[1] for t, v in cases.items()}
    selection = ",".join(c for v in cases.values() for c in v)
    script = base / "half.json"
    # codeact: right on the first alpha, second spectral-edge and first face/house case; P1 far off
    fields_a = dict([truth(first["fa_alpha_relpower"]), truth(second["fa_spectral_edge"]),
                     (truth(first["nc_p1_peak"])[0], -999.0), truth(first["nc_face_house_diff"])])
    # hybrid: alpha far off, first spectral edge, no P1 key at all (an invalid response), same face/house
    fields_b = dict([(truth(first["fa_alpha_relpower"])[0], -999.0), truth(first["fa_spectral_edge"]),
                     truth(first["nc_face_house_diff"])])
    made = {}
    for run, model, paradigm, fields in (("oracle", "oracle", "codeact", None), ("null", "null", "codeact", None),
                                         ("constant", "constant", "codeact", None),
                                         ("half-codeact", f"script:{script}", "codeact", fields_a),
                                         ("half-hybrid", f"script:{script}", "hybrid", fields_b)):
        if fields is not None:
            script.write_text(json.dumps(solution(fields)))
        done = ev("eval", "--model", model, "--paradigm", paradigm, "--set", selection, "--run", run, "--jobs", "2")
        assert done.returncode == 0, done.stderr[-3000:]
        made[run] = ev.results(run)
    yield ev, made, cases
    assert_no_leftover(ev)


def report_json(ev, tmp_path, *args):
    out = tmp_path / "report.json"
    done = ev("report", *args, "--json", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def rows_of(report, table, **where):
    return [r for r in report["tables"][table]["rows"] if all(r.get(k) == v for k, v in where.items())]


def difficulty_of(ev, run, case):
    return json.loads((ev.runs_dir / run / "instances" / case / "instance.json").read_text())["meta_info"]["difficulty"]


def mean(values):
    return math.fsum(values) / len(values)


def independent_bootstrap(scores_by_task, resamples=4000, seed=7):
    """Percentile interval of the mean, resampling whole tasks (plain Python, another RNG)."""
    rng = random.Random(seed)
    tasks = list(scores_by_task)
    stats = []
    for _ in range(resamples):
        drawn = [s for t in (rng.choice(tasks) for _ in tasks) for s in scores_by_task[t]]
        stats.append(mean(drawn))
    stats.sort()
    return stats[int(0.025 * resamples)], stats[int(0.975 * resamples) - 1]


def whole_set(task):
    """(gt_value, tolerance) of every instance of the task, read from the instance files."""
    found = []
    for path in sorted((PROJECT_ROOT / "instances").rglob(f"{task}-*.json")):
        (metric,) = json.loads(path.read_text())["eval_config"]["metrics"]
        found.append((Decimal(str(metric["params"]["gt_value"])), Decimal(str(metric["params"]["tolerance"]))))
    return found


def best_constants(task):
    """The answers that hit the most instances of the task within its tolerance, and the
    share they hit x 100: the task's guessing floor (its metric is one numeric unit)."""
    truths = whole_set(task)
    hits = {value: sum(abs(value - other) <= tol for other, tol in truths) for value, _ in truths}
    most = max(hits.values())
    return {value for value, n in hits.items() if n == most}, 100 * most / len(truths)


def test_the_runs_differ_where_the_script_says(runs):
    ev, made, cases = runs
    assert {r["score"] for r in made["oracle"]} == {100.0}
    assert {r["score"] for r in made["null"]} == {0.0}
    for record in made["constant"]:  # the constant model answered its task's best constant
        (unit,) = json.loads((ev.runs_dir / "constant" / "instances" / record["case_id"] / "score.json")
                             .read_text())["metrics"]
        assert Decimal(str(unit["predicted"])) in best_constants(record["task_id"])[0], record["case_id"]
    half = {r["case_id"]: r["score"] for r in made["half-codeact"]}
    assert 0 < sum(s == 100.0 for s in half.values()) < len(half)  # really half right


def test_leaderboard_means_intervals_weighted_score_and_vrr(runs, tmp_path):
    ev, made, cases = runs
    report = report_json(ev, tmp_path, *(str(ev.runs_dir / r) for r in made))
    for run, results in made.items():
        paradigm = "hybrid" if run == "half-hybrid" else "codeact"
        model = json.loads((ev.runs_dir / run / "run.json").read_text())["model"]["name"]
        (row,) = rows_of(report, "leaderboard", model=model, paradigm=paradigm)
        scores = [r["score"] for r in results]
        assert row["mean_overall"] == pytest.approx(mean(scores))
        for subset in {r["bench_subset"] for r in results}:
            key = "mean_" + subset.lower().replace(" ", "_")
            assert row[key] == pytest.approx(mean([r["score"] for r in results if r["bench_subset"] == subset]))
        by_task = {}
        for r in results:
            by_task.setdefault(r["task_id"], []).append(r["score"])
        low, high = independent_bootstrap(by_task)
        assert row["mean_overall_low"] <= row["mean_overall"] <= row["mean_overall_high"]
        assert abs(row["mean_overall_low"] - low) <= 6.5 and abs(row["mean_overall_high"] - high) <= 6.5
        (headline,) = rows_of(report, "brainbench_headline", model=model, paradigm=paradigm)
        weights = {r["case_id"]: LEVEL[difficulty_of(ev, run, r["case_id"])] for r in results}
        weighted = 100 * sum(r["score"] * weights[r["case_id"]] for r in results) / sum(100 * w for w in weights.values())
        assert headline["weighted_overall"] == pytest.approx(weighted)
        scores_json = [json.loads((ev.runs_dir / run / "instances" / r["case_id"] / "score.json").read_text())
                       for r in results]
        valid = [any(m["predicted"] is not None for m in s["metrics"]) for s in scores_json]
        assert headline["vrr_overall"] == pytest.approx(sum(valid) / len(valid))
    assert rows_of(report, "brainbench_headline", paradigm="hybrid")[0]["vrr_overall"] == pytest.approx(0.75)
    assert rows_of(report, "brainbench_headline", model="null")[0]["vrr_overall"] == 0


def test_stability_difficulty_delta_and_dai(runs, tmp_path):
    ev, made, cases = runs
    report = report_json(ev, tmp_path, str(ev.runs_dir / "half-codeact"), str(ev.runs_dir / "half-hybrid"))
    model = rows_of(report, "leaderboard", paradigm="codeact")[0]["model"]
    for run, paradigm in (("half-codeact", "codeact"), ("half-hybrid", "hybrid")):
        for task in TASKS:
            scores = [r["score"] / 100 for r in made[run] if r["task_id"] == task]
            pairs = list(itertools.combinations(scores, 2))
            expected = sum(abs(a - b) for a, b in pairs) / len(pairs)
            (row,) = rows_of(report, "stability", paradigm=paradigm, task=task)
            assert row["mpad"] == pytest.approx(expected)
    level_means = {}
    for run, paradigm in (("half-codeact", "codeact"), ("half-hybrid", "hybrid")):
        for level in ("easy", "medium"):
            level_means[(paradigm, level)] = mean([r["score"] for r in made[run]
                                                   if difficulty_of(ev, run, r["case_id"]) == level])
    deltas = {level: level_means[("hybrid", level)] - level_means[("codeact", level)] for level in ("easy", "medium")}
    for level, delta in deltas.items():
        (row,) = rows_of(report, "difficulty_delta", model=model, subset="overall", difficulty=level)
        assert row["delta"] == pytest.approx(delta)
    (dai,) = rows_of(report, "dai", model=model, subset="overall")
    assert dai["dai"] == pytest.approx(deltas["medium"] - deltas["easy"])  # the slope over two levels 1 -> 2
    assert deltas["medium"] != deltas["easy"]


def test_compare_prints_the_paired_difference(runs, tmp_path):
    ev, made, cases = runs
    report = report_json(ev, tmp_path, str(ev.runs_dir / "half-codeact"), str(ev.runs_dir / "half-hybrid"))
    a = {r["case_id"]: r["score"] for r in made["half-codeact"]}
    b = {r["case_id"]: r["score"] for r in made["half-hybrid"]}
    (paired,) = report["tables"]["paired"]["rows"]
    assert paired["diff"] == pytest.approx(mean([b[c] - a[c] for c in a]))
    assert (paired["wins"], paired["losses"]) == (sum(b[c] > a[c] for c in a), sum(b[c] < a[c] for c in a))
    flips = {r["case_id"] for r in report["tables"]["flips"]["rows"]}
    assert flips == {c for c in a if (a[c] == 100) != (b[c] == 100)}
    done = ev("compare", str(ev.runs_dir / "half-codeact"), str(ev.runs_dir / "half-hybrid"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{paired['diff']:.1f}" in done.stdout


def test_runs_over_different_cases_are_refused_or_intersected(runs, tmp_path):
    ev, made, cases = runs
    partial = ev.runs_dir / "null-partial"
    shutil.copytree(ev.runs_dir / "null", partial)
    kept = made["null"][:5]
    (partial / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    refused = ev("report", str(ev.runs_dir / "oracle"), str(partial))
    assert refused.returncode == 2
    assert "different cases" in refused.stderr and "--intersect" in refused.stderr
    report = report_json(ev, tmp_path, str(ev.runs_dir / "oracle"), str(partial), "--intersect")
    shared = {r["case_id"] for r in kept}
    assert {r["case_id"] for r in report["tables"]["instances"]["rows"]} == shared
    assert any("--intersect" in w for w in report["warnings"])
    (row,) = rows_of(report, "leaderboard", model="oracle")
    assert row["instances"] == len(shared)


def test_the_html_report_of_real_runs_opens_in_chromium(runs, tmp_path):
    ev, made, cases = runs
    out = tmp_path / "report.html"
    done = ev("report", *(str(ev.runs_dir / r) for r in made), "--html", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    opened = open_file(out, tmp_path / "report.png", full_page=True)
    assert opened.console_errors == [] and opened.errors == [] and opened.requests == []
    for run in made:  # every run has its provenance card and its instance browser
        assert f"{run} — " in opened.text
    assert "Difficulty Advantage Index" in opened.text and "Paired comparisons" in opened.text
    oracle = "100.0 [100.0, 100.0]"  # the oracle's interval: every instance 100
    assert oracle in opened.text


def test_runs_rescored_under_one_parser_are_ranked_on_that_rescore(runs, tmp_path):
    ev, made, cases = runs
    keys = sorted({truth(i)[0] for v in cases.values() for i in v.values()})
    parser = tmp_path / "common-parser.json"  # a parser that reads every field as -999: every unit wrong
    parser.write_text(json.dumps({"replies": [json.dumps({k: -999.0 for k in keys})]}))
    paths = [str(ev.runs_dir / r) for r in ("oracle", "half-codeact")]
    for path in paths:
        done = ev("score", path, "--parser", "llm", "--parser-model", f"script:{parser}", "--name", "common")
        assert done.returncode == 0, done.stderr[-3000:]
    as_run = report_json(ev, tmp_path, *paths)
    rescored = report_json(ev, tmp_path, *paths, "--scores", "common")
    assert {r["parser"] for r in as_run["tables"]["leaderboard"]["rows"]} == {"rules"}
    for row in rescored["tables"]["leaderboard"]["rows"]:
        assert row["parser"] == f"llm:script:{parser.name}"
        assert row["mean_overall"] == 0.0
    assert {r["scores"] for r in rescored["tables"]["runs"]["rows"]} == {"common"}
    missing = ev("report", *paths, str(ev.runs_dir / "null"), "--scores", "common")
    assert missing.returncode == 2 and "no re-score named 'common'" in missing.stderr


def test_the_floor_is_the_whole_sets_whatever_the_sample(runs, tmp_path):
    ev, made, cases = runs
    report = report_json(ev, tmp_path, *(str(ev.runs_dir / r) for r in made))
    floors = {task: best_constants(task)[1] for task in TASKS}
    # two cases of a task give an in-sample best constant of at least 50: the whole set is lower
    assert all(floor < 50 for floor in floors.values()), floors
    results = made["oracle"]
    baselines = {r["subset"]: r for r in report["tables"]["baselines"]["rows"]}
    assert baselines["overall"]["constant"] == pytest.approx(mean([floors[r["task_id"]] for r in results]), abs=1e-3)
    for subset in {r["bench_subset"] for r in results}:
        expected = mean([floors[r["task_id"]] for r in results if r["bench_subset"] == subset])
        assert baselines[subset]["constant"] == pytest.approx(expected, abs=1e-3)


def test_the_constant_model_scores_the_floor_on_a_whole_task(runs):
    ev, made, cases = runs
    task = "fa_alpha_relpower"
    done = ev("eval", "--model", "constant", "--set", task, "--run", "constant-whole", "--jobs", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    scores = [r["score"] for r in ev.results("constant-whole")]
    assert len(scores) == len(whole_set(task))
    assert mean(scores) == pytest.approx(best_constants(task)[1])


def test_scores_above_the_floor_and_the_detectable_difference(runs, tmp_path):
    ev, made, cases = runs
    floors = {task: best_constants(task)[1] for task in TASKS}
    report = report_json(ev, tmp_path, *(str(ev.runs_dir / r) for r in made))
    for run, results in made.items():
        paradigm = "hybrid" if run == "half-hybrid" else "codeact"
        model = json.loads((ev.runs_dir / run / "run.json").read_text())["model"]["name"]
        (row,) = rows_of(report, "above_floor", model=model, paradigm=paradigm)
        above = [100 * (r["score"] - floors[r["task_id"]]) / (100 - floors[r["task_id"]]) for r in results]
        assert row["above_overall"] == pytest.approx(mean(above), abs=1e-3)
        (board,) = rows_of(report, "leaderboard", model=model, paradigm=paradigm)
        assert board["above_floor"] == pytest.approx(mean(above), abs=1e-3)
    assert rows_of(report, "above_floor", model="oracle")[0]["above_overall"] == pytest.approx(100.0)

    a = {r["case_id"]: (r["score"], r["task_id"]) for r in made["half-codeact"]}
    b = {r["case_id"]: r["score"] for r in made["half-hybrid"]}
    diffs = {c: b[c] - a[c][0] for c in a}
    centre = mean(list(diffs.values()))
    sums = {}
    for case, d in diffs.items():
        sums[a[case][1]] = sums.get(a[case][1], 0.0) + d - centre
    groups = len(sums)
    se = math.sqrt(groups / (groups - 1) * math.fsum(v * v for v in sums.values())) / len(diffs)
    normal = statistics.NormalDist()
    mdd = (normal.inv_cdf(0.975) + normal.inv_cdf(0.8)) * se
    paired = report_json(ev, tmp_path, str(ev.runs_dir / "half-codeact"), str(ev.runs_dir / "half-hybrid"))
    (row,) = paired["tables"]["paired"]["rows"]
    assert row["mdd"] == pytest.approx(mdd)
    normalised = [100 * (b[c] - a[c][0]) / (100 - floors[a[c][1]]) for c in a]
    assert row["normalised_diff"] == pytest.approx(mean(normalised), abs=1e-3)
    done = ev("compare", str(ev.runs_dir / "half-codeact"), str(ev.runs_dir / "half-hybrid"))
    assert done.returncode == 0, done.stderr[-2000:]
    said = " ".join(done.stdout.split())
    verdict = "does not tell the two apart" if abs(centre) < mdd else "exceeds the detectable difference"
    assert verdict in said and f"{mdd:.1f}" in said, said[-2000:]
