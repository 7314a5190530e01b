"""Reference for pi_open_eog_propagation: the propagation factor of the vertical EOG into one EEG
channel of the MNE sample recording, by a method ensemble.

EEG and 'EOG 061' as stored (no SSP projector, no re-referencing), in the same unit. The factor b
is the slope of the channel on EOG 061 (channel ~ b x EOG + activity unrelated to the eyes);
blinks drive EOG 061 negative and the frontal EEG positive, so b is negative. Six pipelines:
- least squares on the window as stored (both means removed);
- the same after a 1-Hz high-pass, after a 1-15 Hz band-pass and after a 15-Hz low-pass of the
  whole recording (4th-order Butterworth, zero phase);
- least squares on blink epochs only: blinks found by mne.preprocessing.find_eog_events on
  EOG 061, -0.3 to +0.3 s around each blink inside the window, 1-15 Hz band-passed data, each
  epoch's mean removed, epochs concatenated;
- the ratio of the averaged blink waveforms at the EOG average's extremum (epochs -0.5 to
  +0.5 s of the stored data, baseline -0.5 to -0.3 s).
A window must hold at least one whole blink epoch.
"""
import mne
import numpy as np
from scipy import signal

EOG = "EOG 061"


def _slope(x, e):
    x, e = x - x.mean(), e - e.mean()
    return float((x * e).sum() / (e * e).sum())


def _filt(data, fs, low, high):
    if low is not None and high is not None:
        sos = signal.butter(4, [low, high], btype="bandpass", fs=fs, output="sos")
    elif low is not None:
        sos = signal.butter(4, low, btype="highpass", fs=fs, output="sos")
    else:
        sos = signal.butter(4, high, btype="lowpass", fs=fs, output="sos")
    return signal.sosfiltfilt(sos, data, axis=-1)


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_fif(inputs[0], preload=False, verbose="ERROR")
    fs = raw.info["sfreq"]
    data = raw.get_data(picks=[params["channel"], EOG]) * 1e6
    x, e = data
    a, b = int(round(params["start_s"] * fs)), int(round(params["end_s"] * fs))
    if not 0 <= a < b <= x.size:
        raise ValueError("pi_open_eog_propagation: window outside the recording")
    out = {"ols_as_stored": _slope(x[a:b], e[a:b])}
    for name, low, high in (("ols_highpass_1hz", 1.0, None), ("ols_bandpass_1_15hz", 1.0, 15.0),
                            ("ols_lowpass_15hz", None, 15.0)):
        xf, ef = _filt(data, fs, low, high)
        out[name] = _slope(xf[a:b], ef[a:b])
    raw_eog = mne.io.read_raw_fif(inputs[0], preload=True, verbose="ERROR").pick([EOG])
    blinks = mne.preprocessing.find_eog_events(raw_eog, ch_name=EOG, verbose="ERROR")[:, 0] - raw.first_samp
    half, wide, base = int(round(0.3 * fs)), int(round(0.5 * fs)), int(round(0.2 * fs))
    inside = [s for s in blinks if a + wide <= s and s + wide < b]
    if not inside:
        raise ValueError("pi_open_eog_propagation: no whole blink epoch inside the window")
    xf, ef = _filt(data, fs, 1.0, 15.0)
    seg_x = np.concatenate([xf[s - half:s + half] - xf[s - half:s + half].mean() for s in inside])
    seg_e = np.concatenate([ef[s - half:s + half] - ef[s - half:s + half].mean() for s in inside])
    out["blink_epochs_ols"] = _slope(seg_x, seg_e)
    avg_x = np.mean([x[s - wide:s + wide] - x[s - wide:s - wide + base].mean() for s in inside], axis=0)
    avg_e = np.mean([e[s - wide:s + wide] - e[s - wide:s - wide + base].mean() for s in inside], axis=0)
    peak = int(np.argmax(np.abs(avg_e)))
    out["average_blink_peak_ratio"] = float(avg_x[peak] / avg_e[peak])
    return {
        "propagation_factor": {name: round(value, 4) for name, value in sorted(out.items())},
        "_blinks_used": len(inside),
    }
