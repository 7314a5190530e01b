"""Haaglanden Medisch Centrum sleep staging database (HMC; PhysioNet hmc-sleep-staging v1.1,
Alvarez-Estevez & Rijsman 2021): 151 whole-night clinical polysomnographies.

Licence: Open Data Commons Attribution License v1.0 (ODC-By 1.0). Obtain it from
https://physionet.org/content/hmc-sleep-staging/1.1/ (its recordings/ folder).

Native layout: <root>/recordings/SN001.edf, the PSG (EDF; 'EEG F4-M1', 'EEG C4-M1',
'EEG O2-M1', 'EEG C3-M2', 'EMG chin', 'EOG E1-M2', 'EOG E2-M2', 'ECG', all 256 Hz), beside
SN001_sleepscoring.edf (annotation-only EDF+: 'Sleep stage W', 'Sleep stage N1', 'Sleep stage
N2', 'Sleep stage N3', 'Sleep stage R', 'Lights off', 'Lights on') and SN001_sleepscoring.txt
(the same annotations as comma-separated rows under the header "Date, Time, Recording onset,
Duration, Annotation, Linked channel"). Files are looked for anywhere under <root>, so a copy
without the recordings/ level reads too.

Choices: the scoring EDF is read, its .txt twin only when the EDF is absent. Stages: one per
whole 30-s epoch of the PSG, placed by the annotation onsets (counted from the PSG's start:
the scoring file's own start is offset against it); an epoch no stage annotation covers is "?".
The other annotations ('Lights off', 'Lights on') become events named by their text. A PSG
with neither scoring file is an error naming it rather than skipped: a partial copy should say
what it lacks.
"""
from __future__ import annotations

import re
from pathlib import Path

from runner.benchmark.datasets.base import DatasetError, Recording
from runner.benchmark.datasets.readers.common import (
    describe,
    edf_annotations,
    events_from,
    kind_by_prefix,
    n_epochs,
    name_examples,
    read_edf,
    stages_from_annotations,
)

DATASET = "hmc"
TITLE = "Haaglanden Medisch Centrum sleep staging database"
STAGE_OF = {"Sleep stage W": "W", "Sleep stage N1": "N1", "Sleep stage N2": "N2",
            "Sleep stage N3": "N3", "Sleep stage R": "REM"}
PSG_NAME = re.compile(r"SN\d+\.edf")
LAYOUT = "HMC layout: recordings/SN001.edf with recordings/SN001_sleepscoring.edf or .txt"
TXT_COLUMNS = ("Recording onset", "Duration", "Annotation")


def recordings(root: Path) -> list[Recording]:
    """Every SN*.edf PSG under `root` with its stages, sorted by key."""
    root = Path(root)
    psgs = sorted(path for path in root.rglob("SN*.edf") if PSG_NAME.fullmatch(path.name))
    if not psgs:
        raise DatasetError(f"{root}: no recordings/SN*.edf with a matching _sleepscoring.edf ({LAYOUT})")
    return sorted((read(psg) for psg in psgs), key=lambda recording: recording.key)


def scoring_file(psg: Path) -> Path:
    """The PSG's scoring file: _sleepscoring.edf, else _sleepscoring.txt."""
    for suffix in (".edf", ".txt"):
        candidate = psg.with_name(f"{psg.stem}_sleepscoring{suffix}")
        if candidate.is_file():
            return candidate
    raise DatasetError(f"{psg}: no {psg.stem}_sleepscoring.edf (nor .txt) beside it ({LAYOUT})")


def read(psg: Path) -> Recording:
    """One PSG and its scoring."""
    scoring = scoring_file(psg)
    signals = read_edf(psg, kind_by_prefix)
    annotations = (edf_annotations(scoring, since=signals.header.start) if scoring.suffix == ".edf"
                   else txt_annotations(scoring))
    key = psg.stem
    what = "an EDF file of whole-night polysomnography"
    return Recording(
        dataset=DATASET, key=key, subject=key, signal=psg, suffix=".edf", channels=signals.channels,
        sfreq=signals.sfreq, duration_s=signals.duration_s,
        description=describe(what, TITLE, key, signals.channels, signals.sfreq, signals.duration_s,
                             name_examples(signals.channels), signals.other_rates()),
        stages=stages_from_annotations(annotations, STAGE_OF, n_epochs(signals.duration_s)),
        events=events_from(annotations, skip=STAGE_OF), companions=(scoring,))


def txt_annotations(path: Path) -> list[tuple[float, float, str]]:
    """(onset s, duration s, text) rows of a _sleepscoring.txt; DatasetError naming the file
    and line of a header or row that is not of that form."""
    lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    header = [cell.strip() for cell in lines[0].split(",")] if lines else []
    if not set(TXT_COLUMNS) <= set(header):
        raise DatasetError(f"{path}:1: expected the header 'Date, Time, Recording onset, Duration, "
                           f"Annotation, Linked channel', got {lines[0] if lines else ''!r}")
    onset, duration, text = (header.index(column) for column in TXT_COLUMNS)
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = [cell.strip() for cell in line.split(",")]
        if not line.strip():
            continue
        try:
            rows.append((float(cells[onset]), float(cells[duration]), cells[text]))
        except (IndexError, ValueError):
            raise DatasetError(f"{path}:{number}: expected 'date, time, onset s, duration s, annotation, "
                               f"linked channel', got {line!r}") from None
    return rows
