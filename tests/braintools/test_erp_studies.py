"""The ERP study tools (bad channels, epoch counts, single-trial tables, median splits, 2 x 2 designs,
grand averages, wave correlations, figures, epoch arrays), on synthetic data with known answers
and once end to end on the pylossless recording against MNE."""
from __future__ import annotations

from pathlib import Path

import mne
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import braintools
from braintools.data import Epochs, Signal, Table
from tests.braintools.calls import code, ok, value
from tests.braintools.conftest import DATA

SFREQ = 100.0
TIMES = np.arange(-20, 51) / SFREQ  # -200 .. 500 ms


def add_signal(data: np.ndarray, names: list[str], types: list[str] | None = None) -> str:
    sig = Signal(np.asarray(data, float), SFREQ, names, types or ["eeg"] * len(names), 0.0)
    return braintools.STATE.add("views", "sig", sig, {"kind": "signal"}, "test").id


def add_epochs(data: np.ndarray, labels: list[str], names: list[str] | None = None, onsets: list[float] | None = None,
               types: list[str] | None = None) -> str:
    data = np.asarray(data, float)
    names = names or [f"C{i + 1}" for i in range(data.shape[1])]
    ep = Epochs(data, SFREQ, names, types or ["eeg"] * len(names), TIMES.copy(),
                np.asarray(onsets if onsets is not None else np.arange(len(data)) * 2.0, float), list(labels))
    return braintools.STATE.add("views", "ep", ep, {"kind": "epochs"}, "test").id


def add_table(frame: pd.DataFrame) -> str:
    return braintools.STATE.add("events", "evt", Table(frame, "events"), {"kind": "events"}, "test").id


def constant_epochs(levels: list[float], label: str, n_channels: int = 2) -> np.ndarray:
    """Epochs whose every sample equals the level of its epoch."""
    return np.array(levels, float)[:, None, None] * np.ones((1, n_channels, len(TIMES)))


def test_flag_bad_channels_uses_the_median_sd() -> None:
    rng = np.random.default_rng(1)
    data = rng.normal(0, 1, (5, 4000)) * np.array([1.0, 1.1, 0.9, 1.0, 9.0])[:, None]
    sig = add_signal(data, ["a", "b", "c", "d", "e"])
    found = ok("flag_bad_channels", source=sig, factor=5)["channels"]["value"]
    sd = data.std(axis=1)
    assert found["bad"] == ["e"] and found["good"] == ["a", "b", "c", "d"]
    assert found["median_sd_uv"] == pytest.approx(np.median(sd))
    assert found["sd_ratio"]["e"] == pytest.approx(sd[4] / np.median(sd), abs=1e-4)
    # the median is over the channels considered; a factor just above the ratio keeps everything
    assert ok("flag_bad_channels", source=sig, factor=float(sd[4] / np.median(sd)) + 0.01)["channels"]["value"]["bad"] == []
    subset = ok("flag_bad_channels", source=sig, factor=1.05, channels=["a", "b", "c"])["channels"]["value"]
    assert subset["bad"] == ["b"] and "e" not in subset["good"]
    assert code("flag_bad_channels", source=sig, factor=0) == "bad_argument"
    assert code("flag_bad_channels", source=sig, factor=3, channels=["x"]) == "unknown_channel"
    assert code("flag_bad_channels", source=add_epochs(constant_epochs([1, 2], "a"), ["a", "a"]), factor=3) == "wrong_kind"


def test_count_epochs_over_sets() -> None:
    a = add_epochs(constant_epochs([1, 2, 3], "a"), ["x", "y", "x"])
    b = add_epochs(constant_epochs([1, 2], "b"), ["z", "x"])
    assert ok("count_epochs", epochs=[a, b])["count"]["value"] == {"n_epochs": 5, "per_label": {"x": 3, "y": 1, "z": 1}}
    assert ok("count_epochs", epochs=[a, b], labels=["x"])["count"]["value"]["n_epochs"] == 3
    assert code("count_epochs", epochs=[]) == "bad_argument"
    assert code("count_epochs", epochs=["ep99"]) == "unknown_id"


