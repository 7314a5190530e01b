"""Reference for nc_erp_request_check: a windowed ERP mean that may be an invalid request.

The request names a channel, a condition and a latency window inside epochs of -0.2..0.5 s.
It is invalid when the channel is not one of the recording's channels (checked first) or when
the window does not lie inside the epoch. Valid requests are computed (average reference over
128 channels, baseline epoch start..0 s, no rejection) but only the status is scored.
"""
import mne
import numpy as np
import pandas as pd

TMIN, TMAX = -0.2, 0.5


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    channel = params["channel"]
    low, high = params["window_ms"]
    if channel not in raw.ch_names:
        return {"status": "invalid_request", "reason": "unknown_channel"}
    if low < TMIN * 1000.0 or high > TMAX * 1000.0 or low >= high:
        return {"status": "invalid_request", "reason": "window_out_of_range"}
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    onsets = events.loc[events["trial_type"].isin(params["trial_types"]), "sample"].to_numpy(dtype=int)
    mne_events = np.column_stack([onsets, np.zeros_like(onsets), np.ones_like(onsets)])
    epochs = mne.Epochs(
        raw, mne_events, tmin=TMIN, tmax=TMAX, baseline=(None, 0), picks=[channel],
        reject=None, flat=None, reject_by_annotation=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    inside = (times_ms >= low) & (times_ms <= high)
    return {"status": "ok", "reason": "none",
            "mean_uv": round(float(evoked.data[0, inside].mean()) * 1e6, 2)}
