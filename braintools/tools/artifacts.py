"""Artifacts: files written under /workspace/file_check/ (FIF, EDF, CSV).

Each writer takes a signal or table id and a relative path under the output root, writes the
file, and registers an artifact (path, format, size, sha256) in the artifacts branch.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from braintools import paths, refs
from braintools.data import VOLTAGE_TYPES, Artifact, Signal
from braintools.errors import ToolError
from braintools.readers import MNE_VOLTS
from braintools.registry import New, tool

_MNE_TYPES = ("eeg", "eog", "emg", "ecg", "seeg", "ecog", "dbs", "bio", "stim", "misc", "resp", "syst")


@tool("artifacts")
def write_fif(source: str, path: str, overwrite: bool = True) -> dict[str, object]:
    """Save a signal as a FIF raw file (mne RawArray: µV back to volts for voltage channels, the exact rate).

    Channel types MNE does not know are written as "misc". The file's first sample is the
    signal's first sample (its times start at 0).

    Parameters
    ----------
    %(source)s
    path : str
        Where to write, under /workspace/file_check/, e.g. "file_check/clean_raw.fif".
    %(overwrite)s
    """
    sig = refs.signal(source)
    target = _target(path, (".fif", ".fif.gz"), overwrite)
    raw = _raw(sig)
    raw.save(target, overwrite=overwrite, verbose="ERROR")
    return {"artifact": _artifact(target, "fif")}


@tool("artifacts")
def write_edf(source: str, path: str, overwrite: bool = True) -> dict[str, object]:
    """Save a signal as an EDF file (mne.export.export_raw; voltages stored in µV with EDF's 16-bit precision).

    Parameters
    ----------
    %(source)s
    path : str
        Where to write, under /workspace/file_check/, e.g. "file_check/clean.edf".
    %(overwrite)s
    """
    import mne

    sig = refs.signal(source)
    target = _target(path, (".edf",), overwrite)
    mne.export.export_raw(target, _raw(sig), fmt="edf", overwrite=overwrite, verbose="ERROR")
    return {"artifact": _artifact(target, "edf")}


@tool("artifacts")
def write_csv(table: str, path: str, columns: list[str] | None = None, index: bool = False,
              overwrite: bool = True) -> dict[str, object]:
    """Save a table (events, hypnogram, features) as a CSV file.

    Parameters
    ----------
    table : str
        Id of a table.
    path : str
        Where to write, under /workspace/file_check/, e.g. "file_check/events.csv".
    columns : list of str, optional
        Only these columns, in this order (default all).
    index : bool, optional
        Write the row index as the first column.
    %(overwrite)s
    """
    frame = refs.table(table).frame
    missing = [c for c in columns or [] if c not in frame.columns]
    if missing:
        raise ToolError("bad_argument", f"columns: not in the table: {missing}; columns: {list(frame.columns)}", argument="columns")
    target = _target(path, (".csv", ".tsv", ".txt"), overwrite)
    frame.to_csv(target, columns=columns, index=index, sep="\t" if target.suffix == ".tsv" else ",")
    return {"artifact": _artifact(target, "csv")}


def _target(path: str, suffixes: tuple[str, ...], overwrite: bool) -> Path:
    target = paths.output_path(path)
    if not target.name.lower().endswith(suffixes):
        raise ToolError("bad_argument", f"path: {path!r} should end with {' or '.join(suffixes)}", argument="path")
    if target.exists() and not overwrite:
        raise ToolError("bad_argument", f"path: {path!r} exists and overwrite is false", argument="path")
    return target


def _raw(sig: Signal) -> Any:
    import mne

    volts = set(VOLTAGE_TYPES) | set(MNE_VOLTS)
    scale = np.array([1e-6 if t in volts else 1.0 for t in sig.ch_types])[:, None]
    types = [t if t in _MNE_TYPES else "misc" for t in sig.ch_types]
    info = mne.create_info(list(sig.ch_names), float(sig.sfreq), types)
    return mne.io.RawArray(sig.data * scale, info, verbose="ERROR")


def _artifact(target: Path, fmt: str) -> New:
    """The artifact entry; its path is shown relative to the output root, as "file_check/<name>"."""
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    relative = target.relative_to(paths.output_root().resolve()).as_posix()
    return New("artifacts", "art", Artifact(f"file_check/{relative}", fmt, target.stat().st_size, digest))
