"""Reference for pi_open_eye_state_change: when, inside a window, the subject's eye state changed,
and which way, from the PLUX single-lead EEG alone, by a method ensemble.

channel_1 is the EEG (uint16 ADC counts, cast to float). The window must hold exactly one change
of the protocol marker (channel_5; below 38000 = eyes closed), at least 5 s from either edge, or
the binding is refused. The marker gives only the cue; the EEG shows when the alpha rhythm
actually switched (here from 1.7 s before to 1.3 s after the cue), so the time is estimated from
the EEG and the marker only checks the direction.

Each pipeline builds a log alpha-power time course over the window and places the single change
point that best splits it into two constant levels (least squares); the direction is "closing"
when the later level is higher (alpha rises when the eyes close):
- sliding 1-s Hann periodogram alpha power (8-13 Hz), 0.25-s steps;
- sliding 2-s Welch (1-s Hann segments, 50% overlap) alpha power, 0.25-s steps;
- 4th-order Butterworth 8-13 Hz band-pass of the whole recording (zero phase), squared Hilbert
  envelope smoothed over 1 s, every 50 ms;
- MNE FIR 8-13 Hz band-pass, Hilbert envelope smoothed over 2 s, every 50 ms;
- the Butterworth envelope smoothed over 0.5 s, with the change taken where the course crosses
  the level halfway between the two fitted levels, nearest the least-squares change point.
"""
import h5py
import mne
import numpy as np
from scipy import signal

FS = 1000
MARKER_MID = 38000


def _split(values):
    """Index k of the best two-level split values[:k] | values[k:] (least squares)."""
    n = values.size
    csum, csq = np.cumsum(values), np.cumsum(values ** 2)
    best_k, best = 2, np.inf
    for k in range(2, n - 1):
        left = csq[k - 1] - csum[k - 1] ** 2 / k
        right = (csq[-1] - csq[k - 1]) - (csum[-1] - csum[k - 1]) ** 2 / (n - k)
        if left + right < best:
            best_k, best = k, left + right
    return best_k


def _change(times, values):
    k = _split(values)
    closing = values[k:].mean() > values[:k].mean()
    return float((times[k - 1] + times[k]) / 2), closing, k


def _sliding_periodogram(x, start_s, length_s, step_s, welch_segment_s=None):
    n, step = int(round(length_s * FS)), int(round(step_s * FS))
    times, power = [], []
    for k in range(0, x.size - n + 1, step):
        seg = x[k:k + n] - x[k:k + n].mean()
        if welch_segment_s is None:
            f, p = signal.periodogram(seg, fs=FS, window="hann")
        else:
            m = int(round(welch_segment_s * FS))
            f, p = signal.welch(seg, fs=FS, window="hann", nperseg=m, noverlap=m // 2)
        power.append(p[(f >= 8) & (f <= 13)].sum())
        times.append(start_s + (k + n / 2) / FS)
    return np.asarray(times), np.log(np.asarray(power))


def _envelope_course(band, a, b, smooth_s, power):
    env = np.abs(signal.hilbert(band))
    env = env ** 2 if power else env
    w = int(round(smooth_s * FS))
    smooth = np.convolve(env, np.ones(w) / w, mode="same")[a:b]
    idx = np.arange(w // 2, (b - a) - w // 2, 50)
    return (a + idx) / FS, np.log(smooth[idx])


def run(inputs: list[str], params: dict) -> dict:
    with h5py.File(inputs[0], "r") as handle:
        (device,) = list(handle.keys())
        eeg = handle[f"{device}/raw/channel_1"][:, 0].astype(float)
        marker = handle[f"{device}/raw/channel_5"][:, 0].astype(float)
    a, b = int(round(params["start_s"] * FS)), int(round(params["end_s"] * FS))
    if not 0 <= a < b <= eeg.size:
        raise ValueError("pi_open_eye_state_change: the window is outside the recording")
    low = marker[a:b] < MARKER_MID
    changes = np.flatnonzero(np.diff(low.astype(int))) + 1
    if changes.size != 1 or not 5 * FS <= changes[0] <= (b - a) - 5 * FS:
        raise ValueError("pi_open_eye_state_change: the window must hold one marker change, 5 s inside it")
    cue_closing = bool(low[changes[0]])
    centred = eeg - eeg.mean()
    sos = signal.butter(4, [8.0, 13.0], btype="bandpass", fs=FS, output="sos")
    iir = signal.sosfiltfilt(sos, centred)
    fir = mne.filter.filter_data(centred, FS, 8.0, 13.0, verbose="ERROR")
    x = eeg[a:b]
    courses = {
        "periodogram_1s": _sliding_periodogram(x, a / FS, 1.0, 0.25),
        "welch_2s": _sliding_periodogram(x, a / FS, 2.0, 0.25, welch_segment_s=1.0),
        "iir_envelope_power_1s": _envelope_course(iir, a, b, 1.0, power=True),
        "fir_envelope_2s": _envelope_course(fir, a, b, 2.0, power=False),
    }
    times, direction = {}, {}
    for name, (t, v) in courses.items():
        times[name], closing, _ = _change(t, v)
        direction[name] = "closing" if closing else "opening"
    t, v = _envelope_course(iir, a, b, 0.5, power=True)
    cp, closing, k = _change(t, v)
    level = (v[:k].mean() + v[k:].mean()) / 2
    above = v > level
    crossings = np.flatnonzero(above[1:] != above[:-1])
    nearest = crossings[np.argmin(np.abs(crossings + 0.5 - (k - 0.5)))]
    times["iir_envelope_0.5s_midlevel"] = float((t[nearest] + t[nearest + 1]) / 2)
    direction["iir_envelope_0.5s_midlevel"] = "closing" if closing else "opening"
    direction["marker_check"] = "closing" if cue_closing else "opening"
    return {
        "change_time_s": {name: round(value, 2) for name, value in sorted(times.items())},
        "change": dict(sorted(direction.items())),
        "_cue_time_s": round(float((a + changes[0]) / FS), 3),
    }
