"""EEG Motor Movement/Imagery Dataset (EEGMMIDB; PhysioNet eegmmidb v1.0.0, Schalk et al.
2004, BCI2000): 109 subjects, 14 runs each.

Licence: Open Data Commons Attribution License v1.0 (ODC-By 1.0). Obtain it from
https://physionet.org/content/eegmmidb/1.0.0/.

Native layout: <root>/files/S001/S001R01.edf ... S001R14.edf (a copy without the files/ level
reads too; the .edf.event WFDB twins are not read). EDF+ with 64 EEG channels at 160 Hz,
labelled with dots padding each name to four characters ('Fc5.', 'Fc3.', ..., 'Cz..', ...,
'T10.', ..., 'O1..', 'Oz..', 'O2..', 'Iz..'), and annotations T0 (rest), T1 and T2 (the onset
of a real or imagined movement; which one by run). Runs: 1 baseline with the eyes open, 2
baseline with the eyes closed; 3, 7, 11 open and close the left (T1) or right (T2) fist;
4, 8, 12 imagine it; 5, 9, 13 open and close both fists (T1) or both feet (T2); 6, 10, 14
imagine it.

Choices: events are the annotations by text ("T0", "T1", "T2") with their onsets; the run's
condition and what T1/T2 mean in it are in the description (they are facts of the run, as
PhysioNet documents them). The key is the file's stem ("S001R04").
"""
from __future__ import annotations

import re
from pathlib import Path

from runner.benchmark.datasets.base import ChannelKind, Recording
from runner.benchmark.datasets.readers.common import describe, edf_annotations, events_from, named_files, read_edf

DATASET = "eegmmidb"
TITLE = "EEG Motor Movement/Imagery Dataset"
FILE_NAME = re.compile(r"(S\d{3})R(\d{2})\.edf")
FISTS = "T0 rest, T1 left fist, T2 right fist"
FISTS_FEET = "T0 rest, T1 both fists, T2 both feet"
TASKS = {
    0: ("opening and closing the left or right fist", FISTS),
    1: ("imagining opening and closing the left or right fist", FISTS),
    2: ("opening and closing both fists or both feet", FISTS_FEET),
    3: ("imagining opening and closing both fists or both feet", FISTS_FEET),
}
NAMING = "channel names padded with dots to four characters, like 'Fc5.', 'Cz..', 'T10.', 'Iz..'"


def recordings(root: Path) -> list[Recording]:
    """Every S<nnn>R<nn>.edf under `root` with its T0/T1/T2 events, sorted by key."""
    files = named_files(root, "S*R*.edf", FILE_NAME, "no S001/S001R01.edf ... files (EEGMMIDB layout: "
                        "files/S<nnn>/S<nnn>R<nn>.edf, runs 01-14 per subject)")
    return sorted((read(path) for path in files), key=lambda recording: recording.key)


def kind_of(name: str) -> ChannelKind:
    """Every signal of these files is a scalp EEG channel (the labels carry no type word)."""
    return "eeg"


def run_condition(run: int) -> str:
    """What the subject did in a run, and what its T0/T1/T2 annotations mark."""
    if run == 1:
        return "run 1: resting baseline with the eyes open, annotated T0"
    if run == 2:
        return "run 2: resting baseline with the eyes closed, annotated T0"
    if not 3 <= run <= 14:
        return f"run {run} (not one of the 14 documented runs)"
    task, markers = TASKS[(run - 3) % 4]
    return f"run {run}: {task}, annotated {markers}"


def read(path: Path) -> Recording:
    """One run."""
    match = FILE_NAME.fullmatch(path.name)
    assert match is not None
    signals = read_edf(path, kind_of)
    key = path.stem
    what = (f"an EDF+ file of {sum(c.kind == 'eeg' for c in signals.channels)}-channel EEG, "
            f"{run_condition(int(match.group(2)))}")
    return Recording(
        dataset=DATASET, key=key, subject=match.group(1), signal=path, suffix=".edf", channels=signals.channels,
        sfreq=signals.sfreq, duration_s=signals.duration_s,
        description=describe(what, TITLE, key, signals.channels, signals.sfreq, signals.duration_s, NAMING,
                             signals.other_rates()),
        events=events_from(edf_annotations(path)))
