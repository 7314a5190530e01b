"""Reference for pi_pipeline_session_qc: quality control of three PLUX EEG sessions, the best
session's clean spectrum and the cleaned data, end to end.

Inputs S1, S2, S3 (in the binding's order) are OpenSignals HDF5 files of one single-lead EEG
(biosignalsplux solo, 1000 Hz, uint16 ADC values); the EEG is the one dataset raw/channel_<N>
(N differs between files). One of the three is flat (~0.02 uV: no signal). Per file:
ADC -> uV with the PLUX EEG transfer function; a 4th-order Butterworth band-pass 1-40 Hz,
zero phase, over the whole file; consecutive win_s windows from the first sample (a partial
rest dropped); a window is flagged when (a) any raw ADC value is <= sat_lo or >= sat_hi
(saturation), (b) the standard deviation of its unfiltered uV samples is below flat_uv
(no signal) or (c) the peak-to-peak of its band-passed samples is above ptp_uv. The best
session has the largest share of clean windows; its clean windows' mean Hann periodogram gives
the band's relative power (band / 1-40 Hz, half-open). Written: a CSV summary (file, windows,
flagged, clean_s) and the best session's clean band-passed windows joined as FIF (volts).
"""
import os

import h5py
import mne
import numpy as np
from scipy import signal

FS = 1000
LABELS = ("S1", "S2", "S3")
CSV_NAME = "qc_summary.csv"
FIF_NAME = "best_clean_raw.fif"


def read_eeg(path: str) -> np.ndarray:
    with h5py.File(path, "r") as handle:
        (device,) = list(handle.keys())
        (key,) = [k for k in handle[f"{device}/raw"] if k.startswith("channel_")]
        return handle[f"{device}/raw/{key}"][:, 0].astype(float)


def run(inputs: list[str], params: dict) -> dict:
    length = int(round(params["win_s"] * FS))
    sos = signal.butter(4, [1, 40], btype="bandpass", fs=FS, output="sos")
    sessions = {}
    for label, path in zip(LABELS, inputs):
        adc = read_eeg(path)
        uv = (adc / 2 ** 16 - 0.5) * 3.0 / 41782 * 1e6
        filtered = signal.sosfiltfilt(sos, uv)
        n = adc.size // length
        raw_w, uv_w, f_w = (x[:n * length].reshape(n, length) for x in (adc, uv, filtered))
        ptp = np.ptp(f_w, axis=1)
        if np.any(np.abs(ptp - params["ptp_uv"]) <= 1e-3 * params["ptp_uv"]):
            raise ValueError("pi_pipeline_session_qc: a window's peak-to-peak lies within 0.1% of the limit")
        flagged = ((raw_w.min(axis=1) <= params["sat_lo"]) | (raw_w.max(axis=1) >= params["sat_hi"])
                   | (uv_w.std(axis=1) < params["flat_uv"]) | (ptp > params["ptp_uv"]))
        sessions[label] = {"n": n, "flagged": flagged, "clean": f_w[~flagged]}
    share = {k: 1 - s["flagged"].mean() for k, s in sessions.items()}
    ranked = sorted(share, key=lambda k: -share[k])
    if share[ranked[0]] - share[ranked[1]] < 0.005:
        raise ValueError("pi_pipeline_session_qc: no clear best session")
    best = ranked[0]
    clean = sessions[best]["clean"]
    freqs, psd = signal.welch(clean, fs=FS, window="hann", nperseg=length, noverlap=length // 2,
                              detrend="constant", scaling="density", axis=-1)
    mean_psd = psd.mean(axis=0)
    band = mean_psd[(freqs >= params["band_lo"]) & (freqs < params["band_hi"])].sum()
    total = mean_psd[(freqs >= 1) & (freqs < 40)].sum()

    os.makedirs("file_check", exist_ok=True)
    csv = os.path.join("file_check", CSV_NAME)
    clean_s = {k: float((~s["flagged"]).sum() * length / FS) for k, s in sessions.items()}
    with open(csv, "w") as handle:
        handle.write("file,windows,flagged,clean_s\n")
        for k, s in sessions.items():
            handle.write(f"{k},{s['n']},{int(s['flagged'].sum())},{clean_s[k]:g}\n")
    fif = os.path.join("file_check", FIF_NAME)
    joined = clean.reshape(1, -1) * 1e-6
    mne.io.RawArray(joined, mne.create_info(["EEG"], FS, ch_types="eeg"), verbose="ERROR").save(
        fif, overwrite=True, verbose="ERROR")
    return {
        "s1_flagged": int(sessions["S1"]["flagged"].sum()),
        "s2_flagged": int(sessions["S2"]["flagged"].sum()),
        "s3_flagged": int(sessions["S3"]["flagged"].sum()),
        "best_file": best,
        "best_rel_power": round(float(band / total), 3),
        "qc_table": csv,
        "clean_file": fif,
        "table_properties": {
            "row_count": 3,
            "column_names": ["file", "windows", "flagged", "clean_s"],
            "total_duration_sec": float(sum(clean_s.values())),
        },
        "file_properties": {
            "channel_count": 1,
            "channel_names": ["EEG"],
            "sfreq_hz": float(FS),
            "duration_sec": float(joined.shape[1] / FS),
            "signal_rms": float(f"{np.sqrt(np.mean(joined ** 2)):.6g}"),
        },
    }
