"""quality tools: values checked against numpy/scipy/mne computed here, refusals by error code."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import signal as sps
from scipy import stats

import braintools
from braintools.data import Epochs, Signal, Table
from braintools.tools.quality import standard_label
from tests.braintools.calls import code, ok, value

EDF = "/input/eegmmidb/S001R02.edf"


def add_signal(data: np.ndarray, names: list[str], sfreq: float = 100.0, start_s: float = 0.0) -> str:
    sig = Signal(np.asarray(data, float), sfreq, list(names), ["eeg"] * len(names), start_s)
    return braintools.STATE.add("views", "sig", sig, {"kind": "signal"}, "test").id


def add_table(frame: pd.DataFrame, kind: str = "events") -> str:
    return braintools.STATE.add("events", "evt", Table(frame, kind), {"kind": kind}, "test").id


def windows(data: np.ndarray, names: list[str], sfreq: float, window_s: float, start_s: float = 0.0) -> str:
    sid = add_signal(data, names, sfreq, start_s)
    return str(ok("fixed_windows", source=sid, window_s=window_s)["epochs"]["id"])


def result_of(response: dict[str, Any], key: str) -> Any:
    return response[key]["value"]


# ----------------------------------------------------------------------------- preparation


def test_channel_max_correlation_matches_corrcoef_and_names_the_partner() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=2000)
    data = np.vstack([base, base * 0.8 + rng.normal(scale=0.3, size=2000), rng.normal(size=2000), np.zeros(2000)])
    sid = add_signal(data, ["a", "b", "c", "flat"])
    res = result_of(ok("channel_max_correlation", source=sid), "correlation")
    r = np.abs(np.corrcoef(data[:3]))
    np.fill_diagonal(r, 0)
    assert res["a"]["partner"] == "b" and res["b"]["partner"] == "a"
    assert res["a"]["max_abs_r"] == pytest.approx(r[0].max())
    assert res["c"]["max_abs_r"] == pytest.approx(r[2].max())
    assert res["flat"]["max_abs_r"] == 0.0
    assert code("channel_max_correlation", source=sid, channels=["a"]) == "bad_argument"
    assert code("channel_max_correlation", source=sid, channels=["a", "zz"]) == "unknown_channel"


def test_interpolate_bad_channels_equals_mne() -> None:
    import mne

    names = ["Fp1", "Fp2", "F3", "F4", "C3", "C4", "P3", "P4", "O1", "O2", "F7", "F8", "T7", "T8", "P7", "P8", "Fz", "Cz", "Pz"]
    rng = np.random.default_rng(1)
    data = rng.normal(scale=10, size=(len(names), 500))
    sid = add_signal(data, names, sfreq=250.0)
    out = ok("interpolate_bad_channels", source=sid, channels=["C3", "Pz"], montage="colin27_1020")
    got = value(out["signal"])
    raw = mne.io.RawArray(data * 1e-6, mne.create_info(names, 250.0, "eeg"), verbose="ERROR")
    raw.set_montage("colin27_1020", verbose="ERROR")
    raw.info["bads"] = ["C3", "Pz"]
    raw.interpolate_bads(reset_bads=True, verbose="ERROR")
    np.testing.assert_allclose(got.data, raw.get_data() * 1e6, rtol=1e-9, atol=1e-9)
    assert got.ch_names == names and out["interpolated"] == ["C3", "Pz"]
    np.testing.assert_allclose(got.data[0], data[0], rtol=1e-12)  # good channels untouched
    assert code("interpolate_bad_channels", source=sid, channels=["C3"], montage="nope") == "bad_argument"
    assert code("interpolate_bad_channels", source=sid, channels=[], montage="colin27_1020") == "bad_argument"
    assert code("interpolate_bad_channels", source=sid, channels=["Xx"], montage="colin27_1020") == "unknown_channel"
    other = add_signal(data[:3], ["Fp1", "Fp2", "E99"], sfreq=250.0)
    assert code("interpolate_bad_channels", source=other, channels=["Fp1"], montage="colin27_1020") == "unknown_channel"


def test_standardize_channel_names_on_eegmmidb() -> None:
    rec = ok("load_recording", path=EDF)["recording"]["id"]
    sig = ok("pick_channels", recording=rec, start_s=0, end_s=1)["signal"]["id"]
    out = ok("standardize_channel_names", source=sig)
    names = value(out["signal"]).ch_names
    assert names[:4] == ["FC5", "FC3", "FC1", "FCz"]
    for wanted in ("Fp1", "Fpz", "AFz", "PO7", "POz", "Iz", "T10", "TP8"):
        assert wanted in names
    assert out["renamed"]["Fc5."] == "FC5"
    assert len(set(names)) == 64
    assert [standard_label(n) for n in ("Cz..", "fp2", "O1 ")] == ["Cz", "Fp2", "O1"]
    mapped = ok("standardize_channel_names", source=sig, mapping={"Fc5.": "left"})
    assert value(mapped["signal"]).ch_names[0] == "left"
    assert value(mapped["signal"]).ch_names[1] == "Fc3."
    assert code("standardize_channel_names", source=sig, mapping={"Fc5.": "Fc3."}) == "bad_argument"
    assert code("standardize_channel_names", source=sig, mapping={"nope": "x"}) == "unknown_channel"


def test_linear_rescale_applies_gain_then_offset() -> None:
    data = np.array([[0.0, 1.0, 65535.0], [2.0, 3.0, 4.0]])
    sid = add_signal(data, ["a", "b"])
    out = value(ok("linear_rescale", source=sid, gain=2.0, offset=-1.0, channels=["a"])["signal"])
    np.testing.assert_allclose(out.data[0], [-1.0, 1.0, 131069.0])
    np.testing.assert_array_equal(out.data[1], data[1])
    assert code("linear_rescale", source=sid, gain=1.0, channels=["c"]) == "unknown_channel"


# ----------------------------------------------------------------------------- segmentation


def test_drop_epochs_in_spans_uses_half_open_epochs_and_closed_spans() -> None:
    data = np.zeros((1, 1000))
    ep = windows(data, ["x"], 100.0, 2.0, start_s=10.0)  # epochs [10,12), [12,14), ..., [18,20)
    spans = add_table(pd.DataFrame({
        "onset": [12.0, 15.0, 19.999, 30.0, 13.5],
        "duration": [0.0, 1.0, 1.0, 5.0, 0.5],
        "trial_type": ["BAD_x", "bad_y", "Bad", "bad", "face"],
    }))
    out = ok("drop_epochs_in_spans", epochs=ep, spans=spans, label_prefix="bad")
    kept = value(out["epochs"])
    # [14,16) overlaps 15-16 and [18,20) holds 19.999; a zero-length span at 12 s does not
    # overlap [12,14) (onset + duration > start fails); the "face" row is not selected.
    np.testing.assert_allclose(kept.onsets_s, [10.0, 12.0, 16.0])
    assert (out["dropped"], out["kept"], out["spans_selected"]) == (2, 3, 4)
    exact = ok("drop_epochs_in_spans", epochs=ep, spans=spans, labels=["face"])
    assert exact["dropped"] == 1  # 13.5-14.0 s overlaps [12,14) only: [14,16) starts where it ends
    strict = ok("drop_epochs_in_spans", epochs=ep, spans=spans, label_prefix="bad", ignore_case=False)
    assert strict["spans_selected"] == 2
    assert code("drop_epochs_in_spans", epochs=ep, spans=spans) == "bad_argument"
    assert code("drop_epochs_in_spans", epochs=ep, spans=spans, label_prefix="bad", onset_column="onset_s") == "bad_argument"


def test_reject_epochs_ptp_counts_and_joins_channel_groups() -> None:
    rng = np.random.default_rng(2)
    data = rng.normal(scale=5, size=(3, 1000))
    data[0, 120] = 200.0  # epoch 1 on channel a
    data[2, 750] = 300.0  # epoch 7 on channel c
    ep = windows(data, ["a", "b", "c"], 100.0, 1.0)
    ptp = np.ptp(data.reshape(3, 10, 100), axis=2)
    out = ok("reject_epochs_ptp", epochs=ep, ptp_uv=100, channels=[["a"], "b"])
    assert out["dropped"] == int((ptp[:2] > 100).any(axis=0).sum()) == 1
    assert ok("reject_epochs_ptp", epochs=ep, ptp_uv=100)["dropped"] == 2
    assert value(out["epochs"]).data.shape == (9, 3, 100)
    assert code("reject_epochs_ptp", epochs=ep, ptp_uv=0) == "bad_argument"
    assert code("reject_epochs_ptp", epochs=ep, ptp_uv=10, channels=["q"]) == "unknown_channel"


# ----------------------------------------------------------------------------- features


def test_epoch_region_band_power_matches_welch_and_trapezoid() -> None:
    rng = np.random.default_rng(3)
    fs = 200.0
    t = np.arange(2000) / fs
    data = rng.normal(size=(4, 2000)) + np.vstack([3 * np.sin(2 * np.pi * 10 * t)] * 2 + [np.zeros(2000)] * 2)
    ep = windows(data, ["a1", "a2", "b1", "b2"], fs, 2.0, start_s=5.0)
    out = ok("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["a1", "a2"], "B": ["b1", "b2"]},
             segment_s=1.0, difference=["A", "B"])
    frame = value(out["table"]).frame
    x = data.reshape(4, 5, 400).transpose(1, 0, 2)
    f, p = sps.welch(x - x.mean(axis=-1, keepdims=True), fs=fs, nperseg=200, noverlap=100, axis=-1)
    m = (f >= 8) & (f <= 13)
    db = 10 * np.log10(np.trapezoid(p[..., m], f[m], axis=-1))
    np.testing.assert_allclose(frame["A_db"], db[:, :2].mean(axis=1))
    np.testing.assert_allclose(frame["difference_db"], db[:, :2].mean(axis=1) - db[:, 2:].mean(axis=1))
    np.testing.assert_allclose(frame["epoch_start_s"], [5, 7, 9, 11, 13])
    assert result_of(out, "means")["A_db"] == pytest.approx(frame["A_db"].mean())
    per = ok("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["a1"]}, method="periodogram", decibels=False)
    f2, p2 = sps.periodogram(x[:, 0] - x[:, 0].mean(axis=-1, keepdims=True), fs=fs, window="hann", axis=-1)
    m2 = (f2 >= 8) & (f2 <= 13)
    np.testing.assert_allclose(value(per["table"]).frame["A_power"], np.trapezoid(p2[:, m2], f2[m2], axis=-1))
    mt = ok("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["a1"]}, method="multitaper", bandwidth_hz=2.0)
    assert np.isfinite(value(mt["table"]).frame["A_db"]).all()
    assert code("epoch_region_band_power", epochs=ep, band=[13, 8], regions={"A": ["a1"]}) == "bad_argument"
    assert code("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["zz"]}) == "unknown_channel"
    assert code("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["a1"]}, difference=["A", "C"]) == "bad_argument"
    assert code("epoch_region_band_power", epochs=ep, band=[8, 13], regions={"A": ["a1"]}, segment_s=5) == "out_of_range"


def test_signal_quality_summary_verdicts_and_line_ratio() -> None:
    rng = np.random.default_rng(4)
    fs = 1000.0
    t = np.arange(10000) / fs
    clean = rng.normal(scale=3, size=10000) + 2 * np.sin(2 * np.pi * 50 * t)
    noisy = clean.copy()
    noisy[1000:1100] = 40.0  # a clipped second, also over the peak-to-peak limit
    noisy[5000] = -45.0
    flat = rng.normal(scale=0.01, size=10000)
    sid = add_signal(np.vstack([clean, noisy, flat]), ["clean", "noisy", "flat"], fs)
    out = result_of(ok("signal_quality_summary", source=sid, ptp_uv=60, clip_uv=35, flat_sd_uv=0.5, max_bad_pct=10), "quality")
    assert out["clean"]["verdict"] == "usable" and out["clean"]["usable"] == 1
    assert out["noisy"]["bad_pieces"] == 2 and out["noisy"]["verdict"] == "artefact"
    assert out["noisy"]["clipped_pct"] == pytest.approx(100 * 101 / 10000)
    assert out["flat"]["verdict"] == "flat" and out["flat"]["usable"] == 0
    assert out["clean"]["sd_uv"] == pytest.approx(clean.std())
    f, p = sps.welch(clean - clean.mean(), fs=fs, window="hann", nperseg=2000, noverlap=1000)

    def area(lo: float, hi: float) -> float:
        m = (f >= lo) & (f <= hi)
        return float(np.trapezoid(p[m], f[m]))

    assert out["clean"]["line_noise_db"] == pytest.approx(10 * np.log10(area(48, 52) / area(1, 45)))
    lenient = result_of(ok("signal_quality_summary", source=sid, ptp_uv=60, clip_uv=35, max_bad_pct=20), "quality")
    assert lenient["noisy"]["verdict"] == "usable" and lenient["flat"]["verdict"] == "usable"
    assert code("signal_quality_summary", source=sid, ptp_uv=60, piece_s=100) == "out_of_range"
    assert code("signal_quality_summary", source=sid, ptp_uv=60, line_band=[52, 48]) == "bad_argument"


# ----------------------------------------------------------------------------- statistics


def test_paired_difference_test_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(1.0, 1.0, size=25)
    b = rng.normal(0.0, 1.0, size=25)
    tid = braintools.STATE.add("results", "tab", Table(pd.DataFrame({"a": a, "b": b, "d": a - b}), "features"), {}, "test").id
    w = result_of(ok("paired_difference_test", table=tid, column_a="a", column_b="b"), "test")
    ref = stats.wilcoxon(a - b)
    assert w["p_value"] == pytest.approx(ref.pvalue) and w["statistic"] == pytest.approx(ref.statistic)
    assert w["mean_difference"] == pytest.approx((a - b).mean()) and w["significant"] == (ref.pvalue < 0.05)
    one = result_of(ok("paired_difference_test", table=tid, column_a="d"), "test")
    assert one["p_value"] == pytest.approx(ref.pvalue) and one["mean_b"] is None
    t = result_of(ok("paired_difference_test", table=tid, column_a="a", column_b="b", test="t"), "test")
    assert t["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert code("paired_difference_test", table=tid, column_a="zz") == "bad_argument"
    assert code("paired_difference_test", table=tid, column_a="a", column_b="a") == "bad_argument"


def test_collect_named_results_builds_a_table_for_write_csv(roots: Any) -> None:
    rng = np.random.default_rng(6)
    ids = {}
    for k in (1, 2):
        sid = add_signal(rng.normal(scale=k, size=(1, 3000)), ["ch1"], 1000.0)
        ids[f"W{k}"] = ok("signal_quality_summary", source=sid, ptp_uv=5)["quality"]["id"]
    out = ok("collect_named_results", results=ids, label_column="window", rename={"bad_pieces": "bad_seconds"},
             extra_columns={"file": {"W1": "a.h5", "W2": "b.h5"}})
    collected = result_of(out, "collected")
    assert list(collected) == ["W1", "W2"] and "bad_seconds" in collected["W1"]
    frame = value(out["table"]).frame
    assert list(frame.columns[:2]) == ["window", "sd_uv"] and list(frame["file"]) == ["a.h5", "b.h5"]
    ranked = ok("rank", result_id=out["collected"]["id"], feature="sd_uv")
    assert result_of(ranked, "ranking")["order"] == ["W2", "W1"]
    written = ok("write_csv", table=out["table"]["id"], path="file_check/qc.csv", columns=["window", "file", "bad_seconds"])
    assert pd.read_csv(roots / "qc.csv").shape == (2, 3) and written["artifact"]["path"] == "file_check/qc.csv"
    assert code("collect_named_results", results=ids, extra_columns={"file": {"W1": "a.h5"}}) == "bad_argument"
    assert code("collect_named_results", results={}) == "bad_argument"
    two = add_signal(rng.normal(size=(2, 3000)), ["x", "y"], 1000.0)
    both = ok("signal_quality_summary", source=two, ptp_uv=5)["quality"]["id"]
    assert code("collect_named_results", results={"A": both}) == "bad_argument"
    assert result_of(ok("collect_named_results", results={"A": both}, channel="y"), "collected")["A"]["n_pieces"] == 3


def test_epochs_value_helpers_keep_labels() -> None:
    ep = Epochs(np.zeros((3, 1, 10)), 10.0, ["x"], ["eeg"], np.arange(10) / 10, np.array([0.0, 1.0, 2.0]), ["a", "b", "c"])
    eid = braintools.STATE.add("views", "ep", ep, {"kind": "epochs"}, "test").id
    spans = add_table(pd.DataFrame({"onset": [1.5], "duration": [0.1], "trial_type": ["bad"]}))
    kept = value(ok("drop_epochs_in_spans", epochs=eid, spans=spans, label_prefix="bad")["epochs"])
    assert kept.labels == ["a", "c"]
