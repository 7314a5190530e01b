"""Reference for pi_eog_blink_count: count eye blinks on one PSG EOG channel by a peak rule.

The EOG channel (microvolts) is band-passed 1-10 Hz over the whole recording (4th-order
Butterworth, forward-backward), cut to the window, sign-flipped for negative-going blinks,
and its peaks are counted with scipy.signal.find_peaks(height=threshold, distance=0.5 s).
"""
import mne
import numpy as np
from scipy import signal


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    fs = raw.info["sfreq"]
    trace = raw.get_data(picks=[params["channel"]])[0] * 1e6
    sos = signal.butter(4, [1.0, 10.0], btype="bandpass", fs=fs, output="sos")
    filtered = signal.sosfiltfilt(sos, trace)
    first, stop = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    if stop > filtered.size:
        raise ValueError("pi_eog_blink_count: window ends past the recording")
    segment = filtered[first:stop]
    if params["polarity"] == "negative":
        segment = -segment
    peaks, props = signal.find_peaks(segment, height=float(params["threshold_uv"]),
                                     distance=int(round(0.5 * fs)))
    heights = props["peak_heights"]
    return {
        "blink_count": int(peaks.size),
        # Kept for auditing the margin of the rule, not scored.
        "_min_margin_uv": round(float(np.min(np.abs(heights - params["threshold_uv"]))), 3) if peaks.size else None,
    }
