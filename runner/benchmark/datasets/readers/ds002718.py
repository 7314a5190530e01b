"""OpenNeuro ds002718, "Face processing EEG dataset for EEGLAB": the EEG of Wakeman & Henson's
(2015) famous / unfamiliar / scrambled face recognition study, prepared for EEGLAB (Truong,
Martinez, Delorme), 18 subjects (sub-002..sub-019).

Licence: CC0. Obtain it from https://openneuro.org/datasets/ds002718 (the OpenNeuro download,
openneuro-py, or the public S3 bucket openneuro.org/ds002718).

Native layout (BIDS EEG): <root>/dataset_description.json, participants.tsv and
sub-002/eeg/sub-002_task-FaceRecognition_eeg.set with its .fdt (EEGLAB; 74 channels 'EEG001'
.. 'EEG074' at 250 Hz, of which EEG061/EEG062 are HEOG/VEOG, EEG063 ECG and EEG064 unused),
_events.tsv (onset, duration, sample, trial_type: famous_new, unfamiliar_second_early,
scrambled_second_late, ..., button presses), _channels.tsv (name, type, units), _eeg.json,
_electrodes.tsv, _coordsystem.json; sub-002/anat/ is not read.

The reader is written for BIDS EEG generally: any <root>/sub-*/[ses-*/]eeg/*_eeg.{set,edf,bdf,
vhdr} with its sidecars, found beside it or, by BIDS inheritance, in a parent folder (the most
specific match). Kinds come from the _channels.tsv type column (EEG; EOG, HEOG, VEOG; EMG; ECG,
EKG; anything else misc), from mne's channel types for a channel it does not list. Events are
the _events.tsv onsets by trial_type (by value when there is no trial_type; n/a skipped), and
`events_tsv` points at the file. The key is the file name less _eeg.<ext>.

Choices: an EEGLAB .set names its .fdt inside, so a renamed copy cannot be read (and a
BrainVision .vhdr names its .eeg/.vmrk): such a recording is staged as EDF, `content` giving
the bytes of mne's export of it (deterministic: a fixed start date when the file has none; EDF
quantises each channel type's range to 16 bits). EDF and BDF files are staged as they are.
"""
from __future__ import annotations

import csv
import datetime as dt
import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from runner.benchmark.datasets.base import Channel, ChannelKind, DatasetError, Recording
from runner.benchmark.datasets.readers.common import describe, name_examples

DATASET = "ds002718"
TITLE = "OpenNeuro ds002718 (Face processing EEG dataset for EEGLAB)"
FORMATS = (".set", ".edf", ".bdf", ".vhdr")
CONVERTED = (".set", ".vhdr")  # formats that name their companion files: staged as EDF
BIDS_KINDS: dict[str, ChannelKind] = {"EEG": "eeg", "EOG": "eog", "HEOG": "eog", "VEOG": "eog", "EMG": "emg",
                                      "ECG": "ecg", "EKG": "ecg"}
MNE_KINDS: dict[str, ChannelKind] = {"eeg": "eeg", "eog": "eog", "emg": "emg", "ecg": "ecg"}
FIXED_START = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
LAYOUT = "BIDS EEG layout: sub-*/[ses-*/]eeg/*_eeg.{set,edf,bdf,vhdr} with _channels.tsv and _events.tsv"


def recordings(root: Path) -> list[Recording]:
    """Every BIDS EEG recording under `root`, sorted by key."""
    root = Path(root)
    files = sorted(path for pattern in ("sub-*/eeg/*_eeg.*", "sub-*/ses-*/eeg/*_eeg.*")
                   for path in root.glob(pattern) if path.suffix.lower() in FORMATS)
    if not files:
        raise DatasetError(f"{root}: no sub-*/eeg/*_eeg.set (.edf, .bdf, .vhdr) recording ({LAYOUT})")
    name = dataset_name(root)
    return sorted((read(path, root, name) for path in files), key=lambda recording: recording.key)


def dataset_name(root: Path) -> str:
    """The dataset's Name from dataset_description.json, with the OpenNeuro id."""
    path = root / "dataset_description.json"
    try:
        title = str(json.loads(path.read_text(encoding="utf-8")).get("Name", "")).strip()
    except (OSError, ValueError, AttributeError):
        title = ""
    return f"{title}, OpenNeuro {DATASET}" if title else f"OpenNeuro {DATASET}"


def entities(name: str) -> dict[str, str]:
    """BIDS key-value entities of a file name ("sub-002_task-X_eeg.set" -> sub, task)."""
    pairs = (part.split("-", 1) for part in name.split(".")[0].split("_")[:-1] if "-" in part)
    return {key: value for key, value in pairs}


