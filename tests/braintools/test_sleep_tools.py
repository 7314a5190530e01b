"""Sleep tools on small hand-made hypnograms (values checked by independent pandas/numpy code) and refusals."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import braintools
from braintools import paths
from braintools.data import Signal

CODING = {"0": "W", "1": "L", "2": "D", "3": "R"}
# subject a: W W L L W L D D R R W W L R W  (15 epochs); subject b: W L L L R
STAGES_A = [0, 0, 1, 1, 0, 1, 2, 2, 3, 3, 0, 0, 1, 3, 0]
STAGES_B = [0, 1, 1, 1, 3]


@pytest.fixture(autouse=True)
def roots(tmp_path: Path) -> Path:
    data = tmp_path / "input"
    data.mkdir()
    rows = [{"subject": "a", "epoch": i + 1, "ref": s, "dev": (s if i % 4 else 1)} for i, s in enumerate(STAGES_A)]
    rows += [{"subject": "b", "epoch": i + 1, "ref": s, "dev": s} for i, s in enumerate(STAGES_B)]
    pd.DataFrame(rows).sample(frac=1, random_state=0).to_csv(data / "hyp.csv", index=False)  # shuffled rows
    paths.use_roots(data, tmp_path / "file_check")
    braintools.STATE.reset()
    return tmp_path


def ok(name: str, args: dict) -> dict:
    response = braintools.call(name, args)
    assert "error" not in response, response
    return response


def load(subject: str = "a", column: str = "ref", **extra: object) -> str:
    args = {"path": "hyp.csv", "stage_column": column, "coding": CODING, "epoch_column": "epoch",
            "where_column": "subject", "equals": subject, **extra}
    return str(ok("load_hypnogram", args)["hypnogram"]["id"])


def test_load_sorts_by_epoch_and_decodes() -> None:
    hyp = load()
    assert hyp.startswith("lab")
    frame = braintools.STATE.get(hyp, "h").value.frame
    assert frame["stage"].tolist() == [CODING[str(s)] for s in STAGES_A]
    assert frame["onset_s"].tolist() == [30.0 * i for i in range(15)]
    assert braintools.STATE.entries[hyp].branch == "labels"


def test_stage_statistics_against_pandas() -> None:
    hyp = load()
    value = ok("stage_statistics", {"hypnogram": hyp, "wake": ["W"], "denominator": "sleep"})["statistics"]["value"]
    counts = pd.Series(STAGES_A).value_counts()
    tst = int((np.array(STAGES_A) != 0).sum())
    assert value["L"]["count"] == counts[1] == 4
    assert value["R"]["percent"] == pytest.approx(100 * counts[3] / tst)
    assert value["R"]["n_bouts"] == 2 and value["R"]["longest_bout_min"] == 1.0
    assert value["R"]["first_onset_s"] == 8 * 30
    assert value["W"]["minutes"] == counts[0] * 0.5


def test_stage_ranking_ties_keep_coding_order() -> None:
    hyp = load("b")
    stats = ok("stage_statistics", {"hypnogram": hyp})["statistics"]["id"]
    order = ok("rank", {"result_id": stats, "feature": "count"})["ranking"]["value"]["order"]
    assert order == ["L", "W", "R", "D"]  # W and R tie at 1: coding order wins


def test_sleep_metrics_conventions() -> None:
    hyp = load()
    value = ok("sleep_metrics", {"hypnogram": hyp, "wake": ["W"], "rem": ["R"]})["metrics"]["value"]
    s = np.array(STAGES_A)
    sleep = np.flatnonzero(s != 0)
    assert value["sleep_efficiency"] == pytest.approx(100 * len(sleep) / len(s))
    assert value["sol_min"] == sleep[0] * 0.5
    spt = s[sleep[0]:sleep[-1] + 1]
    assert value["waso_min"] == (spt == 0).sum() * 0.5 == 1.5
    assert value["rem_latency_min"] == (np.flatnonzero(s == 3)[0] - sleep[0]) * 0.5
    start = ok("sleep_metrics", {"hypnogram": hyp, "wake": ["W"], "rem": ["R"], "rem_latency_from": "record_start"})
    assert start["metrics"]["value"]["rem_latency_min"] == np.flatnonzero(s == 3)[0] * 0.5


def test_grouped_metrics_and_threshold() -> None:
    hyp = ok("load_hypnogram", {"path": "hyp.csv", "stage_column": "ref", "coding": CODING, "epoch_column": "epoch",
                                "group_column": "subject", "groups": ["b", "a"]})["hypnogram"]["id"]
    metrics = ok("sleep_metrics", {"hypnogram": hyp, "wake": ["W"]})["metrics"]
    assert list(metrics["value"]) == ["b", "a"]
    assert metrics["value"]["b"]["sleep_efficiency"] == 80.0
    chosen = ok("threshold", {"result_id": metrics["id"], "feature": "sleep_efficiency", "value": 60, "operation": ">"})
    assert chosen["selection"]["value"]["names"] == ["b"]


def test_awakenings_and_transitions() -> None:
    hyp = load()
    aw = ok("awakenings", {"hypnogram": hyp, "wake": ["W"], "min_epochs": 2})["awakenings"]["value"]
    assert aw == {"n_awakenings": 1, "n_wake_bouts": 2, "wake_min": 1.5, "longest_wake_min": 1.0}
    tr = ok("stage_transitions", {"hypnogram": hyp, "wake": ["W"]})["transitions"]["value"]
    s = np.array(STAGES_A)
    assert tr["n_stage_shifts"] == int((s[1:] != s[:-1]).sum())
    to_wake = int(((s[:-1] != 0) & (s[1:] == 0)).sum())
    assert tr["sleep_to_wake_per_hour"] == pytest.approx(to_wake / ((s != 0).sum() * 0.5 / 60))


def test_agreement_matches_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    ref, dev = load(column="ref"), load(column="dev")
    value = ok("hypnogram_agreement", {"reference": ref, "other": dev, "labels": list(CODING.values())})["agreement"]["value"]
    a = [CODING[str(s)] for s in STAGES_A]
    b = [CODING[str(s if i % 4 else 1)] for i, s in enumerate(STAGES_A)]
    assert value["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=list(CODING.values())))
    assert value["accuracy_pct"] == pytest.approx(100 * np.mean(np.array(a) == np.array(b)))


def test_epoch_range_checks_and_crop() -> None:
    missing = load("zz", allow_empty=True)
    check = ok("check_epoch_range", {"hypnogram": missing, "first_epoch": 1, "last_epoch": 2})["check"]["value"]
    assert (check["status"], check["reason"]) == ("invalid_request", "unknown_subject")
    hyp = load()
    check = ok("check_epoch_range", {"hypnogram": hyp, "first_epoch": 3, "last_epoch": 16})["check"]["value"]
    assert check["reason"] == "epoch_out_of_range"
    assert ok("check_epoch_range", {"hypnogram": hyp, "first_epoch": 3, "last_epoch": 15})["check"]["value"]["status"] == "ok"
    win = ok("crop_hypnogram", {"hypnogram": hyp, "first_epoch": 9, "last_epoch": 14})["hypnogram"]["id"]
    rem = ok("stage_statistics", {"hypnogram": win, "stages": ["R"]})["statistics"]["value"]["R"]["minutes"]
    assert rem == 1.5
    error = braintools.call("crop_hypnogram", {"hypnogram": hyp, "first_epoch": 9, "last_epoch": 40})
    assert error["error"]["code"] == "out_of_range"
    assert ok("stage_at", {"hypnogram": hyp, "epochs": [9, 1]})["stages"]["value"] == {"9": "R", "1": "W"}


def test_check_criteria_inclusive() -> None:
    metrics = ok("sleep_metrics", {"hypnogram": load("b"), "wake": ["W"]})["metrics"]["id"]
    value = ok("check_criteria", {"result_id": metrics, "minimum": {"sleep_efficiency": 80},
                                  "maximum": {"waso_min": 0}})["criteria"]["value"]
    assert value["all_met"] is True
    value = ok("check_criteria", {"result_id": metrics, "minimum": {"sleep_efficiency": 80.01}})["criteria"]["value"]
    assert value["all_met"] is False


def test_export_runs(roots: Path) -> None:
    hyp = load()
    out = ok("export_hypnogram", {"hypnogram": hyp, "path": "file_check/h.csv", "columns": ["onset", "dur", "stage"]})
    assert out["artifact"]["id"].startswith("art") and out["artifact"]["path"] == "file_check/h.csv"
    written = pd.read_csv(roots / "file_check" / "h.csv")
    s = np.array(STAGES_A)
    assert len(written) == 1 + int((s[1:] != s[:-1]).sum())
    assert written["dur"].sum() == 15 * 30 and list(written.columns) == ["onset", "dur", "stage"]
    assert written["stage"].iloc[0] == "W" and written["onset"].iloc[1] == 60
    escape = braintools.call("export_hypnogram", {"hypnogram": hyp, "path": "/etc/x.csv"})
    assert escape["error"]["code"] == "forbidden_path"


def test_slow_waves_on_synthetic_signal() -> None:
    import yasa

    sf = 100.0
    t = np.arange(int(60 * sf)) / sf
    x = 80 * np.sin(2 * np.pi * 0.8 * t) + np.random.default_rng(0).normal(0, 2, t.size)
    sig = Signal(x[None, :], sf, ["C3"], ["eeg"], 0.0)
    sid = braintools.STATE.add("views", "sig", sig, sig.describe(), "test").id
    summary = ok("detect_slow_waves", {"source": sid})["summary"]["value"]
    expected = yasa.sw_detect(x, sf, verbose="ERROR").summary()
    assert summary["n"] == len(expected)
    assert summary["mean"]["PTP"] == pytest.approx(expected["PTP"].mean())


def test_refusals() -> None:
    assert braintools.call("load_hypnogram", {"path": "hyp.csv", "stage_column": "nope"})["error"]["code"] == "bad_argument"
    bad = braintools.call("load_hypnogram", {"path": "hyp.csv", "stage_column": "ref", "coding": {"0": "W"}})
    assert bad["error"]["code"] == "bad_argument"
    empty = braintools.call("load_hypnogram", {"path": "hyp.csv", "stage_column": "ref", "where_column": "subject", "equals": "q"})
    assert empty["error"]["code"] == "bad_argument"
    hyp = load()
    assert braintools.call("stage_statistics", {"hypnogram": hyp, "denominator": "sleep"})["error"]["code"] == "bad_argument"
    assert braintools.call("sleep_metrics", {"hypnogram": "lab99", "wake": ["W"]})["error"]["code"] == "unknown_id"
    stats = ok("stage_statistics", {"hypnogram": hyp})["statistics"]["id"]
    assert braintools.call("sleep_metrics", {"hypnogram": stats, "wake": ["W"]})["error"]["code"] == "wrong_kind"


def test_stage_latency_onset_rules_and_counts() -> None:
    hyp = load()
    s = np.array(STAGES_A)

    def latency(**extra: object) -> dict:
        args = {"hypnogram": hyp, "wake": ["W"], "stages": ["R"], **extra}
        return ok("stage_latency", args)["latency"]["value"]

    first = latency()
    onset, rem = 2, int(np.flatnonzero(s == 3)[0])  # first sleep epoch; first REM
    assert (first["sleep_onset_epoch"], first["sol_min"], first["stage_epoch"]) == (onset + 1, onset * 0.5, rem + 1)
    assert first["latency_min"] == (rem - onset) * 0.5 == 3.0
    assert latency(count="sleep")["latency_min"] == int((s[onset:rem] != 0).sum()) * 0.5 == 2.5
    three = latency(onset_min_epochs=3)  # the first run of >= 3 sleep epochs starts at index 5
    assert (three["sleep_onset_epoch"], three["sol_min"], three["latency_min"]) == (6, 2.5, 1.5)
    assert latency(onset_min_epochs=6)["latency_min"] is None
    grouped = ok("load_hypnogram", {"path": "hyp.csv", "stage_column": "ref", "coding": CODING, "epoch_column": "epoch",
                                    "group_column": "subject"})["hypnogram"]["id"]
    both = ok("stage_latency", {"hypnogram": grouped, "wake": ["W"], "stages": ["R"]})["latency"]["value"]
    assert both["b"]["latency_min"] == 1.5 and both["a"]["latency_min"] == 3.0


def test_stage_latency_refusals() -> None:
    hyp = load()
    bad = braintools.call("stage_latency", {"hypnogram": hyp, "wake": ["W"], "stages": ["R"], "onset_min_epochs": 0})
    assert bad["error"]["code"] == "bad_argument"
    assert braintools.call("stage_latency", {"hypnogram": hyp, "wake": ["W"], "stages": []})["error"]["code"] == "bad_argument"
    stats = ok("stage_statistics", {"hypnogram": hyp})["statistics"]["id"]
    assert braintools.call("stage_latency", {"hypnogram": stats, "wake": ["W"], "stages": ["R"]})["error"]["code"] == "wrong_kind"
