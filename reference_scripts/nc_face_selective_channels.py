"""Reference for nc_face_selective_channels: where is the N170 face-selective?

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s around
the `sample` onsets, baseline epoch start..0 s, no rejection, no extra filtering. For each
candidate channel the face-minus-house difference of the condition averages is averaged over
the window; a channel is face-selective when that mean is at or below the threshold. The
reference conclusion states the set and the hemisphere with the larger mean effect.
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
    channels = left + right
    face = _window_means(raw, events, params["face_types"], channels, params["window_ms"])
    house = _window_means(raw, events, params["house_types"], channels, params["window_ms"])
    diff = {c: face[c] - house[c] for c in channels}
    threshold = float(params["threshold_uv"])
    selective = sorted(c for c in channels if diff[c] <= threshold)
    left_mean = float(np.mean([diff[c] for c in left]))
    right_mean = float(np.mean([diff[c] for c in right]))
    stronger = "right" if right_mean < left_mean else "left"
    return {
        "selective_channels": selective,
        "stronger_hemisphere": stronger,
        "differences_uv": {c: round(diff[c], 2) for c in channels},
        "conclusion": _conclusion(selective, stronger, left_mean, right_mean, threshold),
    }


def _window_means(raw, events, trial_types, channels, window_ms):
    onsets = events.loc[events["trial_type"].isin(trial_types), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_face_selective_channels: no events of trial_type {trial_types}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=channels,
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    inside = (times_ms >= window_ms[0]) & (times_ms <= window_ms[1])
    return dict(zip(evoked.ch_names, evoked.data[:, inside].mean(axis=1) * 1e6))


def _conclusion(selective, stronger, left_mean, right_mean, threshold):
    where = ", ".join(selective) if selective else "none of the candidate channels"
    return (f"A face-selective N170 (face minus house at or below {threshold:g} uV) is present at "
            f"{where}; the effect is larger over the {stronger} hemisphere (mean difference "
            f"left {left_mean:.2f} uV, right {right_mean:.2f} uV).")
