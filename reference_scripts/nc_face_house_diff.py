"""Reference for nc_face_house_diff: mean of the face-minus-house difference wave in a window.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s around
the `sample` onsets, baseline epoch start..0 s, no rejection, no extra filtering; each
condition is averaged separately and the difference wave is face minus house.
"""
import mne
import numpy as np
import pandas as pd

TMIN, TMAX = -0.2, 0.5


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    channel = params["channel"]
    face = _average(raw, events, params["face_types"], channel)
    house = _average(raw, events, params["house_types"], channel)
    times_ms = face.times * 1000.0
    low, high = params["window_ms"]
    inside = (times_ms >= low) & (times_ms <= high)
    face_mean = float(face.data[0, inside].mean()) * 1e6
    house_mean = float(house.data[0, inside].mean()) * 1e6
    return {
        "face_mean_uv": round(face_mean, 2),
        "house_mean_uv": round(house_mean, 2),
        "difference_uv": round(face_mean - house_mean, 2),
    }


def _average(raw, events, trial_types, channel):
    onsets = events.loc[events["trial_type"].isin(trial_types), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_face_house_diff: no events of trial_type {trial_types}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=[channel],
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    return epochs.average()
