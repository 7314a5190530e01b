"""Sleep-report tools on small hand-made hypnograms and synthetic signals (values checked by
independent numpy/pandas/scipy code), and their refusals."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import signal as sps

import braintools
from braintools import paths
from braintools.data import Signal, Table
from tests.braintools.calls import code, ok

CODING = {"0": "W", "1": "L", "2": "D", "3": "R"}
# night a (20 epochs): W W L D D R L L L R W R L L D L R R W W
NIGHT_A = [0, 0, 1, 2, 2, 3, 1, 1, 1, 3, 0, 3, 1, 1, 2, 1, 3, 3, 0, 0]
NIGHT_B = [0, 1, 1, 2, 3, 3, 1, 0]
DEVICE_B = [0, 1, 2, 2, 3, 1, 1, 1]


@pytest.fixture(autouse=True)
def roots(tmp_path: Path) -> Path:
    data = tmp_path / "input"
    data.mkdir()
    rows = [{"night": "a", "epoch": i + 1, "psg": s, "dev": (s if i % 3 else 1)} for i, s in enumerate(NIGHT_A)]
    rows += [{"night": "b", "epoch": i + 1, "psg": s, "dev": d} for i, (s, d) in enumerate(zip(NIGHT_B, DEVICE_B))]
    pd.DataFrame(rows).to_csv(data / "nights.csv", index=False)
    paths.use_roots(data, tmp_path / "file_check")
    braintools.STATE.reset()
    return tmp_path


def load(night: str = "a", column: str = "psg", **extra: object) -> str:
    args = {"path": "nights.csv", "stage_column": column, "coding": CODING, "epoch_column": "epoch", **extra}
    if "group_column" not in extra:
        args |= {"where_column": "night", "equals": night}
    return str(ok("load_hypnogram", **args)["hypnogram"]["id"])


def test_stage_time_table_blocks_and_columns(roots: Path) -> None:
    out = ok("stage_time_table", hypnogram=load(), block_min=3, stages=["W", "D", "R"], index_name="part",
             column_names={"W": "wake"})
    frame = braintools.STATE.entries[out["table"]["id"]].value.frame
    assert list(frame.columns) == ["part", "wake", "D_min", "R_min"]
    assert frame["part"].tolist() == [1, 2, 3, 4]  # 20 epochs in blocks of 6: the last holds 2
    a = np.array(NIGHT_A)
    expected = [(a[i:i + 6] == 0).sum() * 0.5 for i in range(0, 20, 6)]
    assert frame["wake"].tolist() == expected
    assert out["blocks"]["value"]["4"] == {"wake": 1, "D_min": 0, "R_min": 0}
    ok("write_csv", table=out["table"]["id"], path="file_check/t.csv")
    with open(roots / "file_check" / "t.csv", newline="") as handle:
        assert next(csv.reader(handle)) == ["part", "wake", "D_min", "R_min"]


def test_stage_distribution_halves_of_the_sleep_period() -> None:
    value = ok("stage_distribution", hypnogram=load(), wake=["W"], parts=2)["distribution"]["value"]
    a = np.array(NIGHT_A)
    period = a[2:18]  # first sleep epoch at position 2, last at 17: L = 16
    first = period[:8]
    assert value["1"]["first_epoch"] == 3 and value["2"]["last_epoch"] == 18
    assert value["1"]["D"]["minutes"] == (first == 2).sum() * 0.5
    assert value["1"]["D"]["share_pct"] == pytest.approx(100 * (first == 2).sum() / (period == 2).sum())
    assert (value["1"]["W"]["share_pct"], value["2"]["W"]["share_pct"]) == (0.0, 100.0)  # the one WASO epoch is late


def test_stage_distribution_odd_length_puts_the_middle_epoch_second() -> None:
    value = ok("stage_distribution", hypnogram=load("b"), wake=["W"], parts=2)["distribution"]["value"]
    # night b sleep period: positions 1..6 (L L D R R L), L = 6 -> 3 + 3; crop to 5 epochs for odd L
    assert value["1"]["minutes"] == value["2"]["minutes"] == 1.5
    cropped = ok("crop_hypnogram", hypnogram=load("b"), first_epoch=2, last_epoch=6)["hypnogram"]["id"]
    odd = ok("stage_distribution", hypnogram=cropped, wake=["W"], parts=2)["distribution"]["value"]
    assert (odd["1"]["minutes"], odd["2"]["minutes"]) == (1.0, 1.5)


def test_cycle_table_merges_rem_episodes_by_gap() -> None:
    hyp = load()
    # REM at positions 5, 9, 11, 16, 17; with a gap limit of 2 min (4 epochs): 5 and 9 (3 epochs apart) merge,
    # 9 and 11 merge, 11 and 16 (4 epochs apart) do not.
    out = ok("cycle_table", hypnogram=hyp, wake=["W"], rem=["R"], merge_gap_min=2)
    summary = out["summary"]["value"]
    assert summary["n_rem_periods"] == summary["n_cycles"] == 2
    frame = braintools.STATE.entries[out["cycles"]["id"]].value.frame
    assert frame["start_epoch"].tolist() == [3, 13] and frame["end_epoch"].tolist() == [12, 18]
    assert frame["rem_period_min"].tolist() == [3.5, 1.0]
    assert frame["nrem_period_min"].tolist() == [1.5, 2.0]
    assert frame["D_min"].tolist() == [1.0, 0.5]
    assert summary["first"]["share_pct"]["D"] == pytest.approx(100 * 2 / 3)
    assert summary["mean_cycle_min"] == pytest.approx((5.0 + 3.0) / 2)
    assert summary["after_last_cycle_min"] == 0.0
    # no merging at all: every REM episode closes a cycle
    strict = ok("cycle_table", hypnogram=hyp, wake=["W"], rem=["R"], merge_gap_min=0)["summary"]["value"]
    assert strict["n_cycles"] == 4


def test_night_summary_single_and_grouped() -> None:
    single = ok("night_summary", hypnogram=load(), wake=["W"])["summary"]["value"]
    a = np.array(NIGHT_A)
    assert single["tst_min"] == (a != 0).sum() * 0.5
    assert single["waso_min"] == 0.5 and single["sol_min"] == 1.0 and single["spt_min"] == 8.0
    assert single["R_pct_tst"] == pytest.approx(100 * (a == 3).sum() / (a != 0).sum())
    grouped = ok("night_summary", hypnogram=load(column="dev", group_column="night"), wake=["W"])["summary"]["value"]
    assert list(grouped) == ["a", "b"]
    assert grouped["b"]["sleep_efficiency"] == pytest.approx(100 * 7 / 8)


def test_epoch_agreement_pooled_and_per_night_match_sklearn_style_counts() -> None:
    ref = load(column="psg", group_column="night")
    dev = load(column="dev", group_column="night")
    out = ok("epoch_agreement", reference=ref, other=dev, labels=["W", "L", "D", "R"])
    pooled = out["agreement"]["value"]
    a = np.array(NIGHT_A + NIGHT_B)
    b = np.array([s if i % 3 else 1 for i, s in enumerate(NIGHT_A)] + DEVICE_B)
    assert pooled["kappa"] == pytest.approx(_kappa(a, b))
    assert pooled["sensitivity_pct"]["D"] == pytest.approx(100 * ((a == 2) & (b == 2)).sum() / (a == 2).sum())
    assert pooled["ppv_pct"]["L"] == pytest.approx(100 * ((a == 1) & (b == 1)).sum() / (b == 1).sum())
    per = out["per_group"]["value"]
    assert per["b"]["kappa"] == pytest.approx(_kappa(np.array(NIGHT_B), np.array(DEVICE_B)))
    worst = ok("rank", result_id=out["per_group"]["id"], feature="kappa", descending=False, top_k=1)
    assert worst["ranking"]["value"]["order"] == [min(per, key=lambda g: per[g]["kappa"])]


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    m = np.zeros((4, 4))
    np.add.at(m, (a, b), 1)
    n = m.sum()
    po, pe = np.trace(m) / n, (m.sum(1) @ m.sum(0)) / n**2
    return float((po - pe) / (1 - pe))


def test_bland_altman_against_numpy(roots: Path) -> None:
    ref = ok("night_summary", hypnogram=load(column="psg", group_column="night"), wake=["W"])["summary"]["id"]
    dev = ok("night_summary", hypnogram=load(column="dev", group_column="night"), wake=["W"])["summary"]["id"]
    out = ok("bland_altman", reference=ref, other=dev, feature="L_min", columns=["night", "psg", "dev", "diff"])
    x = np.array([(np.array(NIGHT_A) == 1).sum(), (np.array(NIGHT_B) == 1).sum()]) * 0.5
    y = np.array([sum(1 for i, s in enumerate(NIGHT_A) if (s if i % 3 else 1) == 1), DEVICE_B.count(1)]) * 0.5
    d = y - x
    summary = out["summary"]["value"]
    assert summary["bias"] == pytest.approx(d.mean())
    assert summary["loa_upper"] == pytest.approx(d.mean() + 1.96 * d.std(ddof=1))
    assert summary["mean_reference"] == pytest.approx(x.mean())
    ranking = ok("rank", result_id=out["per_name"]["id"], feature="difference", absolute=True)["ranking"]["value"]
    assert ranking["order"] == sorted(["a", "b"], key=lambda n: -abs(d[0 if n == "a" else 1]))
    ok("write_csv", table=out["table"]["id"], path="file_check/ba.csv")
    frame = pd.read_csv(roots / "file_check" / "ba.csv")
    assert list(frame.columns) == ["night", "psg", "dev", "diff"] and frame["diff"].sum() == pytest.approx(d.sum())


def test_nested_feature_paths_and_missing_names() -> None:
    ref = ok("stage_statistics", hypnogram=load(column="psg", group_column="night"))["statistics"]["id"]
    dev = ok("stage_statistics", hypnogram=load(column="dev", group_column="night"))["statistics"]["id"]
    out = ok("bland_altman", reference=ref, other=dev, feature="D.minutes")
    assert out["summary"]["value"]["n"] == 2
    assert code("bland_altman", reference=ref, other=dev, feature="D.nothing") == "bad_argument"
    one = ok("stage_statistics", hypnogram=load("a", column="dev"))["statistics"]["id"]
    assert code("bland_altman", reference=ref, other=one, feature="D.minutes") == "bad_argument"


def test_plot_hypnogram_writes_a_png(roots: Path) -> None:
    out = ok("plot_hypnogram", hypnogram=load(), path="file_check/h.png", order=["W", "R", "L", "D"])
    assert out["artifact"]["path"] == "file_check/h.png"
    assert (roots / "file_check" / "h.png").read_bytes().startswith(b"\x89PNG")
    assert code("plot_hypnogram", hypnogram=load(), path="file_check/h.svg") == "unsupported"
    assert code("plot_hypnogram", hypnogram=load(), path="file_check/h.png", order=["W", "L"]) == "bad_argument"


def _signal(x: np.ndarray, sf: float) -> str:
    sig = Signal(x[None, :], sf, ["C3"], ["eeg"], 0.0)
    return braintools.STATE.add("views", "sig", sig, sig.describe(), "test").id


def _hypnogram(stages: list[str], epoch_s: float = 30.0) -> str:
    frame = pd.DataFrame({"epoch": np.arange(1, len(stages) + 1), "onset_s": np.arange(len(stages)) * epoch_s,
                          "stage": stages, "code": stages})
    table = Table(frame, "hypnogram", {"epoch_s": epoch_s, "labels": ["N2", "N3", "REM"], "n_epochs": len(stages)})
    return braintools.STATE.add("labels", "lab", table, table.describe(), "test").id


def test_events_per_stage_assigns_by_epoch_interval() -> None:
    hyp = _hypnogram(["N2", "N3", "N3", "REM"])
    events = pd.DataFrame({"onset_s": [0.0, 29.99, 30.0, 75.0, 89.9, 119.0, 125.0], "NegPeak": [1, 2, 3, 4, 5, 6, 7]})
    eid = braintools.STATE.add("events", "evt", Table(events, "events"), {}, "test").id
    value = ok("events_per_stage", events=eid, hypnogram=hyp)["per_stage"]
    assert value["value"]["N2"] == {"count": 2, "minutes": 0.5, "per_min": 4.0}
    assert value["value"]["N3"]["count"] == 3 and value["value"]["N3"]["per_min"] == 3.0
    assert value["value"]["REM"]["count"] == 1 and value["outside"] == 1
    assert code("events_per_stage", events=eid, hypnogram=hyp, time_column="Peak") == "bad_argument"


def test_stage_band_power_matches_scipy_and_skips_large_epochs() -> None:
    sf = 100.0
    rng = np.random.default_rng(0)
    x = rng.normal(0, 10, int(120 * sf))
    x[int(90 * sf) + 5] = 900.0  # an artefact in the 4th epoch
    sig, hyp = _signal(x, sf), _hypnogram(["N2", "N3", "N3", "N3"])
    value = ok("stage_band_power", source=sig, hypnogram=hyp, band=[0.5, 4], stages=["N2", "N3"],
               max_ptp_uv=500)["band_power"]["value"]

    def power(seg: np.ndarray) -> float:
        f, p = sps.welch(seg, sf, window="hann", nperseg=400, noverlap=200)
        return float(p[(f >= 0.5) & (f < 4)].sum() * (f[1] - f[0]))

    assert value["N3"]["n_epochs"] == 2 and value["N3"]["n_excluded"] == 1
    assert value["N3"]["power"] == pytest.approx(np.mean([power(x[3000:6000]), power(x[6000:9000])]))
    assert value["N2"]["power"] == pytest.approx(power(x[:3000]))
    mt = ok("stage_band_power", source=sig, hypnogram=hyp, band=[0.5, 4], stages=["N2"], method="multitaper")
    assert mt["band_power"]["value"]["N2"]["power"] == pytest.approx(value["N2"]["power"], rel=0.3)


def test_refusals() -> None:
    hyp = load()
    grouped = load(group_column="night")
    assert code("stage_time_table", hypnogram=hyp, block_min=0.75) == "bad_argument"  # 1.5 epochs
    assert code("stage_time_table", hypnogram=grouped) == "unsupported"
    assert code("stage_distribution", hypnogram=hyp, wake=["W"], parts=0) == "bad_argument"
    assert code("cycle_table", hypnogram=hyp, wake=["W"], rem=["REM"]) == "bad_argument"
    assert code("cycle_table", hypnogram=hyp, wake=["W"], rem=["R"], merge_gap_min=-1) == "bad_argument"
    assert code("epoch_agreement", reference=grouped, other=hyp) == "bad_argument"
    assert code("stage_band_power", source=_signal(np.zeros(3000), 100.0), hypnogram=hyp, band=[4, 1]) == "bad_argument"
    assert code("events_per_stage", events=hyp, hypnogram="lab999") == "unknown_id"
    stats = ok("stage_statistics", hypnogram=hyp)["statistics"]["id"]
    assert code("cycle_table", hypnogram=stats, wake=["W"], rem=["R"]) == "wrong_kind"
