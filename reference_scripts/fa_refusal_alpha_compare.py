"""Reference for fa_refusal_alpha_compare: compare two channels' alpha power, or refuse.

EEGMMIDB S001R02: if a requested channel is not in the file the request is invalid
(unknown_channel); if the window is not inside the recording it is invalid
(window_out_of_range). Otherwise Welch alpha (8-13 Hz) power of both channels in the window
decides whether the first or the second channel has more.
"""
import mne
import numpy as np
from scipy import signal


def alpha_power(x: np.ndarray, sfreq: float) -> float:
    nperseg = int(round(2 * sfreq))
    freqs, psd = signal.welch(x, fs=sfreq, window="hann", nperseg=nperseg,
                              noverlap=nperseg // 2, detrend="constant", scaling="density")
    return float(psd[(freqs >= 8) & (freqs <= 13)].sum())


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=False, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    duration = raw.n_times / sfreq
    first, second = params["channels"]
    start_s, end_s = params["window_s"]
    if first not in raw.ch_names or second not in raw.ch_names:
        return {"status": "invalid_request", "outcome": "unknown_channel"}
    if start_s < 0 or end_s > duration or end_s <= start_s:
        return {"status": "invalid_request", "outcome": "window_out_of_range"}
    start, stop = int(round(start_s * sfreq)), int(round(end_s * sfreq))
    data = raw.get_data(picks=[first, second], start=start, stop=stop) * 1e6
    powers = [alpha_power(row, sfreq) for row in data]
    return {"status": "ok", "outcome": "first" if powers[0] > powers[1] else "second",
            "alpha_ratio_first_to_second": round(powers[0] / powers[1], 4)}