def test_trial_values_are_window_means_per_epoch() -> None:
    data = np.zeros((3, 2, len(TIMES)))
    t_ms = TIMES * 1000
    data[:, 0, (t_ms >= 100) & (t_ms <= 200)] = np.array([1.0, 2.0, 3.0])[:, None]
    data[:, 1, (t_ms >= 100) & (t_ms <= 200)] = 5.0
    ep = add_epochs(data, ["f", "h", "f"], onsets=[1.0, 2.5, 4.0])
    table = ok("trial_values", epochs=ep, window_ms=[100, 200], channels=["C1"], value_column="amplitude_uv",
               label_column="trial_type")["table"]
    frame = value(table).frame
    assert list(frame.columns) == ["sample", "onset_s", "trial_type", "amplitude_uv"]
    assert frame["sample"].tolist() == [100, 250, 400] and frame["trial_type"].tolist() == ["f", "h", "f"]
    np.testing.assert_allclose(frame["amplitude_uv"], [1.0, 2.0, 3.0])
    both = value(ok("trial_values", epochs=ep, window_ms=[100, 200])["table"]).frame
    np.testing.assert_allclose(both["value"], [3.0, 3.5, 4.0])
    assert code("trial_values", epochs=ep, window_ms=[100, 200], value_column="sample") == "bad_argument"
    assert code("trial_values", epochs=ep, window_ms=[600, 700]) == "out_of_range"


def test_split_halves_orders_by_value_then_tie() -> None:
    frame = pd.DataFrame({"rt_ms": [300.0, 250.0, 250.0, 400.0, 350.0, 250.0, 900.0],
                          "stimulus_s": [5.0, 9.0, 2.0, 1.0, 3.0, 7.0, 8.0],
                          "correct": [True, True, True, True, True, True, False]})
    out = ok("split_halves", table=add_table(frame), value_column="rt_ms", labels=["fast", "slow"], where_column="correct",
             equals="True", tie_column="stimulus_s")
    halves = value(out["table"]).frame
    # six correct rows ordered 250@2, 250@7, 250@9 | 300@5, 350@3, 400@1: three per half, kept in table order
    assert halves["half"].tolist() == ["slow", "fast", "fast", "slow", "slow", "fast"]
    assert halves["stimulus_s"].tolist() == [5.0, 9.0, 2.0, 1.0, 3.0, 7.0]
    summary = out["summary"]["value"]
    assert summary["n_per_half"] == 3 and summary["mean_fast"] == 250.0 and summary["mean_slow"] == 350.0
    odd = value(ok("split_halves", table=add_table(frame.iloc[:5]), value_column="rt_ms", tie_column="stimulus_s")["table"]).frame
    assert sorted(odd["half"].tolist()) == ["high", "high", "low", "low"]  # the middle row (300) is in neither
    assert 300.0 not in odd["rt_ms"].tolist()
    ties = value(ok("split_halves", table=add_table(frame.iloc[[1, 2, 5]]), value_column="rt_ms", tie_column="stimulus_s")["table"]).frame
    assert ties.set_index("stimulus_s")["half"].to_dict() == {9.0: "high", 2.0: "low"}  # the tie column decides
    assert code("split_halves", table=add_table(frame), value_column="rt_ms", labels=["a", "a"]) == "bad_argument"
    assert code("split_halves", table=add_table(frame), value_column="nope") == "bad_argument"
    assert code("split_halves", table=add_table(frame.iloc[:1]), value_column="rt_ms") == "bad_argument"
    assert code("split_halves", table=add_table(frame.assign(rt_ms="x")), value_column="rt_ms") == "bad_argument"


