"""Measure a signal file the model wrote: npy, EDF/BDF, FIF, CNT or EEGLAB .set.

Measurements are made lazily, field by field, so a check that only asks for channel_count
never computes an RMS. Unknown fields raise KeyError (scored 0, recorded as unmeasurable).
"""
from __future__ import annotations

import warnings
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

READERS = {".edf": "read_raw_edf", ".bdf": "read_raw_bdf", ".fif": "read_raw_fif",
           ".cnt": "read_raw_cnt", ".set": "read_raw_eeglab"}
SUPPORTED = (".npy", ".fif.gz", *READERS)
DECIMALS = 9  # measured floats are rounded so score files serialise the same every time


class SignalFileError(ValueError):
    """The file is not a readable signal file of a supported type."""


def suffix(path: Path) -> str:
    """A signal file's format suffix, lower case (.fif.gz counts as one)."""
    name = path.name.lower()
    return ".fif.gz" if name.endswith(".fif.gz") else path.suffix.lower()


class SignalFile:
    """A signal file the model wrote (npy, fif, edf, ...), measured field by field."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kind = suffix(path)
        if self.kind not in SUPPORTED:
            raise SignalFileError(f"unsupported signal file type {self.kind or '(none)'}; "
                                  f"supported: {', '.join(SUPPORTED)}")
        self.raw: Any = None  # the mne Raw of a file with a header
        self.data = self._load()

    def _load(self) -> np.ndarray:
        try:
            if self.kind == ".npy":
                data: np.ndarray = np.load(self.path, allow_pickle=False)
                real = np.issubdtype(data.dtype, np.integer) or np.issubdtype(data.dtype, np.floating)
                if data.ndim not in (1, 2, 3) or not real:
                    raise SignalFileError(f"npy array of shape {data.shape} and dtype {data.dtype} "
                                          "is not a 1-3 dimensional real-valued signal")
                return data
            import mne

            reader = getattr(mne.io, READERS.get(self.kind, "read_raw_fif"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.raw = reader(str(self.path), preload=True, verbose="ERROR")
            samples: np.ndarray = self.raw.get_data()
            return samples
        except SignalFileError:
            raise
        except Exception as exc:  # any reader failure means: not a valid file of that type
            raise SignalFileError(f"cannot read {self.path.name}: {type(exc).__name__}: {exc}") from None

    def measure(self, name: str) -> Any:
        """One field's value; KeyError when the field is not measurable for this file."""
        if name not in MEASURES:
            raise KeyError(name)
        return MEASURES[name](self)

    @cached_property
    def rms(self) -> float:
        """Root mean square of all samples."""
        return round(float(np.sqrt(np.mean(np.square(self.data, dtype=np.float64)))), DECIMALS + 6)

    def _needs_raw(self) -> Any:
        if self.raw is None:
            raise KeyError("needs a recording with a header (not npy)")
        return self.raw


def _channel_count(f: SignalFile) -> int:
    if f.data.ndim == 1:
        return 1
    return int(f.data.shape[1] if f.data.ndim == 3 else f.data.shape[0])


def _reference_mode(f: SignalFile) -> str:
    """'average' when the mean over the EEG channels is ~0 at every sample (BrainBench: RMS
    ratio <= 1e-3)."""
    data = f.data if f.data.ndim == 2 else None
    if data is None:
        return "unknown"
    if f.raw is not None:  # EOG, ECG or stim channels kept in the file are not re-referenced
        import mne

        eeg = mne.pick_types(f.raw.info, eeg=True, exclude=[])
        data = data[eeg] if len(eeg) else data
    rms = float(np.sqrt(np.mean(np.square(data))))
    if data.shape[0] < 2 or rms == 0:
        return "unknown"
    mean_rms = float(np.sqrt(np.mean(np.square(data.mean(axis=0)))))
    return "average" if mean_rms / rms <= 1e-3 else "other"


MEASURES = {
    "channel_count": _channel_count,
    "npy_shape": lambda f: [int(d) for d in f.data.shape],
    "signal_rms": lambda f: f.rms,
    "n_samples": lambda f: int(f.data.shape[-1]),
    "sfreq_hz": lambda f: round(float(f._needs_raw().info["sfreq"]), DECIMALS),
    "duration_sec": lambda f: round(f._needs_raw().n_times / float(f.raw.info["sfreq"]), DECIMALS),
    "channel_names": lambda f: list(f._needs_raw().ch_names),
    "bandpass_hz": lambda f: [round(float(f._needs_raw().info["highpass"]), DECIMALS),
                              round(float(f.raw.info["lowpass"]), DECIMALS)],
    "reference_mode": _reference_mode,
}