def sidecar(recording: Path, suffix: str, root: Path) -> Path | None:
    """The recording's `_<suffix>` file: beside it, else up to `root` by BIDS inheritance
    (a file whose entities are a subset of the recording's; the most specific wins)."""
    wanted = entities(recording.name).items()
    folder = recording.parent
    while True:
        matches = [path for path in sorted(folder.glob(f"*_{suffix}")) if entities(path.name).items() <= wanted]
        if matches:
            return max(matches, key=lambda path: len(entities(path.name)))
        if folder == root or root not in folder.parents:
            return None
        folder = folder.parent


def open_raw(path: Path, preload: bool) -> Any:
    """mne's Raw of a BIDS recording; DatasetError naming it when mne cannot read it (a .set
    without its .fdt, a truncated file)."""
    import mne

    try:
        return mne.io.read_raw(path, preload=preload, verbose="error")
    except (OSError, ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
        raise DatasetError(f"{path}: mne cannot read this recording ({type(exc).__name__}: {exc}); "
                           "an EEGLAB .set needs the .fdt it names beside it") from exc


def read(path: Path, root: Path, source: str) -> Recording:
    """One recording and its sidecars."""
    raw = open_raw(path, preload=False)
    channels_tsv = sidecar(path, "channels.tsv", root)
    events_tsv = sidecar(path, "events.tsv", root)
    listed = channel_types(channels_tsv) if channels_tsv else {}
    channels = tuple(Channel(str(name), listed.get(str(name)) or MNE_KINDS.get(str(kind), "misc"))
                     for name, kind in zip(raw.ch_names, raw.get_channel_types()))
    sfreq, duration_s = float(raw.info["sfreq"]), float(raw.n_times / raw.info["sfreq"])
    key = path.name[:path.name.rindex("_eeg.")]
    converted = path.suffix.lower() in CONVERTED
    task = entities(path.name).get("task", "")
    origin = "EEGLAB .set" if path.suffix.lower() == ".set" else "BrainVision recording"
    what = f"an EDF file converted from the {origin}" if converted else f"an {path.suffix[1:].upper()} file"
    what += f" of {sum(c.kind == 'eeg' for c in channels)}-channel EEG" + (f" during task {task}" if task else "")
    return Recording(
        dataset=DATASET, key=key, subject=key.split("_")[0], signal=path,
        suffix=".edf" if converted else path.suffix.lower(), channels=channels, sfreq=sfreq, duration_s=duration_s,
        description=describe(what, source, key, channels, sfreq, duration_s, name_examples(channels)),
        events=events_by_type(events_tsv) if events_tsv else {}, events_tsv=events_tsv,
        companions=tuple(p for p in (channels_tsv,) if p is not None),
        content=functools.partial(edf_bytes, path) if converted else None)


def channel_types(path: Path) -> dict[str, ChannelKind]:
    """name -> kind from a _channels.tsv's name and type columns."""
    rows = tsv_rows(path, required=("name", "type"))
    return {row["name"]: BIDS_KINDS.get(row["type"].strip().upper(), "misc") for _, row in rows}


def events_by_type(path: Path) -> dict[str, tuple[float, ...]]:
    """trial_type (else value) -> onsets (s) of an _events.tsv; DatasetError naming the file
    and line of an onset that is not a number."""
    rows = tsv_rows(path, required=("onset",))
    column = "trial_type" if rows and "trial_type" in rows[0][1] else "value"
    events: dict[str, list[float]] = {}
    for number, row in rows:
        kind = (row.get(column) or "").strip()
        if kind in ("", "n/a"):
            continue
        try:
            events.setdefault(kind, []).append(float(row["onset"]))
        except (TypeError, ValueError):
            raise DatasetError(f"{path}:{number}: expected a number of seconds in column onset, "
                               f"got {row['onset']!r}") from None
    return {kind: tuple(sorted(onsets)) for kind, onsets in sorted(events.items())}


def tsv_rows(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) of a BIDS .tsv; DatasetError naming it when a column is missing."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [column for column in required if column not in (reader.fieldnames or [])]
        if missing:
            raise DatasetError(f"{path}:1: no column {', '.join(missing)} (has {reader.fieldnames})")
        return [(number, row) for number, row in enumerate(reader, start=2)]


def edf_bytes(path: Path) -> bytes:
    """The recording as EDF bytes (mne's export), the same bytes on every call."""
    import mne

    raw = open_raw(path, preload=True)
    if raw.info["meas_date"] is None:
        raw.set_meas_date(FIXED_START)  # mne would write none; fixed so the bytes never vary
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "recording.edf"
        mne.export.export_raw(target, raw, fmt="edf", overwrite=True, verbose="error")
        return target.read_bytes()