def cells_epochs(means: list[float], n: int = 40, sd: float = 1.0, seed: int = 0) -> tuple[str, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    groups = [m + sd * rng.standard_normal(n + i) for i, m in enumerate(means)]  # unequal cell sizes
    levels = np.concatenate(groups)
    labels = [c for i, c in enumerate(["fu", "fi", "hu", "hi"]) for _ in range(len(groups[i]))]
    return add_epochs(constant_epochs(list(levels), "x", 1), labels), groups


def ols_interaction_p(groups: list[np.ndarray]) -> float:
    """Independent check: full vs additive OLS models by least squares."""
    y = np.concatenate(groups)
    cell = np.concatenate([np.full(len(g), i) for i, g in enumerate(groups)])
    a, b = np.where(cell // 2 == 0, 1.0, -1.0), np.where(cell % 2 == 0, -1.0, 1.0)
    full = np.column_stack([np.ones_like(y), a, b, a * b])
    sse_full = np.sum((y - full @ np.linalg.lstsq(full, y, rcond=None)[0]) ** 2)
    sse_add = np.sum((y - full[:, :3] @ np.linalg.lstsq(full[:, :3], y, rcond=None)[0]) ** 2)
    f = (sse_add - sse_full) / (sse_full / (len(y) - 4))
    return float(stats.f.sf(f, 1, len(y) - 4))


def test_factorial_2x2_effects_and_tests() -> None:
    ep, groups = cells_epochs([-2.0, -4.0, 0.0, 0.5])
    args = {"epochs": ep, "cells": ["fu", "fi", "hu", "hi"], "window_ms": [100, 200]}
    design = ok("factorial_2x2", **args)["design"]["value"]
    fu, fi, hu, hi = (float(g.mean()) for g in groups)
    assert design["cells"]["fi"] == {"n": 41, "mean_uv": pytest.approx(fi)}
    assert design["main_effect_a_uv"] == pytest.approx((fu + fi) / 2 - (hu + hi) / 2)
    assert design["main_effect_b_uv"] == pytest.approx((fi + hi) / 2 - (fu + hu) / 2)
    assert design["interaction_uv"] == pytest.approx((fi - fu) - (hi - hu))
    assert design["p_value"] == pytest.approx(ols_interaction_p(groups), rel=1e-9)
    assert design["significant"] == "yes" and design["n_total"] == sum(len(g) for g in groups)
    for test in ("welch_contrast", "aligned_rank", "bootstrap"):
        assert ok("factorial_2x2", **args, test=test)["design"]["value"]["significant"] == "yes", test
    boot = ok("factorial_2x2", **args, test="bootstrap")["design"]["value"]
    assert boot["ci_high"] < 0 and boot == ok("factorial_2x2", **args, test="bootstrap")["design"]["value"]  # seeded
    null_ep, null_groups = cells_epochs([1.0, 1.0, 1.0, 1.0], seed=3)
    null = {**args, "epochs": null_ep}
    for test in ("anova", "welch_contrast", "aligned_rank", "bootstrap"):
        assert ok("factorial_2x2", **null, test=test)["design"]["value"]["significant"] == "no", test
    welch = ok("factorial_2x2", **null, test="welch_contrast")["design"]["value"]["p_value"]
    v = np.array([g.var(ddof=1) / len(g) for g in null_groups])
    t = ((null_groups[1].mean() - null_groups[0].mean()) - (null_groups[3].mean() - null_groups[2].mean())) / np.sqrt(v.sum())
    df = v.sum() ** 2 / (v ** 2 / np.array([len(g) - 1 for g in null_groups])).sum()
    assert welch == pytest.approx(2 * stats.t.sf(abs(t), df))
    assert code("factorial_2x2", **{**args, "cells": ["fu", "fi", "hu"]}) == "bad_argument"
    assert code("factorial_2x2", **{**args, "cells": ["fu", "fi", "hu", "zz"]}) == "bad_argument"
    assert code("factorial_2x2", **args, alpha=1.5) == "bad_argument"
    assert code("factorial_2x2", **args, test="bootstrap", n_bootstrap=10) == "out_of_range"


def test_grand_average_and_correlation() -> None:
    wave = np.sin(TIMES * 20)
    a = add_epochs(wave[None, None, :], ["s1"])
    b = add_epochs(3 * wave[None, None, :] + 1, ["s2"])
    c = add_epochs(-wave[None, None, :], ["s3"])
    grand = value(ok("grand_average", evokeds=[a, b])["evoked"])
    np.testing.assert_allclose(grand.data[0, 0], 2 * wave + 0.5)
    assert grand.labels == ["grand average"]
    assert ok("correlate_waves", a=a, b=b)["correlation"]["value"]["r"] == pytest.approx(1.0)
    part = ok("correlate_waves", a=a, b=c, window_ms=[0, 500])["correlation"]["value"]
    assert part["r"] == pytest.approx(-1.0) and part["n_samples"] == 51
    assert code("correlate_waves", a=a, b=c, window_ms=[0, 10]) == "out_of_range"
    two = add_epochs(np.stack([wave, wave])[None], ["x"], names=["p", "q"])
    assert code("correlate_waves", a=two, b=two) == "bad_argument"  # two channels: name one
    assert ok("correlate_waves", a=two, b=two, channel="q")["correlation"]["value"]["r"] == pytest.approx(1.0)
    assert code("grand_average", evokeds=[a]) == "bad_argument"
    assert code("grand_average", evokeds=[a, two]) == "bad_argument"
    assert code("grand_average", evokeds=[a, add_epochs(constant_epochs([1, 2], "x", 1), ["x", "y"])]) == "bad_argument"


def test_plot_erp_and_write_epochs_npy(roots: Path) -> None:
    a = add_epochs(np.sin(TIMES * 20)[None, None, :], ["A"])
    b = add_epochs(np.cos(TIMES * 20)[None, None, :], ["B"])
    art = ok("plot_erp", evokeds=[a, b], path="file_check/figs/erp.png", labels=["a", "b"])["artifact"]
    assert art["path"] == "/workspace/file_check/figs/erp.png"
    assert (roots / "figs" / "erp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert code("plot_erp", evokeds=[a], path="erp.svg") == "unsupported"
    assert code("plot_erp", evokeds=[a], path="../../erp.png") == "forbidden_path"
    assert code("plot_erp", evokeds=[a, b], path="x.png", labels=["only one"]) == "bad_argument"

    data1 = np.arange(2 * 3 * len(TIMES), dtype=float).reshape(2, 3, len(TIMES))
    data2 = -np.arange(1 * 3 * len(TIMES), dtype=float).reshape(1, 3, len(TIMES))
    types = ["eeg", "eeg", "eog"]
    e1 = add_epochs(data1, ["1", "1"], names=["x", "y", "z"], onsets=[1.0, 5.0], types=types)
    e2 = add_epochs(data2, ["3"], names=["x", "y", "z"], onsets=[3.0], types=types)
    out = ok("write_epochs_npy", epochs=[e1, e2], path="file_check/clean.npy", types=["eeg"])
    saved = np.load(roots / "clean.npy")
    assert out["shape"] == [3, 2, len(TIMES)] and saved.shape == (3, 2, len(TIMES))
    np.testing.assert_array_equal(saved, np.stack([data1[0, :2], data2[0, :2], data1[1, :2]]))  # event order
    only = ok("write_epochs_npy", epochs=[e1, e2], path="file_check/one.npy", labels=["3"], channels=["z", "x"])
    assert only["shape"] == [1, 2, len(TIMES)]
    np.testing.assert_array_equal(np.load(roots / "one.npy")[0], data2[0, [2, 0]])
    assert code("write_epochs_npy", epochs=[e1], path="file_check/x.csv") == "unsupported"
    assert code("write_epochs_npy", epochs=[e1], path="file_check/x.npy", labels=["9"]) == "bad_argument"
    assert code("write_epochs_npy", epochs=[e1, a], path="file_check/x.npy") == "bad_argument"
    misc = add_epochs(data1, ["1", "1"], names=["x", "y", "s"], types=["eeg", "eeg", "stim"])
    assert code("write_epochs_npy", epochs=[misc], path="file_check/x.npy") == "bad_argument"


def test_bad_channels_and_rejection_match_mne_on_real_data() -> None:
    edf, tsv = "pylossless/sub-s01_task-faceO_eeg.edf", "pylossless/sub-s01_task-faceO_events.tsv"
    rec = ok("load_recording", path=edf)["recording"]["id"]
    evt = ok("read_table", path=tsv, separator="tab", kind="events")["table"]["id"]
    sig = ok("pick_channels", recording=rec)["signal"]["id"]
    bad = ok("flag_bad_channels", source=sig, factor=8)["channels"]["value"]
    raw = mne.io.read_raw_edf(DATA / edf, preload=True, verbose="ERROR")
    sd = raw.get_data().std(axis=1)
    assert bad["bad"] == [c for c, s in zip(raw.ch_names, sd) if s > 8 * np.median(sd)] == ["C10"]
    ref = ok("rereference", source=sig, mode="average", channels=bad["good"])["signal"]["id"]
    kept = ok("epoch_events", source=ref, events=evt, labels=["face-upright"], label_column="trial_type",
              time_column="sample", time_unit="samples", tmin_s=-0.2, tmax_s=0.5, baseline_end_s=0,
              channels=bad["good"], reject_uv={"eeg": 100})["epochs"]["id"]
    raw.drop_channels(bad["bad"]).set_eeg_reference("average", projection=False, verbose="ERROR")
    frame = pd.read_csv(DATA / tsv, sep="\t", encoding="utf-8-sig")
    onsets = frame.loc[frame["trial_type"] == "face-upright", "sample"].to_numpy(int)
    events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(raw, events, tmin=-0.2, tmax=0.5, baseline=(None, 0), reject={"eeg": 100e-6},
                        reject_by_annotation=False, preload=True, verbose="ERROR")
    assert ok("count_epochs", epochs=[kept])["count"]["value"]["n_epochs"] == len(epochs) < 198
