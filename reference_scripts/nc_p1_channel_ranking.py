"""Reference for nc_p1_channel_ranking: candidate channels ranked by P1 peak amplitude.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s
around the `sample` onsets of one condition, baseline epoch start..0 s, no rejection, no extra
filtering. Each channel's P1 is the most positive sample of its average inside the window.
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
    channels = list(params["channels"])
    onsets = events.loc[events["trial_type"].isin(params["trial_types"]), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_p1_channel_ranking: no events of trial_type {params['trial_types']}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=channels,
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    low, high = params["window_ms"]
    inside = (times_ms >= low) & (times_ms <= high)
    peaks = {name: float(row[inside].max()) * 1e6 for name, row in zip(evoked.ch_names, evoked.data)}
    # Largest first; ties (never seen) keep the candidate order.
    ranking = sorted(channels, key=lambda c: -peaks[c])
    return {"p1_ranking": ranking, "p1_peaks_uv": {c: round(peaks[c], 2) for c in channels}}
