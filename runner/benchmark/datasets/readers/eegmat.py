"""EEG During Mental Arithmetic Tasks (EEGMAT; PhysioNet eegmat v1.0.0, Zyma et al. 2019): 36
subjects, each recorded at rest before and then during serial subtraction.

Licence: Open Data Commons Attribution License v1.0 (ODC-By 1.0). Obtain it from
https://physionet.org/content/eegmat/1.0.0/.

Native layout: <root>/Subject00_1.edf (background EEG before the task, about 3 min) and
<root>/Subject00_2.edf (during the mental arithmetic, 1 min) for Subject00..Subject35, with
<root>/subject-info.csv (age, gender, number of subtractions, count quality). EDF at 500 Hz:
'EEG Fp1', 'EEG Fp2', 'EEG F3', 'EEG F4', 'EEG F7', 'EEG F8', 'EEG T3', 'EEG T4', 'EEG C3',
'EEG C4', 'EEG T5', 'EEG T6', 'EEG P3', 'EEG P4', 'EEG O1', 'EEG O2', 'EEG Fz', 'EEG Cz',
'EEG Pz' (linked-ear reference), 'EEG A2-A1' and 'ECG ECG'. Files are looked for anywhere
under <root>.

Choices: 'EEG A2-A1', the difference of the two ear references, is misc, not EEG. The files
have no annotations; `events` holds the file's condition as one event at onset 0, "rest" for
_1 and "arithmetic" for _2, so a task can ask for one. The description does not name the
condition (a task may ask for it), though the key's _1/_2 encodes it. subject-info.csv is not
read.
"""
from __future__ import annotations

import re
from pathlib import Path

from runner.benchmark.datasets.base import ChannelKind, Recording
from runner.benchmark.datasets.readers.common import describe, kind_by_prefix, name_examples, named_files, read_edf

DATASET = "eegmat"
TITLE = "EEG During Mental Arithmetic Tasks"
FILE_NAME = re.compile(r"(Subject\d+)_([12])\.edf")
CONDITIONS = {"1": "rest", "2": "arithmetic"}
REFERENCE_DIFFERENCE = "EEG A2-A1"


def recordings(root: Path) -> list[Recording]:
    """Every Subject*_1.edf and Subject*_2.edf under `root`, sorted by key."""
    files = named_files(root, "Subject*.edf", FILE_NAME, "no Subject00_1.edf / Subject00_2.edf files (EEGMAT "
                        "layout: Subject<nn>_1.edf at rest and Subject<nn>_2.edf during the task, with subject-info.csv)")
    return sorted((read(path) for path in files), key=lambda recording: recording.key)


def kind_of(name: str) -> ChannelKind:
    """Kinds by the label's first word, but the ear-reference difference is no EEG channel."""
    return "misc" if name == REFERENCE_DIFFERENCE else kind_by_prefix(name)


def read(path: Path) -> Recording:
    """One EEGMAT file."""
    match = FILE_NAME.fullmatch(path.name)
    assert match is not None
    subject, condition = match.group(1), CONDITIONS[match.group(2)]
    signals = read_edf(path, kind_of)
    key = path.stem
    what = f"an EDF file of {sum(c.kind == 'eeg' for c in signals.channels)}-channel scalp EEG"
    naming = name_examples(signals.channels)
    if any(channel.name == REFERENCE_DIFFERENCE for channel in signals.channels):
        naming += f"; '{REFERENCE_DIFFERENCE}' is the difference of the two ear references"
    return Recording(
        dataset=DATASET, key=key, subject=subject, signal=path, suffix=".edf", channels=signals.channels,
        sfreq=signals.sfreq, duration_s=signals.duration_s,
        description=describe(what, TITLE, key, signals.channels, signals.sfreq, signals.duration_s,
                             naming, signals.other_rates()),
        events={condition: (0.0,)})
