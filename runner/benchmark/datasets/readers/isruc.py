"""ISRUC-Sleep (Khalighi et al. 2016, Institute of Systems and Robotics, University of Coimbra):
whole-night polysomnographies in three subgroups: I (100 subjects, one recording each),
II (8 subjects, two sessions each), III (10 healthy subjects).

Licence: no licence text is published with the files; see the dataset site for its terms of
use. Obtain it from https://sleeptight.isr.uc.pt/ (one .rar archive per subject and subgroup).

Native layout, as the archives extract under a folder per subgroup: <root>/subgroupI/1/1.rec
with 1_1.txt and 1_2.txt; <root>/subgroupII/1/1/1.rec and <root>/subgroupII/1/2/2.rec (subject
1, sessions 1 and 2) each with its <n>_1.txt and <n>_2.txt; <root>/subgroupIII/1/1.rec. A .rec
is an EDF file (staged as .edf, the name mne needs) of about 19 signals at 200 Hz, labelled
as the files have them: 'LOC-A2', 'ROC-A1', 'F3-A2', 'C3-A2', 'O1-A2', 'F4-A1', 'C4-A1',
'O2-A1', 'X1' (chin EMG), 'X2' (ECG), 'X3'..'X8' (leg EMG, snore, airflow, efforts), 'SaO2',
'DC3', 'DC8' (some later files: 'E1-M2', 'E2-M1', 'F3-M2', ..., 'SpO2'). A hypnogram holds
one stage code per line per 30-s epoch: 0 W, 1 N1, 2 N2, 3 N3, 5 REM.

Choices: the subgroup folder may be named subgroupI/II/III (as in the download URLs) or
subgroup1/2/3, any case; the key is "subgroupI/1", or "subgroupII/1/2" for session 2 of
subgroup II's subject 1. Stages are scorer 1's (<n>_1.txt; <n>_2.txt is not read). Real
hypnograms can be a few epochs shorter or longer than the EDF's whole epochs: the shorter is
kept, so `stages` may end before the recording does. Kinds from the labels: LOC/ROC/E1/E2 are
EOG, 10-20 electrodes (F3, C4-A1, O2-M1, ...) EEG, X1 EMG, X2 ECG, everything else (leg EMG
X3/X4 included: a task asking for "the EMG" means the chin) misc. A code other than 0-3 and 5,
or a .rec without its scorer-1 file, is an error naming the file (and line).
"""
from __future__ import annotations

import re
from pathlib import Path

from runner.benchmark.datasets.base import ChannelKind, DatasetError, Recording
from runner.benchmark.datasets.readers.common import describe, n_epochs, name_examples, read_edf

DATASET = "isruc"
TITLE = "ISRUC-Sleep"
SUBGROUP_FOLDER = re.compile(r"subgroup(i{1,3}|[123])", re.IGNORECASE)
ROMAN = {"1": "I", "2": "II", "3": "III"}
STAGE_CODES = {"0": "W", "1": "N1", "2": "N2", "3": "N3", "5": "REM"}
EOG_LABEL = re.compile(r"(LOC|ROC|E1|E2)(-[AM][12])?", re.IGNORECASE)
EEG_LABEL = re.compile(r"(Fp|F|C|P|O|T)\d+(-[AM][12])?", re.IGNORECASE)
NAMED_X: dict[str, ChannelKind] = {"X1": "emg", "X2": "ecg"}
LAYOUT = ("ISRUC-Sleep layout as its archives extract: subgroupI/1/1.rec with 1_1.txt, "
          "subgroupII/1/2/2.rec with 2_1.txt, subgroupIII/1/1.rec with 1_1.txt")


def recordings(root: Path) -> list[Recording]:
    """Every <n>.rec under a subgroup folder of `root`, with scorer 1's stages, sorted by key."""
    root = Path(root)
    folders = sorted(path for path in root.rglob("*") if path.is_dir() and SUBGROUP_FOLDER.fullmatch(path.name))
    found = [read(rec, folder) for folder in folders for rec in sorted(folder.rglob("*.rec"))
             if rec.stem.isdigit()]
    if not found:
        raise DatasetError(f"{root}: no subgroupI/, subgroupII/ or subgroupIII/ folder with <n>/<n>.rec ({LAYOUT})")
    return sorted(found, key=lambda recording: recording.key)


def subgroup(folder: Path) -> str:
    """"subgroupII" for a folder named subgroupII, SubGroupii or subgroup2."""
    number = SUBGROUP_FOLDER.fullmatch(folder.name)
    assert number is not None
    return "subgroup" + ROMAN.get(number.group(1), number.group(1).upper())


def key_parts(rec: Path, folder: Path) -> tuple[str, ...]:
    """The folders from the subgroup folder down to the .rec, ending in its number."""
    parts = rec.parent.relative_to(folder).parts
    return parts if parts and parts[-1] == rec.stem else (*parts, rec.stem)


def kind_of(name: str) -> ChannelKind:
    """The kind an ISRUC label names (see the module docstring)."""
    if EOG_LABEL.fullmatch(name):
        return "eog"
    if EEG_LABEL.fullmatch(name):
        return "eeg"
    return NAMED_X.get(name.upper(), "misc")


def read(rec: Path, folder: Path) -> Recording:
    """One .rec and scorer 1's hypnogram beside it."""
    hypnogram = rec.with_name(f"{rec.stem}_1.txt")
    if not hypnogram.is_file():
        raise DatasetError(f"{rec}: no scorer-1 hypnogram {hypnogram.name} beside it ({LAYOUT})")
    signals = read_edf(rec, kind_of)
    scored = scorer_stages(hypnogram)
    parts = key_parts(rec, folder)
    group = subgroup(folder)
    key = "/".join((group, *parts))
    naming = name_examples(signals.channels)
    names = {channel.name.upper() for channel in signals.channels}
    if {"X1", "X2"} <= names:
        naming += "; 'X1' is the chin EMG and 'X2' the ECG"
    source = f"ISRUC-Sleep, subgroup {group.removeprefix('subgroup')}"
    return Recording(
        dataset=DATASET, key=key, subject=f"{group}/{parts[0]}", signal=rec, suffix=".edf",
        channels=signals.channels, sfreq=signals.sfreq, duration_s=signals.duration_s,
        description=describe("an EDF file of whole-night polysomnography", source, key, signals.channels,
                             signals.sfreq, signals.duration_s, naming, signals.other_rates()),
        stages=scored[:n_epochs(signals.duration_s)], companions=(hypnogram,))


def scorer_stages(path: Path) -> tuple[str, ...]:
    """One stage per line of an ISRUC hypnogram; DatasetError naming the file and line of a
    code that is not 0, 1, 2, 3 or 5 (trailing blank lines end the file)."""
    lines = path.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()
    stages = []
    for number, line in enumerate(lines, start=1):
        if line.strip() not in STAGE_CODES:
            raise DatasetError(f"{path}:{number}: expected one stage code per line (0 W, 1 N1, 2 N2, "
                               f"3 N3, 5 REM), got {line!r}")
        stages.append(STAGE_CODES[line.strip()])
    if not stages:
        raise DatasetError(f"{path}: an empty hypnogram; expected one stage code per 30-s epoch")
    return tuple(stages)
