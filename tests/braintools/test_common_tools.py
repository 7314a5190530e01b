"""Common tools on real data, checked against numpy/scipy/mne computed independently."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import mne
import numpy as np
import pandas as pd
import pytest
from scipy import signal as sps
from scipy import stats

import braintools
from braintools.data import Table
from tests.braintools.calls import code, first_id, ok

DATA = Path(__file__).resolve().parents[2] / "data"
EDF = "/input/eegmmidb/S001R02.edf"
FIF = "/input/mne_sample/test_raw.fif"


def edf_volts(channels: list[str]) -> tuple[np.ndarray, float]:
    raw = mne.io.read_raw_edf(DATA / "eegmmidb/S001R02.edf", preload=False, verbose="ERROR")
    return raw.get_data(picks=channels), float(raw.info["sfreq"])


def signal(path: str = EDF, **pick: Any) -> tuple[str, str]:
    rec = first_id(ok("load_recording", path=path))
    return rec, first_id(ok("pick_channels", recording=rec, **pick))


# artifacts ---------------------------------------------------------------------------------

def test_write_fif_roundtrip(roots: Path) -> None:
    _, sig = signal(FIF, types=["eeg"], exclude=["EEG 053"])
    crop = first_id(ok("crop_signal", source=sig, window_s=[2, 22], include_end=True))
    art = ok("write_fif", source=crop, path="file_check/out/clean_raw.fif")["artifact"]
    file = roots / "out/clean_raw.fif"
    assert art["path"] == "file_check/out/clean_raw.fif" and art["bytes"] == file.stat().st_size
    saved = mne.io.read_raw_fif(file, preload=True, verbose="ERROR")
    raw = mne.io.read_raw_fif(DATA / "mne_sample/test_raw.fif", preload=True, verbose="ERROR")
    raw.pick([n for n, t in zip(raw.ch_names, raw.get_channel_types()) if t == "eeg" and n != "EEG 053"]).crop(2, 22)
    assert len(saved.ch_names) == 59 and saved.n_times == raw.n_times == 12014
    assert saved.info["sfreq"] == raw.info["sfreq"]
    np.testing.assert_allclose(saved.get_data(), raw.get_data(), rtol=1e-6, atol=1e-12)
    assert braintools.STATE.entries[art["id"]].branch == "artifacts"


def test_write_csv_and_edf(roots: Path) -> None:
    entry = braintools.STATE.add("events", "evt", Table(pd.DataFrame({"onset_s": [1.5, 2.0], "label": ["a", "b"]}), "events"),
                                 {"kind": "events"}, "test")
    ok("write_csv", table=entry.id, path="events.csv", columns=["label"])
    assert (roots / "events.csv").read_text().splitlines() == ["label", "a", "b"]
    assert code("write_csv", table=entry.id, path="x.csv", columns=["nope"]) == "bad_argument"
    _, sig = signal(channels=["O1..", "Cz.."], end_s=10)
    ok("write_edf", source=sig, path="file_check/x.edf")
    back = mne.io.read_raw_edf(roots / "x.edf", preload=True, verbose="ERROR")
    data, _ = edf_volts(["O1..", "Cz.."])
    np.testing.assert_allclose(back.get_data(), data[:, :1600], atol=2e-7)


def test_artifact_refusals() -> None:
    _, sig = signal(channels=["O1.."], end_s=5)
    assert code("write_fif", source=sig, path="../escape_raw.fif") == "forbidden_path"
    assert code("write_fif", source=sig, path="/etc/evil_raw.fif") == "forbidden_path"
    assert code("write_fif", source=sig, path="file_check/x.txt") == "bad_argument"
    assert code("write_fif", source="sig99", path="a_raw.fif") == "unknown_id"
    assert code("write_csv", table=sig, path="a.csv") == "wrong_kind"


# preparation -------------------------------------------------------------------------------

def test_rereference_single_channel_and_band_filter() -> None:
    _, sig = signal(channels=["O1..", "Cz..", "Fz.."])
    ref = first_id(ok("rereference", source=sig, reference="Cz.."))
    filt = first_id(ok("filter_signal", source=ref, band=[1, 40]))
    data, fs = edf_volts(["O1..", "Cz..", "Fz.."])
    expected = mne.filter.filter_data((data - data[1]) * 1e6, fs, 1, 40, verbose="ERROR")
    got = braintools.STATE.entries[filt].value.data
    np.testing.assert_allclose(got, expected, atol=1e-9)
    assert np.all(got[1] == 0)
    avg = braintools.STATE.entries[first_id(ok("rereference", source=sig, reference="average"))].value.data
    np.testing.assert_allclose(avg, (data - data.mean(axis=0)) * 1e6, atol=1e-9)
    assert code("rereference", source=sig, reference=["nope"]) == "unknown_channel"
    assert code("filter_signal", source=sig, band=[1]) == "bad_argument"


def test_pick_duration_and_crop_window() -> None:
    rec, sig = signal(channels=["O1.."], start_s=10, duration_s=5)
    data, fs = edf_volts(["O1.."])
    np.testing.assert_allclose(braintools.STATE.entries[sig].value.data, data[:, 1600:2400] * 1e6)
    crop = braintools.STATE.entries[first_id(ok("crop_signal", source=sig, window_s=[11, 12], include_end=True))].value
    assert crop.n_samples == 161 and crop.start_s == 11
    assert code("crop_signal", source=sig, window_s=[11, 30]) == "out_of_range"
    assert code("pick_channels", recording=rec, start_s=60, duration_s=5) == "out_of_range"


# features and statistics -------------------------------------------------------------------

def test_time_features_channels_and_rank_labels() -> None:
    _, sig = signal(channels=["O1..", "Cz..", "Fz.."], end_s=30)
    res = ok("time_features", source=sig, features=["rms", "kurtosis"], channels=["Fz..", "O1.."])
    data, _ = edf_volts(["Fz..", "O1.."])
    x = data[:, :4800] * 1e6
    value = res["features"]["value"]
    assert list(value) == ["Fz..", "O1.."]
    assert value["O1.."]["rms"] == pytest.approx(np.sqrt(np.mean(x[1] ** 2)))
    assert value["Fz.."]["kurtosis"] == pytest.approx(stats.kurtosis(x[0], fisher=True, bias=True))
    ranking = ok("rank", result_id=res["features"]["id"], feature="rms", labels=["first", "second", "third"])["ranking"]["value"]
    order = list(np.argsort(-np.sqrt(np.mean(x ** 2, axis=1)), kind="stable"))
    assert ranking["positions"] == order and ranking["labels"] == [["first", "second"][i] for i in order]
    assert code("rank", result_id=res["features"]["id"], feature="rms", labels=["one"]) == "bad_argument"
    assert code("time_features", source=sig, features=["rms"], channels=["XX"]) == "unknown_channel"


def test_feature_ratio_spectral_edge_band_and_selections() -> None:
    _, sig = signal(channels=["O1..", "Fz.."], end_s=60)
    psd = first_id(ok("compute_psd", source=sig, segment_s=2))
    bp = first_id(ok("band_power", spectrum=psd, bands={"theta": [4, 8], "beta": [13, 30]}))
    ratio = ok("compare_results", a=bp, b=bp, feature="theta", feature_b="beta", operation="ratio")["comparison"]["value"]
    data, fs = edf_volts(["O1..", "Fz.."])
    f, p = sps.welch(data[:, :9600] * 1e6, fs=fs, nperseg=320, noverlap=160)
    expected = p[:, (f >= 4) & (f <= 8)].sum(axis=1) / p[:, (f >= 13) & (f <= 30)].sum(axis=1)
    assert ratio["O1.."]["value"] == pytest.approx(expected[0]) and ratio["Fz.."]["value"] == pytest.approx(expected[1])
    edge = ok("spectral_edge", spectrum=psd, percent=90, band=[1, 40])["edge"]["value"]
    keep = (f >= 1) & (f <= 40)
    share = np.cumsum(p[0, keep]) / p[0, keep].sum()
    assert edge["O1.."]["sef_hz"] == pytest.approx(f[keep][np.argmax(share >= 0.9)])
    above = first_id(ok("threshold", result_id=bp, feature="theta", value=0, operation=">"))
    none = first_id(ok("threshold", result_id=bp, feature="theta", value=0, operation="<"))
    assert ok("merge_selections", a=none, b=above)["selection"]["value"]["names"] == ["O1..", "Fz.."]
    assert ok("merge_selections", a=above, b=none, how="intersection")["selection"]["value"]["names"] == []
    assert code("merge_selections", a=bp, b=above) == "wrong_kind"
    assert code("spectral_edge", spectrum=psd, band=[100, 120]) == "out_of_range"


def test_check_request_reasons_and_usable_request() -> None:
    rec = first_id(ok("load_recording", path=EDF))
    good = ok("check_request", recording=rec, channels=["O1..", "Fz.."], window_s=[0, 30])["check"]["value"]
    assert good["feasible"] and good["reason"] == "ok" and good["usable"] == {"channels": ["O1..", "Fz.."], "start_s": 0, "end_s": 30}
    both = ok("check_request", recording=rec, channels=["O1", "Fz.."], window_s=[62, 80])["check"]["value"]
    assert both["reason"] == "unknown_channel" and both["missing_channels"] == ["O1"]
    assert both["usable"] == {"channels": ["Fz.."], "start_s": 0.0, "end_s": 61.0}
    window = ok("check_request", recording=rec, channels=["O1.."], window_s=[-5, 20])["check"]["value"]
    assert window["reason"] == "window_out_of_range" and window["usable"]["start_s"] == 0.0
    assert code("check_request", recording="rec42") == "unknown_id"


def test_aperiodic_fit_line_two_pass_and_band_excess() -> None:
    _, sig = signal(channels=["O1..", "Cz.."], end_s=60)
    psd = first_id(ok("compute_psd", source=sig, segment_s=2))
    fit = ok("aperiodic_fit", spectrum=psd, fmin=2, fmax=40, exclude=[[7, 14]], band=[8, 13])["fit"]["value"]
    data, fs = edf_volts(["O1..", "Cz.."])
    f, p = sps.welch(data[:, :9600] * 1e6, fs=fs, nperseg=320, noverlap=160)
    mask = (f >= 2) & (f <= 40) & ~((f >= 7) & (f <= 14))
    band = (f >= 8) & (f <= 13)
    for i, name in enumerate(["O1..", "Cz.."]):
        slope, intercept = np.polyfit(np.log10(f[mask]), np.log10(p[i, mask]), 1)
        background = 10 ** (intercept + slope * np.log10(f[band]))
        assert fit[name]["exponent"] == pytest.approx(-slope)
        assert fit[name]["offset"] == pytest.approx(intercept)
        assert fit[name]["excess_db"] == pytest.approx(10 * np.log10(p[i, band].sum() / background.sum()))
        assert 8 <= fit[name]["residual_peak_hz"] <= 13
    assert fit["O1.."]["excess_db"] > 6  # eyes-closed occipital alpha stands well above the background
    robust = ok("aperiodic_fit", spectrum=psd, fmin=2, fmax=40, two_pass=True)["fit"]["value"]
    slope, intercept = np.polyfit(np.log10(f[(f >= 2) & (f <= 40)]), np.log10(p[0, (f >= 2) & (f <= 40)]), 1)
    below = (f >= 2) & (f <= 40) & (np.log10(p[0]) <= intercept + slope * np.log10(np.where(f > 0, f, 1)))
    assert robust["O1.."]["exponent"] == pytest.approx(-np.polyfit(np.log10(f[below]), np.log10(p[0, below]), 1)[0])
    epochs = first_id(ok("fixed_windows", source=sig, window_s=20))
    per_epoch = ok("aperiodic_fit", spectrum=first_id(ok("compute_psd", source=epochs, segment_s=2)), exclude=[[7, 14]])
    first = sps.welch(data[1, :3200] * 1e6, fs=fs, nperseg=320, noverlap=160)[1]
    assert per_epoch["fit"]["value"]["0"]["Cz.."]["exponent"] == pytest.approx(-np.polyfit(np.log10(f[mask]), np.log10(first[mask]), 1)[0])
    assert code("aperiodic_fit", spectrum=psd, fmin=0) == "bad_argument"
    assert code("aperiodic_fit", spectrum=psd, exclude=[[14, 7]]) == "bad_argument"
    assert code("aperiodic_fit", spectrum=psd, fmin=2, fmax=2.5) == "out_of_range"
    assert code("aperiodic_fit", spectrum=psd, band=[100, 120]) == "out_of_range"
    assert code("aperiodic_fit", spectrum=sig) == "wrong_kind"


def test_coherence_of_pairs_matches_scipy() -> None:
    _, sig = signal(channels=["O1..", "O2..", "Fz.."], start_s=5, end_s=45)
    res = ok("coherence", source=sig, pairs=[["O1..", "O2.."], ["Fz", "O1"]], bands={"alpha": [8, 13], "beta": [13, 30]},
             segment_s=4)["coherence"]["value"]
    data, fs = edf_volts(["O1..", "O2..", "Fz.."])
    x = data[:, 800:7200] * 1e6
    f, c = sps.coherence(x[0], x[1], fs=fs, nperseg=640, noverlap=320)
    assert res["O1..|O2.."]["alpha"] == pytest.approx(c[(f >= 8) & (f <= 13)].mean())
    f, c = sps.coherence(x[2], x[0], fs=fs, nperseg=640, noverlap=320)
    assert res["Fz|O1"]["beta"] == pytest.approx(c[(f >= 13) & (f <= 30)].mean())
    assert code("coherence", source=sig, pairs=[["O1.."]], bands={"alpha": [8, 13]}) == "bad_argument"
    assert code("coherence", source=sig, pairs=[["O1..", "X9"]], bands={"alpha": [8, 13]}) == "unknown_channel"
    assert code("coherence", source=sig, pairs=[["O1..", "O2.."]], bands={"alpha": [8, 13]}, segment_s=60) == "out_of_range"
    assert code("coherence", source=sig, pairs=[["O1..", "O2.."]], bands={"alpha": [8, 13]}, overlap=1) == "bad_argument"
    assert code("coherence", source=sig, pairs=[["O1..", "O2.."]], bands={"x": [100, 120]}) == "out_of_range"


def test_log_ratio_comparisons() -> None:
    assert ok("compare", a=4.0, b=2.0, operation="log_ratio")["comparison"]["value"] == pytest.approx(np.log(2.0))
    assert code("compare", a=-1.0, b=2.0, operation="log_ratio") == "bad_argument"
    _, sig = signal(channels=["O1..", "O2.."], end_s=30)
    psd = first_id(ok("compute_psd", source=sig))
    alpha = first_id(ok("band_power", spectrum=psd, bands={"alpha": [8, 13], "beta": [13, 30]}))
    per = ok("compare_results", a=alpha, b=alpha, feature="alpha", feature_b="beta", operation="log_ratio")
    values = braintools.STATE.entries[alpha].value
    assert per["comparison"]["value"]["O2.."]["value"] == pytest.approx(np.log(values["O2.."]["alpha"] / values["O2.."]["beta"]))


def test_multitaper_and_welch_give_the_same_density_units() -> None:
    # A density in µV²/Hz either way: the band power of one recording must agree within the
    # estimators' difference, not by the factor of the sampling rate (mne's default normalisation).
    _, sig = signal(channels=["O1.."], end_s=60)
    powers = {}
    for method in ("welch", "multitaper"):
        psd = first_id(ok("compute_psd", source=sig, method=method, segment_s=4))
        powers[method] = ok("band_power", spectrum=psd, bands={"broad": [1, 40]},
                            integration="sum_times_df")["band_power"]["value"]["O1.."]["broad"]
    assert powers["multitaper"] == pytest.approx(powers["welch"], rel=0.2)
