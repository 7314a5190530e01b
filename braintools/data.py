"""The objects the toolset keeps in shared_state: signals, epochs, tables, hypnograms.

Every tool takes them by id and registers what it makes under a new id; none of them
travels to the controller whole. Voltages are in microvolts throughout (`unit` per channel
says so); times are seconds from the start of the source recording.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

VOLTAGE_TYPES = ("eeg", "eog", "emg", "ecg", "seeg", "ecog", "misc_uv")


@dataclass
class Recording:
    """A file as read: its path and format, a lazy reader of channel data, its annotations."""

    path: str
    format: str
    sfreq: float
    ch_names: list[str]
    ch_types: list[str]
    n_samples: int
    read: Any  # callable(list of channel indices, start sample, stop sample) -> (n, samples) µV array
    annotations: pd.DataFrame  # onset_s, duration_s, description
    extra: dict[str, Any] = field(default_factory=dict)  # format-specific facts (meas date, projectors, ...)
    raw: Any = None  # the mne Raw when MNE read the file

    @property
    def duration_s(self) -> float:
        """Length in seconds (samples / rate)."""
        return self.n_samples / self.sfreq

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it."""
        types = pd.Series(self.ch_types).value_counts().to_dict()
        return {
            "kind": "recording", "path": self.path, "format": self.format, "sfreq": self.sfreq,
            "n_channels": len(self.ch_names), "channel_types": types, "n_samples": self.n_samples,
            "duration_s": round(self.duration_s, 6), "n_annotations": len(self.annotations),
        }


@dataclass
class Signal:
    """Continuous channels x samples, derived from a recording by a chain of operations."""

    data: np.ndarray  # (n_channels, n_samples), µV for voltage channels
    sfreq: float
    ch_names: list[str]
    ch_types: list[str]
    start_s: float  # time of the first sample from the recording's start
    history: list[str] = field(default_factory=list)
    annotations: pd.DataFrame | None = None  # onset_s relative to the recording's start

    @property
    def n_samples(self) -> int:
        """Samples per channel."""
        return int(self.data.shape[1])

    def derive(self, data: np.ndarray, what: str, *, ch_names: list[str] | None = None,
               ch_types: list[str] | None = None, first_sample: int = 0) -> Signal:
        """A new signal made from this one: new data (starting `first_sample` samples in),
        optionally new channels, the history extended by `what`."""
        return Signal(data, self.sfreq, list(ch_names or self.ch_names), list(ch_types or self.ch_types),
                      self.start_s + first_sample / self.sfreq, self.history + [what], self.annotations)

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it."""
        names = self.ch_names if len(self.ch_names) <= 12 else self.ch_names[:10] + [f"... {len(self.ch_names) - 10} more"]
        return {
            "kind": "signal", "channels": names, "n_channels": len(self.ch_names), "sfreq": self.sfreq,
            "n_samples": self.n_samples, "start_s": round(self.start_s, 6),
            "end_s": round(self.start_s + self.n_samples / self.sfreq, 6), "history": self.history[-6:],
        }


@dataclass
class Epochs:
    """Segments of equal length: epochs x channels x samples, each with a label and onset."""

    data: np.ndarray  # (n_epochs, n_channels, n_times)
    sfreq: float
    ch_names: list[str]
    ch_types: list[str]
    times: np.ndarray  # seconds relative to each epoch's anchor (event or window start)
    onsets_s: np.ndarray  # each epoch's anchor, seconds from the recording's start
    labels: list[str]
    history: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it."""
        counts = pd.Series(self.labels, dtype=object).value_counts().to_dict() if self.labels else {}
        return {
            "kind": "epochs", "n_epochs": int(self.data.shape[0]), "n_channels": len(self.ch_names),
            "n_times": int(self.data.shape[2]), "sfreq": self.sfreq,
            "tmin_s": round(float(self.times[0]), 6) if len(self.times) else None,
            "tmax_s": round(float(self.times[-1]), 6) if len(self.times) else None,
            "labels": {str(k): int(v) for k, v in list(counts.items())[:20]}, "history": self.history[-6:],
        }


@dataclass
class Table:
    """Rows of named columns: events (onset_s, duration_s, label, ...), a hypnogram, features."""

    frame: pd.DataFrame
    kind: str = "table"  # "events", "hypnogram", "features", ...
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. a hypnogram's epoch_s

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it: columns, length, the first rows."""
        head = self.frame.head(3).to_dict(orient="records")
        return {
            "kind": self.kind, "n_rows": len(self.frame), "columns": [str(c) for c in self.frame.columns][:30],
            "head": _jsonable(head), **{k: _jsonable(v) for k, v in self.meta.items()},
        }


@dataclass
class Artifact:
    """A file the toolset wrote under /workspace/file_check/."""

    path: str
    format: str
    bytes: int
    sha256: str

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it."""
        return {"kind": "artifact", "path": self.path, "format": self.format, "bytes": self.bytes, "sha256": self.sha256[:16]}


def _jsonable(value: Any) -> Any:
    """NumPy and pandas scalars and containers as plain JSON values (NaN as None)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        number = float(value)
        return None if not np.isfinite(number) else number
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


jsonable = _jsonable


@dataclass
class Spectrum:
    """Power spectral density per channel (and per epoch when computed from epochs)."""

    freqs: np.ndarray
    power: np.ndarray  # (n_channels, n_freqs) or (n_epochs, n_channels, n_freqs), µV²/Hz
    ch_names: list[str]
    method: str
    labels: list[str] | None = None  # per epoch, when power is 3-D

    def describe(self) -> dict[str, Any]:
        """What the agent is shown about it."""
        step = float(self.freqs[1] - self.freqs[0]) if len(self.freqs) > 1 else None
        return {"kind": "spectrum", "method": self.method, "n_channels": len(self.ch_names),
                "n_epochs": int(self.power.shape[0]) if self.power.ndim == 3 else None,
                "fmin": float(self.freqs[0]), "fmax": float(self.freqs[-1]), "resolution_hz": step}
