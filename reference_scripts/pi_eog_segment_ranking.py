"""Reference for pi_eog_segment_ranking: rank PSG segments by band-passed EOG activity.

The EOG derivation (one channel, or "A - B") is band-passed 0.5-15 Hz over the whole
recording with a 4th-order Butterworth (scipy N=4) applied forward-backward, then cut into
the given segments; activity is RMS or peak-to-peak of each segment.
"""
import mne
import numpy as np
from scipy import signal

BAND_HZ = (0.5, 15.0)


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    sfreq = raw.info["sfreq"]
    trace = _derivation(raw, params["derivation"])
    sos = signal.butter(4, BAND_HZ, btype="bandpass", fs=sfreq, output="sos")
    filtered = signal.sosfiltfilt(sos, trace)
    length = float(params["segment_s"])
    activity = []
    for index, start in enumerate(params["starts_s"]):
        first, stop = int(round(start * sfreq)), int(round((start + length) * sfreq))
        if stop > filtered.size:
            raise ValueError(f"pi_eog_segment_ranking: segment S{index + 1} ends past the recording")
        activity.append(_measure(filtered[first:stop], params["measure"]))
    # Stable sort on -activity: equal values (never seen in practice) keep label order.
    order = np.argsort(-np.asarray(activity), kind="stable")
    return {"ranking": [f"S{i + 1}" for i in order]}


def _derivation(raw, derivation: str) -> np.ndarray:
    """Signal in microvolts; "A - B" is channel A minus channel B."""
    names = [part.strip() for part in derivation.split(" - ")]
    data = raw.get_data(picks=names) * 1e6
    return data[0] - data[1] if len(names) == 2 else data[0]


def _measure(segment: np.ndarray, measure: str) -> float:
    if measure == "rms":
        return float(np.sqrt(np.mean(segment ** 2)))
    if measure == "ptp":
        return float(segment.max() - segment.min())
    raise ValueError(f"pi_eog_segment_ranking: unknown measure {measure!r}")
