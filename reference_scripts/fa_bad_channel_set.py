"""Reference for fa_bad_channel_set: channels flagged bad by an explicit amplitude rule.

Reads one window of a 128-channel EDF recording (microvolts, no filtering), takes each
channel's standard deviation, and flags channels that are flat (std below a floor) or
outliers (robust z-score of the std, median/MAD across channels, above a threshold).
"""
import mne
import numpy as np


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=False, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    start = int(round(params["start_s"] * sfreq))
    stop = int(round((params["start_s"] + params["length_s"]) * sfreq))
    data = raw.get_data(start=start, stop=stop) * 1e6
    std = data.std(axis=1)
    median = np.median(std)
    mad = 1.4826 * np.median(np.abs(std - median))
    z = (std - median) / mad
    bad = (std < params["flat_uv"]) | (z > params["z_threshold"])
    names = [raw.ch_names[i] for i in np.flatnonzero(bad)]
    return {"bad_channels": names, "n_bad": len(names),
            "median_std_uv": round(float(median), 3), "mad_uv": round(float(mad), 3)}
