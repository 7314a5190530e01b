"""Reference for nc_erp_face_house: N170 amplitude for faces vs houses (pylossless data).

Average reference over all 128 channels, epochs -0.2..0.5 s around the `sample` onsets of
the events file, baseline from epoch start to 0 s, no rejection (annotations ignored), no
extra filtering (the stored data are already 1-30 Hz). The N170 is the most negative sample
of each condition's average at one channel inside a latency window.
"""
import mne
import numpy as np
import pandas as pd

TMIN, TMAX = -0.2, 0.5


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    events = pd.read_csv(inputs[1], sep="\t")
    window = params["window_ms"]
    face = _n170(raw, events, params["face_types"], params["channel"], window)
    house = _n170(raw, events, params["house_types"], params["channel"], window)
    return {
        "face_n170_amplitude_uv": round(face[1] * 1e6, 2),
        "house_n170_amplitude_uv": round(house[1] * 1e6, 2),
        "face_n170_latency_ms": face[0],
        "house_n170_latency_ms": house[0],
    }


def _n170(raw, events, trial_types, channel, window_ms):
    """(latency in ms, amplitude in V) of the most negative sample in the window."""
    onsets = events.loc[events["trial_type"].isin(trial_types), "sample"].to_numpy(dtype=int)
    if onsets.size == 0:
        raise ValueError(f"nc_erp_face_house: no events of trial_type {trial_types}")
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=[channel],
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    trace = evoked.data[0]
    # No sample falls exactly on 130 or 200 ms at 256 Hz, so inclusive bounds are unambiguous.
    inside = np.flatnonzero((times_ms >= window_ms[0]) & (times_ms <= window_ms[1]))
    peak = inside[np.argmin(trace[inside])]
    return round(float(times_ms[peak]), 1), float(trace[peak])
