"""Reference for nc_p1_hemisphere: which hemisphere's occipital channels carry the larger P1.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s
around the `sample` onsets of one condition, baseline epoch start..0 s, no rejection, no extra
filtering. For each channel group the window mean of the average is taken per channel and
then averaged over the group's channels.
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
    left, right = list(params["left_channels"]), list(params["right_channels"])
    onsets = events.loc[events["trial_type"].isin(params["trial_types"]), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_p1_hemisphere: no events of trial_type {params['trial_types']}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=left + right,
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    low, high = params["window_ms"]
    inside = (times_ms >= low) & (times_ms <= high)
    means = dict(zip(evoked.ch_names, evoked.data[:, inside].mean(axis=1) * 1e6))
    left_uv = float(np.mean([means[c] for c in left]))
    right_uv = float(np.mean([means[c] for c in right]))
    return {
        "left_p1_uv": round(left_uv, 2),
        "right_p1_uv": round(right_uv, 2),
        "p1_asymmetry_uv": round(right_uv - left_uv, 2),
        "larger_p1_hemisphere": "left" if left_uv > right_uv else "right",
    }
