"""Reference for nc_rejection_count: trials per condition left after a peak-to-peak rule.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s around
the `sample` onsets (an epoch running past the end of the file is left out). An epoch is
rejected when the peak-to-peak amplitude (max - min over the whole epoch) of any listed
channel exceeds the threshold; BAD annotations are not used. Baseline correction does not
change a peak-to-peak value, so none is applied.
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
    threshold = float(params["threshold_uv"]) * 1e-6
    counts = {}
    for name in ("face", "house"):
        counts[name] = _kept(raw, events, params[f"{name}_types"], params["channels"], threshold)
    return {"n_face_kept": counts["face"], "n_house_kept": counts["house"]}


def _kept(raw, events, trial_types, channels, threshold):
    onsets = events.loc[events["trial_type"].isin(trial_types), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_rejection_count: no events of trial_type {trial_types}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=None, picks=list(channels),
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    ptp = np.ptp(epochs.get_data(), axis=2)
    return int(np.sum(np.all(ptp <= threshold, axis=1)))
