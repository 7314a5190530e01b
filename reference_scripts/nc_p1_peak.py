"""Reference for nc_p1_peak: P1 peak amplitude and latency of one condition at one channel.

pylossless face/house data: average reference over all 128 channels, epochs -0.2..0.5 s
around the `sample` onsets of the chosen trial types, baseline epoch start..0 s, no
rejection, no extra filtering; the P1 is the most positive sample of the average inside the
latency window.
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
    evoked = _average(raw, events, params["trial_types"], params["channel"])
    times_ms = evoked.times * 1000.0
    low, high = params["window_ms"]
    inside = np.flatnonzero((times_ms >= low) & (times_ms <= high))
    trace = evoked.data[0]
    peak = inside[np.argmax(trace[inside])]
    return {
        "p1_amplitude_uv": round(float(trace[peak]) * 1e6, 2),
        "p1_latency_ms": round(float(times_ms[peak]), 1),
    }


def _average(raw, events, trial_types, channel):
    onsets = events.loc[events["trial_type"].isin(trial_types), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_p1_peak: no events of trial_type {trial_types}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=[channel],
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    return epochs.average()
