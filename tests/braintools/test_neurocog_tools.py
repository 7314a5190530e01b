"""Event-locked epochs and the ERP tools, checked against MNE and NumPy on the pylossless and MNE sample data."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import mne
import numpy as np
import pandas as pd
import pytest

import braintools
from braintools.data import Table
from tests.braintools.calls import code, ok, value
from tests.braintools.conftest import DATA

EDF = "pylossless/sub-s01_task-faceO_eeg.edf"
TSV = "pylossless/sub-s01_task-faceO_events.tsv"
FIF = "mne_sample/test_raw.fif"


@pytest.fixture(scope="module")
def mne_raw() -> mne.io.BaseRaw:
    raw = mne.io.read_raw_edf(DATA / EDF, preload=True, verbose="ERROR")
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    return raw


def mne_epochs(raw: mne.io.BaseRaw, types: list[str], picks: list[str], **kw: Any) -> mne.Epochs:
    frame = pd.read_csv(DATA / TSV, sep="\t", encoding="utf-8-sig")
    onsets = frame.loc[frame["trial_type"].isin(types), "sample"].to_numpy(int)
    events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    args = {"baseline": (None, 0), **kw}
    return mne.Epochs(raw, events, tmin=-0.2, tmax=0.5, picks=picks, reject_by_annotation=False, preload=True,
                      verbose="ERROR", **args)


def pipeline(types: list[str], channels: list[Any] | None, **kw: Any) -> dict[str, Any]:
    rec = ok("load_recording", path=EDF)["recording"]["id"]
    evt = ok("read_table", path=TSV, separator="tab", kind="events")["table"]["id"]
    sig = ok("pick_channels", recording=rec)["signal"]["id"]
    ref = ok("rereference", source=sig)["signal"]["id"]
    args = {"source": ref, "events": evt, "labels": types, "label_column": "trial_type", "time_column": "sample",
            "time_unit": "samples", "tmin_s": -0.2, "tmax_s": 0.5, **kw}
    if channels is not None:
        args["channels"] = channels
    return ok("epoch_events", **args)


def test_epoch_events_matches_mne_epochs(mne_raw: mne.io.BaseRaw) -> None:
    out = pipeline(["house-upright"], ["A22", "B7"], baseline_end_s=0)
    ep = value(out["epochs"])
    ref = mne_epochs(mne_raw, ["house-upright"], ["A22", "B7"])
    assert ep.data.shape == ref.get_data().shape == (len(ref), 2, 180)
    assert out["dropped"] == {"outside_signal": 1, "rejected": 0}  # the last house-upright runs past the end
    np.testing.assert_allclose(ep.times, ref.times)
    np.testing.assert_allclose(ep.data, ref.get_data() * 1e6, atol=1e-6)


def test_epoch_events_rejects_like_mne(mne_raw: mne.io.BaseRaw) -> None:
    chans = ["A15", "A23", "A28"]
    out = pipeline(["face-upright"], [["A15", "A23"], "A28"], reject_uv={"eeg": 45.0})
    ref = mne_epochs(mne_raw, ["face-upright"], chans, baseline=None, reject={"eeg": 45e-6})
    assert value(out["epochs"]).ch_names == chans
    assert out["epochs"]["n_epochs"] == len(ref) < 200


def test_erp_measures(mne_raw: mne.io.BaseRaw) -> None:
    chans = ["A22", "A28", "B7"]
    face = ok("erp_average", epochs=pipeline(["face-upright"], chans, baseline_end_s=0)["epochs"]["id"])["evoked"]["id"]
    house = ok("erp_average", epochs=pipeline(["house-upright"], chans, baseline_end_s=0)["epochs"]["id"])["evoked"]["id"]
    ev_f = mne_epochs(mne_raw, ["face-upright"], chans).average().data * 1e6
    ev_h = mne_epochs(mne_raw, ["house-upright"], chans).average().data * 1e6
    t_ms = np.arange(-51, 129) / 256 * 1000
    mask = (t_ms >= 130) & (t_ms <= 200)
    peaks = value(ok("erp_peak", evoked=face, window_ms=[130, 200], polarity="negative")["peaks"])
    k = int(np.argmin(ev_f[0, mask]))
    assert peaks["A22"]["amplitude_uv"] == pytest.approx(ev_f[0, mask][k], abs=1e-6)
    assert peaks["A22"]["latency_ms"] == pytest.approx(t_ms[mask][k])
    diff = ok("difference_wave", a=face, b=house)["evoked"]["id"]
    means = value(ok("window_mean", evoked=diff, window_ms=[130, 200], channels=["B7"])["means"])
    assert means["B7"]["mean_uv"] == pytest.approx((ev_f[2, mask] - ev_h[2, mask]).mean(), abs=1e-6)
    gfp = ok("global_field_power", evoked=face)["gfp"]["id"]
    gpk = value(ok("erp_peak", evoked=gfp, window_ms=[60, 140])["peaks"])["GFP"]
    m2 = (t_ms >= 60) & (t_ms <= 140)
    assert gpk["amplitude_uv"] == pytest.approx(ev_f.std(axis=0)[m2].max(), abs=1e-6)
    assert code("erp_peak", evoked=face, window_ms=[600, 700]) == "out_of_range"
    assert code("window_mean", evoked=face, window_ms=[100, 120], channels=["Cz"]) == "unknown_channel"
    assert code("window_mean", evoked="ep99", window_ms=[100, 120]) == "unknown_id"


def test_trial_stats_and_erp_image(roots: Path) -> None:
    out = pipeline(["face-upright"], ["A28"], baseline_end_s=0)
    ep = value(out["epochs"])
    mask = (ep.times * 1000 >= 140) & (ep.times * 1000 <= 190)
    means = ep.data[:, 0, mask].mean(axis=1)
    stats = value(ok("trial_window_stats", epochs=out["epochs"]["id"], window_ms=[140, 190])["stats"])["A28"]
    assert stats["n_trials"] == len(means)
    assert stats["mean_uv"] == pytest.approx(means.mean())
    assert stats["percent_below"] == pytest.approx(100 * np.mean(means < 0))
    art = ok("erp_image", epochs=out["epochs"]["id"], channel="A28", path="file_check/img/erp.png")["artifact"]
    assert art["id"].startswith("art") and art["path"] == "/workspace/file_check/img/erp.png"
    assert (roots / "img" / "erp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert code("erp_image", epochs=out["epochs"]["id"], channel="A28", path="../x.png") == "forbidden_path"
    assert code("erp_image", epochs=out["epochs"]["id"], channel="A28", path="x.jpg") == "unsupported"


def test_reaction_times() -> None:
    frame = pd.DataFrame({"trial_type": ["go", "press-a", "go", "press-b", "go", "go", "press-a"],
                          "sample": [100, 200, 300, 300, 500, 700, 1100]})
    evt = braintools.STATE.add("events", "evt", Table(frame, "events"), {"kind": "events"}, "test").id
    args = {"events": evt, "stimulus_labels": ["go"], "response_labels": ["press-a", "press-b"],
            "correct_labels": ["press-a"], "label_column": "trial_type", "time_column": "sample",
            "time_unit": "samples", "sfreq": 100.0, "deadline_ms": 1000.0}
    summary = ok("reaction_times", **args)["summary"]["value"]
    # go@100 -> a@200 (1000 ms, at the deadline: correct); go@300 -> a@1100 (the b press at 300 is not after it);
    # go@500 -> a@1100 (6000 ms: late); go@700 -> a@1100 (4000 ms: late)
    assert summary == {"n_stimuli": 4, "n_responded": 4, "n_correct": 1, "mean_rt_ms": 1000.0, "median_rt_ms": 1000.0}
    same = ok("reaction_times", **{**args, "same_time_counts": True, "stimulus_window_s": [2.0, 3.5]})["summary"]["value"]
    assert same["n_stimuli"] == 1 and same["n_correct"] == 0  # go@300 pairs with b@300
    assert code("reaction_times", **{**args, "sfreq": None, "time_unit": "samples"}) == "bad_argument"


def test_check_erp_request_and_stim_events() -> None:
    rec = ok("load_recording", path=EDF)["recording"]["id"]
    check = {"source": rec, "epoch_start_ms": -200.0, "epoch_end_ms": 500.0}
    assert ok("check_erp_request", channels=["A28"], window_ms=[-100, 0], **check)["check"]["value"]["status"] == "ok"
    bad = ok("check_erp_request", channels=["a28"], window_ms=[450, 700], **check)["check"]["value"]
    assert (bad["status"], bad["reason"]) == ("invalid_request", "unknown_channel")
    assert ok("check_erp_request", channels=["A28"], window_ms=[-300, -100], **check)["check"]["value"]["reason"] == "window_out_of_range"
    fif = ok("load_recording", path=FIF)["recording"]["id"]
    evt = ok("find_stim_events", recording=fif, stim_channel="STI 014", shortest_event=2)["events"]["id"]
    sig = ok("pick_channels", recording=fif, types=["eeg"], exclude=["EEG 053"])["signal"]["id"]
    ep = value(ok("epoch_events", source=sig, events=evt, labels=[1, 2], label_column="value", time_column="sample",
                  time_unit="samples", tmin_s=-0.2, tmax_s=0.5, baseline_end_s=0)["epochs"])
    assert ep.data.shape[1:] == (59, 421) and ep.data.shape[0] == 15
    assert code("epoch_events", source=sig, events=evt, labels=[99], label_column="value", time_column="sample",
                tmin_s=-0.2, tmax_s=0.5) == "bad_argument"


def test_channel_mean_makes_a_region_waveform(mne_raw: mne.io.BaseRaw) -> None:
    chans = ["A28", "A29", "B7"]
    epochs = pipeline(["face-upright", "house-upright"], chans, baseline_end_s=0)["epochs"]["id"]
    avg = ok("erp_average", epochs=epochs, by_label=True)["evoked"]["id"]
    named = braintools.call("channel_mean", {"epochs": avg, "channels": ["A28", "B7"], "name": "roi"})
    roi = value(named["epochs"])
    ref = mne_epochs(mne_raw, ["face-upright"], chans).average().data * 1e6
    assert roi.ch_names == ["roi"] and roi.labels == ["face-upright", "house-upright"]
    np.testing.assert_allclose(roi.data[0, 0], ref[[0, 2]].mean(axis=0), atol=1e-6)
    single = value(ok("channel_mean", epochs=epochs, channels=["A29"])["epochs"])
    np.testing.assert_allclose(single.data[:, 0], value({"id": epochs}).data[:, 1])
    assert code("channel_mean", epochs=avg, channels=[]) == "bad_argument"
    assert code("channel_mean", epochs=avg, channels=["A28", "A28"]) == "bad_argument"
    assert code("channel_mean", epochs=avg, channels=["Cz"]) == "unknown_channel"


def test_trial_contrast_matches_scipy() -> None:
    from scipy import stats

    face = pipeline(["face-upright"], ["A28", "B7"], baseline_end_s=0)["epochs"]["id"]
    house = pipeline(["house-upright"], ["A28", "B7"], baseline_end_s=0)["epochs"]["id"]
    ea, eb = value({"id": face}), value({"id": house})
    mask = (ea.times * 1000 >= 140) & (ea.times * 1000 <= 190)
    xa, xb = ea.data[:, 0, mask].mean(axis=1), eb.data[:, 0, mask].mean(axis=1)
    args = {"a": face, "b": house, "window_ms": [140, 190], "channels": ["A28"]}
    welch = ok("trial_contrast", **args)["contrast"]["value"]
    assert welch["p_value"] == pytest.approx(stats.ttest_ind(xa, xb, equal_var=False).pvalue)
    assert welch["mean_a_uv"] == pytest.approx(xa.mean()) and welch["n_b"] == len(xb)
    assert welch["significant"] == (welch["p_value"] < 0.05)
    student = ok("trial_contrast", **args, test="student")["contrast"]["value"]
    assert student["statistic"] == pytest.approx(stats.ttest_ind(xa, xb).statistic)
    mwu = ok("trial_contrast", **args, test="mannwhitney")["contrast"]["value"]
    assert mwu["p_value"] == pytest.approx(stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    perm = ok("trial_contrast", **args, test="permutation", n_permutations=500, seed=3)["contrast"]["value"]
    again = ok("trial_contrast", **args, test="permutation", n_permutations=500, seed=3)["contrast"]["value"]
    assert perm["p_value"] == again["p_value"] and 1 / 501 <= perm["p_value"] <= 1
    both = ok("trial_contrast", **{**args, "channels": ["A28", "B7"]})["contrast"]["value"]
    assert both["mean_a_uv"] == pytest.approx(ea.data[:, :, mask].mean())
    assert code("trial_contrast", a=face, b=house, window_ms=[140, 190]) == "bad_argument"  # two channels, none named
    assert code("trial_contrast", **args, n_permutations=10) == "out_of_range"
    other = pipeline(["house-upright"], ["A28"], baseline_end_s=0)["epochs"]["id"]
    assert code("trial_contrast", a=face, b=other, window_ms=[140, 190], channels=["A28"]) == "bad_argument"


def test_sequence_effects_repeat_and_switch() -> None:
    rows = [("L", 100), ("pL", 140), ("R", 200), ("pR", 230), ("R", 300), ("pL", 350), ("R", 400), ("pR", 405),
            ("boundary", 450), ("L", 500), ("pL", 560), ("L", 600), ("face", 700), ("pL", 780)]
    frame = pd.DataFrame(rows, columns=["trial_type", "sample"])
    evt = braintools.STATE.add("events", "evt", Table(frame, "events"), {"kind": "events"}, "test").id
    args = {"events": evt, "stimulus_labels": ["L", "R"], "response_labels": ["pL", "pR"],
            "correct_for": {"L": ["pL"], "R": ["pR"]}, "label_column": "trial_type", "time_column": "sample",
            "time_unit": "samples", "sfreq": 100.0}

    def summary(**kw: Any) -> dict[str, Any]:
        return dict(ok("sequence_effects", **args, **kw)["summary"]["value"])

    # RTs (ms): L 400 | R 300 switch | R 500 wrong side | R 50 repeat after an error | L 600 switch | L 1800 repeat
    plain = summary()
    assert plain["repeat"] == {"n": 2, "median_rt_ms": 925.0, "mean_rt_ms": 925.0}
    assert plain["switch"]["median_rt_ms"] == 450.0 and plain["switch_minus_repeat_median_ms"] == -475.0
    limited = summary(min_rt_ms=100, deadline_ms=1000)
    assert limited["repeat"]["n"] == 0 and limited["switch_minus_repeat_median_ms"] is None
    assert summary(drop_after_error=True)["repeat"]["median_rt_ms"] == 1800.0
    assert summary(break_labels=["boundary"])["switch"] == {"n": 1, "median_rt_ms": 300.0, "mean_rt_ms": 300.0}
    assert summary(before_next_labels=["L", "R", "face"])["repeat"]["median_rt_ms"] == 50.0
    assert summary(summary_labels=["R"])["switch_minus_repeat_median_ms"] == 250.0
    windowed = summary(stimulus_window_s=[3.5, 10.0])
    assert (windowed["repeat"]["median_rt_ms"], windowed["switch"]["median_rt_ms"]) == (925.0, 600.0)
    trials = value(ok("sequence_effects", **args)["trials"]).frame
    assert trials["sequence"].fillna("none").tolist() == ["none", "switch", "repeat", "repeat", "switch", "repeat"]
    assert trials["correct"].tolist() == [True, True, False, True, True, True]
    assert code("sequence_effects", **{**args, "correct_for": {"L": ["pL"]}}) == "bad_argument"
    assert code("sequence_effects", **{**args, "stimulus_labels": ["X"], "correct_for": {"X": []}}) == "bad_argument"
