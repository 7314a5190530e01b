"""Reference for pi_refusal_channel_window: RMS of a PSG channel in a window, or a refusal.

The request is invalid when the channel is not in the EDF file (unknown_channel) or the window
does not lie inside the recording (window_out_of_range). The RMS itself is computed for
valid requests (audit only; the task scores the status and the reason).
"""
import mne
import numpy as np


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    duration = raw.n_times / fs
    if params["channel"] not in raw.ch_names:
        return {"status": "invalid_request", "reason": "unknown_channel", "rms_uv": None}
    if params["start_s"] < 0 or params["end_s"] > duration or params["end_s"] <= params["start_s"]:
        return {"status": "invalid_request", "reason": "window_out_of_range", "rms_uv": None}
    first, stop = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    trace = raw.get_data(picks=[params["channel"]], start=first, stop=stop)[0] * 1e6
    return {"status": "ok", "reason": "none",
            "rms_uv": round(float(np.sqrt(np.mean((trace - trace.mean()) ** 2))), 2)}
