"""Reference for fa_pipeline_plux_qc: a signal-quality report over windows of PLUX EEG files.

Four windows (params["windows"] maps the labels W1..W4 to {file, start_s, end_s}), each a
stretch of one single-lead PLUX recording (OpenSignals HDF5, 1000 Hz, 16-bit). Per window:
1. the EEG dataset converted to microvolts with PLUX's EEG transfer function,
   EEG(µV) = (ADC / 2^16 - 1/2) x 3 / 41782 x 1e6;
2. its standard deviation, the share of clipped samples (|EEG| >= 35 µV: the amplifier's range
   ends at about +-35.9 µV) and the number of bad seconds: consecutive 1-s sub-windows from
   the window's start (whole ones only) whose peak-to-peak exceeds a limit or that hold a
   clipped sample;
3. a verdict: "flat" when the standard deviation is below a floor, else "artefact" when more
   than a given share of its seconds are bad, else "usable";
4. the line-noise ratio, 10 log10(power in 48-52 Hz / power in 1-45 Hz) of the demeaned
   window, and the windows ranked by it (largest first);
5. the per-window table written as file_check/qc_report.csv.

The line-noise estimator is left to the solver: the ratio of the named window and the ranking
come from a method ensemble (Welch with 1-, 2- and 4-s Hann segments and 50% overlap, and a Hann
periodogram of the whole window; band power is the area under the PSD, trapezoidal rule).
"""
import os

import h5py
import numpy as np
import pandas as pd
from scipy import signal

FS = 1000
CLIP_UV = 35.0
FILE_NAME = "file_check/qc_report.csv"
COLUMNS = ["window", "file", "sd_uv", "clipped_pct", "bad_seconds", "line_noise_db", "verdict"]
LINE_BAND = (48.0, 52.0)
REFERENCE_BAND = (1.0, 45.0)


def run(inputs: list[str], params: dict) -> dict:
    by_name = {os.path.basename(path): path for path in inputs}
    cache, rows, ratios = {}, [], {}
    for label in sorted(params["windows"]):
        window = {"label": label, **params["windows"][label]}
        name = window["file"]
        if name not in cache:
            cache[name] = _eeg_uv(by_name[name])
        x = cache[name][int(round(window["start_s"] * FS)):int(round(window["end_s"] * FS))]
        seconds = x[: (len(x) // FS) * FS].reshape(-1, FS)
        clipped = np.abs(seconds) >= CLIP_UV
        ptp = np.ptp(seconds, axis=1)
        if (np.abs(ptp - params["ptp_uv"]) < 0.05).any():
            raise ValueError("fa_pipeline_plux_qc: a second's peak-to-peak lies at the limit")
        bad = int(((ptp > params["ptp_uv"]) | clipped.any(axis=1)).sum())
        sd = float(x.std())
        share = 100.0 * bad / len(seconds)
        if abs(sd - params["flat_sd_uv"]) < 0.05 * params["flat_sd_uv"] or abs(share - params["max_bad_pct"]) < 1e-9:
            raise ValueError("fa_pipeline_plux_qc: a window lies at a verdict threshold")
        verdict = "flat" if sd < params["flat_sd_uv"] else "artefact" if share > params["max_bad_pct"] else "usable"
        ratios[window["label"]] = _line_noise_db(x - x.mean())
        rows.append({"window": window["label"], "file": name, "sd_uv": round(sd, 3),
                     "clipped_pct": round(100.0 * float(np.mean(np.abs(x) >= CLIP_UV)), 3),
                     "bad_seconds": bad, "line_noise_db": None, "verdict": verdict})

    pipelines = list(next(iter(ratios.values())))
    ranking = {p: sorted(ratios, key=lambda label: -ratios[label][p]) for p in pipelines}
    named = {p: round(ratios[params["line_window"]][p], 2) for p in pipelines}
    for row in rows:
        row["line_noise_db"] = round(float(np.median(list(ratios[row["window"]].values()))), 2)
    os.makedirs("file_check", exist_ok=True)
    pd.DataFrame(rows, columns=COLUMNS).to_csv(FILE_NAME, index=False)

    return {
        "artifact_path": FILE_NAME,
        "file_properties": {"artifact_path": FILE_NAME, "row_count": len(rows), "column_names": COLUMNS},
        "total_bad_seconds": int(sum(row["bad_seconds"] for row in rows)),
        "usable_windows": [row["window"] for row in rows if row["verdict"] == "usable"],
        "artefact_windows": [row["window"] for row in rows if row["verdict"] == "artefact"],
        "line_noise_db": named,
        "line_noise_ranking": ranking,
    }


def _eeg_uv(path: str) -> np.ndarray:
    """The file's EEG dataset in µV: raw/channel_1 when there is a marker beside it, else the only channel."""
    with h5py.File(path, "r") as handle:
        (device,) = list(handle.keys())
        raw = handle[f"{device}/raw"]
        channels = sorted(k for k in raw.keys() if k.startswith("channel_"))
        key = "channel_1" if len(channels) > 1 else channels[0]
        adc = raw[key][:, 0].astype(float)
    return (adc / 2 ** 16 - 0.5) * 3.0 / 41782.0 * 1e6


def _line_noise_db(x: np.ndarray) -> dict:
    spectra = {}
    for seconds in (1, 2, 4):
        n = seconds * FS
        spectra[f"welch_{seconds}s"] = signal.welch(x, fs=FS, window="hann", nperseg=n, noverlap=n // 2,
                                                    detrend="constant")
    spectra["periodogram_hann"] = signal.periodogram(x, fs=FS, window="hann", detrend="constant")
    out = {}
    for name, (freqs, psd) in spectra.items():
        line = _area(freqs, psd, LINE_BAND)
        total = _area(freqs, psd, REFERENCE_BAND)
        out[name] = float(10 * np.log10(line / total))
    return out


def _area(freqs: np.ndarray, psd: np.ndarray, band: tuple) -> float:
    inside = (freqs >= band[0]) & (freqs <= band[1])
    return float(np.trapezoid(psd[inside], freqs[inside]))
