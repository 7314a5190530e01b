"""multimodal tools: window flags, epoch selection, segment epochs, averaged spectra, joins,
two-group tests, version comparisons, choices, tables and plots; values checked against
numpy/scipy computed here, refusals by error code."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import signal as sps
from scipy import stats

import braintools
from braintools.data import Signal, Table
from tests.braintools.calls import code, ok


def add_signal(data: np.ndarray, names: list[str], sfreq: float = 100.0, start_s: float = 0.0) -> str:
    sig = Signal(np.atleast_2d(np.asarray(data, float)), sfreq, names, ["eeg"] * len(names), start_s)
    return braintools.STATE.add("views", "sig", sig, {"kind": "signal"}, "test").id


def add_result(value: Any) -> str:
    return braintools.STATE.add("results", "res", value, {"kind": "test"}, "test").id


def stored(entry: dict[str, Any]) -> Any:
    return braintools.STATE.entries[entry["id"]].value


def windows(data: np.ndarray, names: list[str], window_s: float = 1.0, sfreq: float = 100.0) -> str:
    sid = add_signal(data, names, sfreq)
    return str(ok("fixed_windows", source=sid, window_s=window_s)["epochs"]["id"])


def test_flag_feature_windows_absolute_median_and_any_channel() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 1000))
    x[0, 300:350] *= 10  # window 3, channel A
    x[1, 720] = 40  # window 7, channel B
    ep = windows(x, ["A", "B"])
    rms = np.sqrt(np.mean(x.reshape(2, 10, 100) ** 2, axis=2))  # (channels, windows)
    out = ok("flag_feature_windows", epochs=ep, feature="rms", threshold=2.0, scale="median")
    expected = np.flatnonzero(((rms.T > 2.0 * np.median(rms, axis=1))).any(axis=1))
    assert out["flags"]["value"]["names"] == [str(i) for i in expected] == ["3", "7"]
    only_a = ok("flag_feature_windows", epochs=ep, feature="max_abs", threshold=20, channels=["A"])
    assert only_a["flags"]["value"]["names"] == ["3"]
    low = ok("flag_feature_windows", epochs=ep, feature="std", threshold=float(x[0, :100].std()), channels=["A"],
             direction="below", inclusive=True)
    assert "0" in low["flags"]["value"]["names"] and "3" not in low["flags"]["value"]["names"]
    table = stored(out["table"]).frame
    np.testing.assert_allclose(table["rms_A"], rms[0])
    assert code("flag_feature_windows", epochs=ep, feature="rms", threshold=1, channels=["Z"]) == "unknown_channel"
    assert code("flag_feature_windows", epochs=ep, feature="nope", threshold=1) == "unsupported"


def test_flags_merge_and_select_epochs_by_label() -> None:
    x = np.zeros((1, 1000))
    x[0, 150] = 5
    x[0, 620] = -7
    ep = windows(x, ["A"])
    first = ok("flag_feature_windows", epochs=ep, feature="max", threshold=1)["flags"]["id"]
    second = ok("flag_feature_windows", epochs=ep, feature="min", threshold=-1, direction="below")["flags"]["id"]
    union = ok("merge_selections", a=first, b=second, how="union")["selection"]["id"]
    kept = ok("select_epochs_by_label", epochs=ep, selection=union)
    assert kept["counts"] == {"kept": 8, "left_out": 2, "kept_s": 8.0, "left_out_s": 2.0}
    assert stored(kept["epochs"]).labels == ["0", "2", "3", "4", "5", "7", "8", "9"]
    removed = stored(kept["left_out"]).frame
    assert removed["onset_s"].tolist() == [1.0, 6.0] and removed["duration_s"].tolist() == [1.0, 1.0]
    only = ok("select_epochs_by_label", epochs=ep, selection=union, keep=True)
    np.testing.assert_array_equal(stored(only["epochs"]).data[1, 0], x[0, 600:700])
    bogus = add_result({"names": ["42"]})
    assert code("select_epochs_by_label", epochs=ep, selection=bogus) == "bad_argument"
    assert code("select_epochs_by_label", epochs=ep, selection=add_result(3.0)) == "wrong_kind"


def test_epochs_in_segments_trims_and_labels() -> None:
    sid = add_signal(np.arange(2000.0)[None, :], ["A"], sfreq=100.0, start_s=0.0)
    segments = Table(pd.DataFrame({"onset_s": [1.0, 12.0], "duration_s": [5.5, 4.0], "label": ["low1", "low2"]}), "events")
    tid = braintools.STATE.add("events", "evt", segments, {"kind": "events"}, "test").id
    out = ok("epochs_in_segments", source=sid, segments=tid, epoch_s=2.0, trim_s=0.5)
    ep = stored(out["epochs"])
    # segment 1: samples 150..600 -> epochs at 150, 350 (a third would end at 750 > 600)
    assert ep.labels == ["low1_1", "low1_2", "low2_1"]
    assert ep.data[:, 0, 0].tolist() == [150.0, 350.0, 1250.0]
    assert out["per_segment"] == {"low1": 2, "low2": 1}
    assert code("epochs_in_segments", source=sid, segments=tid, epoch_s=10.0) == "out_of_range"
    far = Table(pd.DataFrame({"onset_s": [19.0], "duration_s": [5.0]}), "events")
    fid = braintools.STATE.add("events", "evt", far, {"kind": "events"}, "test").id
    assert code("epochs_in_segments", source=sid, segments=fid, epoch_s=1.0) == "out_of_range"


def test_average_epoch_spectrum_is_welch_over_windows_and_join() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 1000))
    ep = windows(x, ["A"], window_s=2.0)
    psd = ok("compute_psd", source=ep, segment_s=2.0)["spectrum"]["id"]
    mean = stored(ok("average_epoch_spectrum", spectrum=psd)["spectrum"])
    _, expected = sps.welch(x.reshape(5, 200), fs=100.0, nperseg=200, axis=-1)
    np.testing.assert_allclose(mean.power[0], expected.mean(axis=0))
    joined = stored(ok("join_epochs", epochs=ep)["signal"])
    np.testing.assert_array_equal(joined.data, x)
    sid = add_signal(x, ["A"])
    plain = ok("compute_psd", source=sid)["spectrum"]["id"]
    assert code("average_epoch_spectrum", spectrum=plain) == "wrong_kind"


def test_two_group_test_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    a_vals, b_vals = rng.uniform(1, 3, 12), rng.uniform(0.5, 2, 9)
    a = add_result({str(i): {"O1": {"alpha": v}} for i, v in enumerate(a_vals)})
    b = add_result({str(i): {"O1": {"alpha": v}} for i, v in enumerate(b_vals)})
    out = ok("two_group_test", a=a, b=b, feature="O1.alpha", transform="db")["test"]["value"]
    expected = stats.ttest_ind(10 * np.log10(a_vals), 10 * np.log10(b_vals), equal_var=False)
    assert out["statistic"] == pytest.approx(expected.statistic) and out["p_value"] == pytest.approx(expected.pvalue)
    assert out["mean_a"] == pytest.approx(a_vals.mean()) and out["n_b"] == 9
    mw = ok("two_group_test", a=a, b=b, feature="O1.alpha", test="mann_whitney")["test"]["value"]
    assert mw["p_value"] == pytest.approx(stats.mannwhitneyu(a_vals, b_vals).pvalue)
    paired = ok("two_group_test", a=a, b=b, feature="O1.alpha", test="paired_t")["test"]["value"]
    assert paired["n_a"] == 9 and paired["statistic"] == pytest.approx(stats.ttest_rel(a_vals[:9], b_vals).statistic)
    assert code("two_group_test", a=a, b=b, feature="O1.beta") == "bad_argument"
    negative = add_result({"x": -1.0, "y": 2.0})
    assert code("two_group_test", a=negative, b=negative, transform="log10") == "bad_argument"


def test_compare_versions_per_channel_and_pooled() -> None:
    rng = np.random.default_rng(4)
    ref = rng.normal(size=(2, 500))
    cleaned = ref * np.array([[0.5], [1.0]])
    cleaned[1] += 0.1
    r_id, c_id = add_signal(ref, ["A", "B"]), add_signal(cleaned, ["A", "B"])
    out = ok("compare_versions", source=c_id, reference=r_id)
    per = out["comparison"]["value"]
    assert per["A"]["power_change_db"] == pytest.approx(10 * np.log10(0.25))
    assert per["B"]["rms_difference"] == pytest.approx(0.1) and per["B"]["r"] == pytest.approx(1.0)
    pooled = out["pooled"]["value"]
    assert pooled["power_change_db"] == pytest.approx(10 * np.log10(np.mean(cleaned ** 2) / np.mean(ref ** 2)))
    short = add_signal(ref[:, :400], ["A", "B"])
    assert code("compare_versions", source=short, reference=r_id) == "bad_argument"
    assert code("compare_versions", source=c_id, reference=r_id, channels=["C"]) == "unknown_channel"


def test_choose_best_option_with_guards() -> None:
    scores = {"x": 3.0, "y": 2.0, "z": 1.0}
    guards = {"x": 2.5, "y": 0.4, "z": 0.1}
    assert ok("choose_best_option", scores=scores)["choice"]["value"]["choice"] == "x"
    capped = ok("choose_best_option", scores=scores, guards=guards, guard_max=1.0)["choice"]["value"]
    assert capped["choice"] == "y" and capped["eligible"] == ["y", "z"]
    assert ok("choose_best_option", scores=scores, prefer="min")["choice"]["value"]["choice"] == "z"
    assert ok("choose_best_option", scores=scores, guards=guards, guard_min=5)["choice"]["value"]["choice"] is None
    assert code("choose_best_option", scores={}) == "bad_argument"
    assert code("choose_best_option", scores=scores, guard_max=1.0) == "bad_argument"
    assert code("choose_best_option", scores=scores, guards={"x": 1.0}, guard_max=1.0) == "bad_argument"


def test_tabulate_rows_and_write_csv(roots: Any) -> None:
    rows = {"S1": {"windows": 10, "clean_s": 8.0}, "S2": {"windows": 12, "flagged": 3}}
    out = ok("tabulate_rows", rows=rows, name_column="file")
    frame = stored(out["table"]).frame
    assert list(frame.columns) == ["file", "windows", "clean_s", "flagged"] and frame["file"].tolist() == ["S1", "S2"]
    written = ok("write_csv", table=out["table"]["id"], path="file_check/t.csv")
    assert (roots / "t.csv").read_text().splitlines()[0] == "file,windows,clean_s,flagged"
    assert written["artifact"]["path"] == "file_check/t.csv"
    assert code("tabulate_rows", rows={}) == "bad_argument"
    assert code("tabulate_rows", rows={"a": {"name": 1}}) == "bad_argument"


def test_plot_group_values_writes_png(roots: Any) -> None:
    a = add_result({"0": 1.0, "1": 2.0, "2": 1.5})
    b = add_result({"0": 0.5, "1": 0.7})
    out = ok("plot_group_values", results=[a, b], path="file_check/g.png", labels=["a", "b"], transform="db")
    assert (roots / "g.png").read_bytes().startswith(b"\x89PNG")
    assert out["artifact"]["format"] == "png"
    assert code("plot_group_values", results=[a, b], path="file_check/g.jpg") == "unsupported"
    assert code("plot_group_values", results=[a, b], path="file_check/g.png", labels=["one"]) == "bad_argument"
    assert code("plot_group_values", results=[a], path="/etc/g.png") == "forbidden_path"
