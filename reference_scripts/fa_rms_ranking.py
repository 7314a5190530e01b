"""Reference for fa_rms_ranking: rank five EEGMMIDB channels by band-limited RMS amplitude.

Band-pass each listed channel's whole signal with MNE's default zero-phase FIR filter, take
the root mean square of the filtered signal over the whole recording, and order the channels
from the highest to the lowest RMS.
"""
import mne
import numpy as np


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    names = params["channels"]
    data = raw.get_data(picks=names) * 1e6
    low, high = params["band_hz"]
    data = mne.filter.filter_data(data, raw.info["sfreq"], l_freq=low, h_freq=high,
                                  verbose="ERROR")
    rms = np.sqrt(np.mean(data ** 2, axis=1))
    order = np.argsort(-rms, kind="stable")
    return {"ranking": [names[int(i)] for i in order],
            "rms_uv": {names[int(i)]: round(float(rms[i]), 3) for i in order}}
