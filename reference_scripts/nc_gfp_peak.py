"""Reference for nc_gfp_peak: global field power peak of one condition's ERP.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s around
the `sample` onsets, baseline epoch start..0 s, no rejection, no extra filtering. GFP at each
latency is the population standard deviation (ddof 0) across the 128 channels of the average.
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
    onsets = events.loc[events["trial_type"].isin(params["trial_types"]), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_gfp_peak: no events of trial_type {params['trial_types']}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks="eeg",
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    gfp = evoked.data.std(axis=0) * 1e6
    times_ms = evoked.times * 1000.0
    low, high = params["window_ms"]
    inside = np.flatnonzero((times_ms >= low) & (times_ms <= high))
    peak = inside[np.argmax(gfp[inside])]
    return {
        "gfp_peak_latency_ms": round(float(times_ms[peak]), 1),
        "gfp_peak_uv": round(float(gfp[peak]), 2),
    }
