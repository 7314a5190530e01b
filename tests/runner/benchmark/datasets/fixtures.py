"""Small deterministic copies of six public EEG datasets in their native layouts, for the
reader tests: `write_<name>(root)` writes one and returns the root to hand to its reader.

File names, folders, header fields (labels, 'uV', per-signal rates, start date/time), EDF+
annotations, hypnogram formats and BIDS sidecars are as the real downloads have them; the
copies are short (20-25 min nights, 1-2 min EEG files). Signals are synthetic but EEG-like:
1/f background, a 10 Hz alpha rhythm strongest over occipital sites, a little 50 Hz line
noise; in the sleep files stage-dependent alpha, theta, spindles and slow waves, eye
movements (blinks awake, slow rolling in N1, rapid in REM), chin EMG tone that falls with
depth and is lowest in REM, and an ECG of ~60 bpm. Every random draw is seeded and every
start time fixed, so writing a copy twice gives the same bytes.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

EPOCH_S = 30
STAGE_TEXT_HMC = {"W": "Sleep stage W", "N1": "Sleep stage N1", "N2": "Sleep stage N2",
                  "N3": "Sleep stage N3", "REM": "Sleep stage R"}
STAGE_TEXT_SLEEPEDF = {"W": "Sleep stage W", "N1": "Sleep stage 1", "N2": "Sleep stage 2",
                       "N3": "Sleep stage 3", "N4": "Sleep stage 4", "REM": "Sleep stage R",
                       "?": "Sleep stage ?", "MT": "Movement time"}
ISRUC_CODES = {"W": 0, "N1": 1, "N2": 2, "N3": 3, "REM": 5}


def runs(*pairs: tuple[str, int]) -> tuple[str, ...]:
    """A hypnogram from (stage, epochs) runs."""
    return tuple(stage for stage, count in pairs for _ in range(count))


# -- the stages each sleep fixture is scored with ("?": no stage annotation covers the epoch)
HMC_STAGES = {
    "SN001": runs(("?", 1), ("W", 5), ("N1", 4), ("N2", 10), ("N3", 8), ("N2", 4), ("REM", 8), ("W", 3),
                  ("N1", 2), ("N2", 4), ("REM", 1)),
    "SN002": runs(("W", 4), ("N1", 3), ("N2", 8), ("N3", 6), ("N2", 5), ("REM", 6), ("N1", 2), ("N2", 4),
                  ("W", 2)),
}
HMC_START = dt.datetime(2018, 3, 1, 23, 10, 0)
# Sleep-EDF stages as its hypnograms spell them (N4 is "Sleep stage 4", MT "Movement time")
SLEEPEDF_STAGES = {
    "SC4001E": runs(("W", 6), ("N1", 3), ("N2", 8), ("N3", 4), ("N4", 4), ("N2", 3), ("MT", 1), ("REM", 8),
                    ("N1", 2), ("N2", 3), ("W", 4), ("?", 2)),
    "ST7011J": runs(("W", 4), ("N1", 2), ("N2", 6), ("N3", 6), ("REM", 6), ("N2", 4), ("W", 2)),
}
SLEEPEDF_START = dt.datetime(1989, 4, 24, 16, 13, 0)
# ISRUC: (path below the root, EDF epochs, scorer-1 hypnogram); hypnograms differ in length
# from the EDF as real ones do (one two epochs short, one two long)
ISRUC = {
    "subgroupI/1/1": (36, runs(("W", 4), ("N1", 3), ("N2", 9), ("N3", 7), ("N2", 3), ("REM", 6), ("N1", 2))),
    "subgroupII/1/1/1": (12, runs(("W", 3), ("N1", 2), ("N2", 4), ("N3", 2), ("REM", 3))),
    "subgroupII/1/2/2": (12, runs(("W", 2), ("N1", 2), ("N2", 3), ("N3", 3), ("REM", 2))),
}
ISRUC_START = dt.datetime(2009, 10, 20, 22, 30, 0)
SECOND_OPINION = {"W": "N1", "N1": "W", "N2": "N3", "N3": "N2", "REM": "N1"}
ISRUC_A_LABELS = ["LOC-A2", "ROC-A1", "F3-A2", "C3-A2", "O1-A2", "F4-A1", "C4-A1", "O2-A1", "X1", "X2", "X3",
                  "X4", "X5", "X6", "DC3", "X7", "X8", "SaO2", "DC8"]
ISRUC_M_LABELS = ["E1-M2", "E2-M1", "F3-M2", "C3-M2", "O1-M2", "F4-M1", "C4-M1", "O2-M1", "X1", "X2", "X3",
                  "X4", "X5", "X6", "DC4", "X7", "X8", "SpO2", "DC8", "DC7"]

EEGMAT_CHANNELS = ["EEG Fp1", "EEG Fp2", "EEG F3", "EEG F4", "EEG F7", "EEG F8", "EEG T3", "EEG T4", "EEG C3",
                   "EEG C4", "EEG T5", "EEG T6", "EEG P3", "EEG P4", "EEG O1", "EEG O2", "EEG Fz", "EEG Cz",
                   "EEG Pz", "EEG A2-A1", "ECG ECG"]
EEGMAT_FILES = {"Subject00_1": 120, "Subject00_2": 60, "Subject01_2": 60}  # stem -> seconds
EEGMAT_START = dt.datetime(2012, 11, 5, 11, 20, 0)

EEGMMIDB_CHANNELS = [
    "Fc5.", "Fc3.", "Fc1.", "Fcz.", "Fc2.", "Fc4.", "Fc6.", "C5..", "C3..", "C1..", "Cz..", "C2..", "C4..",
    "C6..", "Cp5.", "Cp3.", "Cp1.", "Cpz.", "Cp2.", "Cp4.", "Cp6.", "Fp1.", "Fpz.", "Fp2.", "Af7.", "Af3.",
    "Afz.", "Af4.", "Af8.", "F7..", "F5..", "F3..", "F1..", "Fz..", "F2..", "F4..", "F6..", "F8..", "Ft7.",
    "Ft8.", "T7..", "T8..", "T9..", "T10.", "Tp7.", "Tp8.", "P7..", "P5..", "P3..", "P1..", "Pz..", "P2..",
    "P4..", "P6..", "P8..", "Po7.", "Po3.", "Poz.", "Po4.", "Po8.", "O1..", "Oz..", "O2..", "Iz.."]
EEGMMIDB_RUNS = {"S001R01": 60, "S001R02": 60, "S001R04": 120}  # stem -> seconds
EEGMMIDB_START = dt.datetime(2009, 8, 12, 16, 15, 0)

DS_SUBJECTS = ("sub-002", "sub-003")
DS_SFREQ, DS_SECONDS = 250, 60
DS_CHANNELS = [f"EEG{n:03d}" for n in range(1, 75)]
DS_TYPES = {"EEG061": ("HEOG", "EOG"), "EEG062": ("VEOG", "EOG"), "EEG063": ("ECG", "ECG"),
            "EEG064": ("MISC", "MISC")}  # channels.tsv type, EEGLAB chanlocs type; others EEG
DS_FACES = ("famous_new", "famous_second_early", "famous_second_late", "unfamiliar_new",
            "unfamiliar_second_early", "unfamiliar_second_late", "scrambled_new", "scrambled_second_early",
            "scrambled_second_late")
MAT_HEADER = b"MATLAB 5.0 MAT-file, Platform: posix, Created on: Thu Jan  1 00:00:00 2015"


# ------------------------------------------------------------------ signal synthesis
def band(rng: np.random.Generator, n: int, sfreq: float, low: float, high: float) -> np.ndarray:
    """Unit-variance noise limited to [low, high] Hz (a rhythm with natural waxing and waning)."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / sfreq)
    spectrum[(freqs < low) | (freqs > high)] = 0
    signal = np.fft.irfft(spectrum, n)
    return signal / (signal.std() or 1.0)


def pink(rng: np.random.Generator, n: int, sfreq: float) -> np.ndarray:
    """Unit-variance 1/f noise above 0.3 Hz: the EEG background."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / sfreq)
    spectrum *= np.where(freqs > 0.3, 1 / np.sqrt(np.maximum(freqs, 0.3)), 0)
    signal = np.fft.irfft(spectrum, n)
    return signal / (signal.std() or 1.0)


def line_noise(n: int, sfreq: float, amplitude: float = 1.5) -> np.ndarray:
    """50 Hz mains (when the rate can carry it)."""
    return amplitude * np.sin(2 * np.pi * 50 * np.arange(n) / sfreq) if sfreq > 100 else np.zeros(n)


def awake_eeg(rng: np.random.Generator, n: int, sfreq: float, alpha_uv: float) -> np.ndarray:
    """Waking EEG in uV: 1/f background, alpha of `alpha_uv`, some beta and mains."""
    return (12 * pink(rng, n, sfreq) + alpha_uv * band(rng, n, sfreq, 8.5, 11.5)
            + 3 * band(rng, n, sfreq, 15, min(30, sfreq / 2 - 1)) + line_noise(n, sfreq))


def occipital_weight(label: str) -> float:
    """How much alpha a site carries: most at O/Po/Iz, some at P, least frontally."""
    site = label.replace("EEG ", "").rstrip(".").upper()
    if site.startswith(("O", "PO", "IZ")):
        return 2.0
    if site.startswith("P") or site.startswith(("T5", "T6")):
        return 1.3
    return 0.6


# per-stage amplitudes (uV) of the sleep EEG components
SLEEP_EEG = {  # stage: (alpha, theta, spindle sigma, delta, beta)
    "W": (12, 3, 0, 4, 5), "N1": (3, 10, 0, 8, 3), "N2": (2, 8, 14, 22, 2), "N3": (1, 6, 4, 65, 1),
    "REM": (3, 10, 0, 7, 3)}
EMG_TONE = {"W": 20.0, "N1": 12.0, "N2": 8.0, "N3": 6.0, "REM": 1.5}


def stage_of(stage: str) -> str:
    """The physiological stage a hypnogram label stands for ("?" and movement time: awake)."""
    return {"N4": "N3", "?": "W", "MT": "W"}.get(stage, stage)


def per_sample(stages: Sequence[str], table: dict[str, float], sfreq: float, n: int) -> np.ndarray:
    """`table[stage]` for every sample of the 30-s epochs (the last one held past them)."""
    values = np.array([table[stage_of(stage)] for stage in stages], dtype=float)
    out = np.repeat(values, int(EPOCH_S * sfreq))
    return np.concatenate([out, np.full(max(n - out.size, 0), values[-1])])[:n]


def sleep_eeg(rng: np.random.Generator, stages: Sequence[str], sfreq: float, n: int, alpha_gain: float) -> np.ndarray:
    """A sleep EEG derivation in uV: each component scaled epoch by epoch by its stage."""
    components = [(alpha_gain, (8.5, 11.5)), (1.0, (4.0, 7.5)), (1.0, (12.0, 14.5)), (1.0, (0.5, 2.0)),
                  (1.0, (15.0, 30.0))]
    signal = 8 * pink(rng, n, sfreq) + line_noise(n, sfreq)
    bursts = (np.sin(2 * np.pi * np.arange(n) / sfreq / 7.0) > 0.85).astype(float)  # ~1 s spindles every 7 s
    for index, (gain, (low, high)) in enumerate(components):
        if low >= sfreq / 2:
            continue
        amplitude = per_sample(stages, {s: row[index] for s, row in SLEEP_EEG.items()}, sfreq, n)
        wave = band(rng, n, sfreq, low, min(high, sfreq / 2 - 1))
        signal += gain * amplitude * wave * (bursts * 2 if index == 2 else 1)
    return signal


def eog(rng: np.random.Generator, stages: Sequence[str], sfreq: float, n: int, sign: float) -> np.ndarray:
    """An EOG derivation in uV: blinks awake, slow rolling in N1, rapid movements in REM (`sign`
    flips the eye movements between the two sides), EEG leakage throughout."""
    t = np.arange(n) / sfreq
    blinks = np.exp(-(((t % 4.3) - 0.2) / 0.08) ** 2) * 120
    rolling = 60 * np.sin(2 * np.pi * 0.25 * t)
    saccades = 80 * np.sign(band(rng, n, sfreq, 0.3, min(2.0, sfreq / 2 - 0.1)))
    kernel = np.ones(max(int(0.05 * sfreq), 1)) / max(int(0.05 * sfreq), 1)
    saccades = np.convolve(saccades, kernel, mode="same")
    awake, drowsy, rem = (per_sample(stages, {s: float(s == k) for s in EMG_TONE}, sfreq, n) for k in ("W", "N1", "REM"))
    movements = awake * blinks + sign * (drowsy * rolling + rem * saccades)
    return movements + 0.4 * sleep_eeg(rng, stages, sfreq, n, 0.3) + 3 * rng.standard_normal(n)


def emg(rng: np.random.Generator, stages: Sequence[str], sfreq: float, n: int) -> np.ndarray:
    """Chin EMG in uV: broadband muscle noise whose tone falls with depth, lowest in REM (at a
    slow rate, its envelope, as Sleep-EDF's 1 Hz cassette EMG is)."""
    tone = per_sample(stages, EMG_TONE, sfreq, n)
    if sfreq < 20:
        return tone * (1 + 0.1 * rng.standard_normal(n))
    return tone * band(rng, n, sfreq, 10, min(100, sfreq / 2 - 1)) + line_noise(n, sfreq, 1.0)


def ecg(rng: np.random.Generator, sfreq: float, n: int) -> np.ndarray:
    """An ECG in uV: R peaks of ~1 mV at ~60 bpm with some variability, and T waves."""
    beats = np.cumsum(1.0 + 0.05 * rng.standard_normal(int(n / sfreq) + 2))
    train = np.zeros(n)
    train[(beats * sfreq).astype(int)[beats * sfreq < n]] = 1.0
    t = np.arange(int(0.6 * sfreq)) / sfreq - 0.1  # one beat, from 100 ms before its R peak
    beat = 1000 * np.exp(-(t / 0.012) ** 2) + 250 * np.exp(-((t - 0.25) / 0.06) ** 2)
    return np.convolve(train, beat)[int(0.1 * sfreq):][:n] - 150 + 10 * rng.standard_normal(n)


def slow_wave(rng: np.random.Generator, n: int, sfreq: float, amplitude: float, hz: float) -> np.ndarray:
    """A breathing-like oscillation (airflow, effort belts) in the channel's unit."""
    return amplitude * np.sin(2 * np.pi * hz * np.arange(n) / sfreq + rng.uniform(0, np.pi)) + \
        0.05 * amplitude * rng.standard_normal(n)


# ------------------------------------------------------------------ file writers
@dataclass(frozen=True)
class Signal:
    """One EDF signal to write."""

    label: str
    data: np.ndarray
    sfreq: float
    unit: str = "uV"
    limit: float = 500.0  # symmetric physical range (the data are clipped into it)


def write_edf(path: Path, signals: Sequence[Signal], start: dt.datetime, record_s: float = 1.0,
              annotations: Sequence[tuple[float, float, str]] | None = None) -> None:
    """An EDF (EDF+ when there are annotations) with a fixed start and patient fields."""
    import edfio

    edf_signals = [edfio.EdfSignal(np.clip(s.data, -s.limit, s.limit), sampling_frequency=s.sfreq, label=s.label,
                                   physical_dimension=s.unit, physical_range=(-s.limit, s.limit))
                   for s in signals]
    edf = edfio.Edf(edf_signals, data_record_duration=record_s, starttime=start.time(),
                    recording=edfio.Recording(startdate=start.date()),
                    annotations=None if annotations is None else
                    [edfio.EdfAnnotation(onset, duration, text) for onset, duration, text in annotations])
    path.parent.mkdir(parents=True, exist_ok=True)
    edf.write(path)


def write_annotation_edf(path: Path, annotations: Sequence[tuple[float, float, str]], start: dt.datetime) -> None:
    """An annotation-only EDF+ (hypnogram / scoring file)."""
    import edfio

    edf = edfio.Edf([], annotations=[edfio.EdfAnnotation(o, d, t) for o, d, t in annotations],
                    starttime=start.time(), recording=edfio.Recording(startdate=start.date()))
    path.parent.mkdir(parents=True, exist_ok=True)
    edf.write(path)


def stage_runs(stages: Sequence[str]) -> list[tuple[int, int, str]]:
    """(first epoch, epochs, stage) runs of a hypnogram."""
    out: list[tuple[int, int, str]] = []
    for index, stage in enumerate(stages):
        if out and out[-1][2] == stage:
            out[-1] = (out[-1][0], out[-1][1] + 1, stage)
        else:
            out.append((index, 1, stage))
    return out


# ------------------------------------------------------------------ HMC
def write_hmc(root: Path) -> Path:
    """recordings/SN00n.edf with SN00n_sleepscoring.edf and .txt (256 Hz, 8 channels)."""
    root = Path(root)
    folder = root / "recordings"
    for index, (stem, stages) in enumerate(HMC_STAGES.items()):
        sfreq, n = 256, len(stages) * EPOCH_S * 256
        rng = np.random.default_rng(100 + index)
        signals = [Signal(label, sleep_eeg(rng, stages, sfreq, n, occipital_weight(label)), sfreq)
                   for label in ("EEG F4-M1", "EEG C4-M1", "EEG O2-M1", "EEG C3-M2")]
        signals += [Signal("EMG chin", emg(rng, stages, sfreq, n), sfreq, limit=300),
                    Signal("EOG E1-M2", eog(rng, stages, sfreq, n, 1.0), sfreq, limit=800),
                    Signal("EOG E2-M2", eog(rng, stages, sfreq, n, -1.0), sfreq, limit=800),
                    Signal("ECG", ecg(rng, sfreq, n), sfreq, limit=3000)]
        write_edf(folder / f"{stem}.edf", signals, HMC_START)
        annotations = hmc_annotations(stages)
        write_annotation_edf(folder / f"{stem}_sleepscoring.edf", annotations, HMC_START)
        (folder / f"{stem}_sleepscoring.txt").write_text(hmc_text(annotations))
    return root


def hmc_annotations(stages: Sequence[str]) -> list[tuple[float, float, str]]:
    """One 30-s annotation per scored epoch, 'Lights off' early and 'Lights on' late."""
    scored = [(float(i * EPOCH_S), float(EPOCH_S), STAGE_TEXT_HMC[s]) for i, s in enumerate(stages) if s != "?"]
    lights = [(42.5, 0.0, "Lights off"), (float(len(stages) * EPOCH_S - 45), 0.0, "Lights on")]
    return sorted(scored + lights)


def hmc_text(annotations: Sequence[tuple[float, float, str]]) -> str:
    """The _sleepscoring.txt twin of the scoring EDF."""
    lines = ["Date, Time, Recording onset, Duration, Annotation, Linked channel"]
    for onset, duration, text in annotations:
        moment = HMC_START + dt.timedelta(seconds=onset)
        lines.append(f"{moment:%Y-%m-%d}, {moment:%H:%M:%S}, {onset:g}, {duration:g}, {text}, ")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ Sleep-EDF Expanded
def write_sleepedfx(root: Path) -> Path:
    """sleep-cassette/SC4001E0-PSG.edf + SC4001EC-Hypnogram.edf and sleep-telemetry/ST7011J0-PSG.edf
    + ST7011JP-Hypnogram.edf, with Sleep-EDF's channels, rates and 30-s/60-s data records."""
    root = Path(root)
    for index, (stem, stages) in enumerate(SLEEPEDF_STAGES.items()):
        rng = np.random.default_rng(200 + index)
        seconds = len(stages) * EPOCH_S
        cassette = stem.startswith("SC")
        fast, slow = seconds * 100, seconds * 1
        signals = [Signal("EEG Fpz-Cz", sleep_eeg(rng, stages, 100, fast, 0.6), 100, limit=200),
                   Signal("EEG Pz-Oz", sleep_eeg(rng, stages, 100, fast, 1.6), 100, limit=200),
                   Signal("EOG horizontal", eog(rng, stages, 100, fast, 1.0), 100, limit=1000)]
        if cassette:
            signals += [Signal("Resp oro-nasal", slow_wave(rng, slow, 1, 400, 0.2), 1, unit="", limit=2048),
                        Signal("EMG submental", emg(rng, stages, 1, slow), 1, limit=50),
                        Signal("Temp rectal", 37.1 + 0.02 * rng.standard_normal(slow), 1, unit="DegC", limit=40),
                        Signal("Event marker", np.zeros(slow), 1, unit="", limit=2048)]
        else:
            signals += [Signal("EMG submental", emg(rng, stages, 100, fast), 100, limit=200),
                        Signal("Event marker", np.zeros(slow), 1, unit="", limit=2048)]
        folder = root / ("sleep-cassette" if cassette else "sleep-telemetry")
        write_edf(folder / f"{stem}0-PSG.edf", signals, SLEEPEDF_START, record_s=30 if cassette else 60)
        scorer = "C" if cassette else "P"
        annotations = [(float(first * EPOCH_S), float(count * EPOCH_S), STAGE_TEXT_SLEEPEDF[stage])
                       for first, count, stage in stage_runs(stages)]
        write_annotation_edf(folder / f"{stem}{scorer}-Hypnogram.edf", annotations, SLEEPEDF_START)
    return root


# ------------------------------------------------------------------ ISRUC-Sleep
def isruc_signal(label: str, rng: np.random.Generator, stages: Sequence[str], n: int) -> Signal:
    """One ISRUC channel by its label, at 200 Hz."""
    sfreq = 200
    if label.startswith(("LOC", "ROC", "E1", "E2")):
        return Signal(label, eog(rng, stages, sfreq, n, 1.0 if label.startswith(("LOC", "E1")) else -1.0),
                      sfreq, limit=800)
    if label[0] in "FCO" and "-" in label:
        return Signal(label, sleep_eeg(rng, stages, sfreq, n, occipital_weight(label)), sfreq, limit=300)
    if label in ("X1", "X3", "X4"):  # chin, left and right leg EMG
        return Signal(label, emg(rng, stages, sfreq, n) * (1 if label == "X1" else 0.5), sfreq, limit=300)
    if label == "X2":
        return Signal(label, ecg(rng, sfreq, n), sfreq, limit=3000)
    if label in ("SaO2", "SpO2"):
        return Signal(label, 96 + 0.5 * rng.standard_normal(n), sfreq, unit="%", limit=100)
    return Signal(label, slow_wave(rng, n, sfreq, 200, 0.25), sfreq, unit="mV" if label.startswith("DC") else "uV",
                  limit=1000)


def write_isruc(root: Path) -> Path:
    """subgroupI/1/1.rec and subgroupII/1/{1,2}/{1,2}.rec with scorer hypnograms <n>_1.txt and
    <n>_2.txt, as the subgroup archives extract (the later session with E1-M2-style labels)."""
    root = Path(root)
    for index, (where, (epochs, scored)) in enumerate(ISRUC.items()):
        rng = np.random.default_rng(300 + index)
        stages = (scored + ("W",) * epochs)[:epochs]
        labels = ISRUC_M_LABELS if where.endswith("/2/2") else ISRUC_A_LABELS
        n = epochs * EPOCH_S * 200
        rec = root / f"{where}.rec"
        write_edf(rec, [isruc_signal(label, rng, stages, n) for label in labels], ISRUC_START)
        # scorer 2 disagrees on every sixth epoch (a neighbouring stage)
        scorer2 = [SECOND_OPINION[stage] if i % 6 == 5 else stage for i, stage in enumerate(scored)]
        for scorer, hypnogram in (("1", scored), ("2", scorer2)):
            text = "\n".join(str(ISRUC_CODES[stage]) for stage in hypnogram) + "\n\n"
            rec.with_name(f"{rec.stem}_{scorer}.txt").write_text(text)
    return root


# ------------------------------------------------------------------ EEGMAT
def write_eegmat(root: Path) -> Path:
    """Subject00_1.edf (rest), Subject00_2.edf, Subject01_2.edf (arithmetic) and subject-info.csv."""
    root = Path(root)
    for index, (stem, seconds) in enumerate(EEGMAT_FILES.items()):
        rng = np.random.default_rng(400 + index)
        sfreq, n = 500, seconds * 500
        resting = stem.endswith("_1")
        signals = []
        for label in EEGMAT_CHANNELS:
            if label == "ECG ECG":
                signals.append(Signal(label, ecg(rng, sfreq, n), sfreq, limit=3000))
            elif label == "EEG A2-A1":
                signals.append(Signal(label, 4 * pink(rng, n, sfreq) + line_noise(n, sfreq), sfreq))
            else:
                alpha = occipital_weight(label) * (10 if resting else 4)
                theta = 0 if resting or "F" not in label else 6 * band(rng, n, sfreq, 5, 7)  # frontal theta at work
                signals.append(Signal(label, awake_eeg(rng, n, sfreq, alpha) + theta, sfreq))
        write_edf(root / f"{stem}.edf", signals, EEGMAT_START + dt.timedelta(minutes=10 * index))
    (root / "subject-info.csv").write_text(
        "Subject,Age,Gender,Recording year,Number of subtractions,Count quality\n"
        "Subject00,21,F,2011,9.7,0\nSubject01,18,F,2011,29.35,1\n")
    return root


# ------------------------------------------------------------------ EEGMMIDB
def eegmmidb_annotations(stem: str, seconds: int) -> list[tuple[float, float, str]]:
    """Baselines: one T0 over the run. Task runs: T0 rest 4.2 s alternating with T1/T2 4.1 s."""
    if stem.endswith(("R01", "R02")):
        return [(0.0, float(seconds), "T0")]
    rng = np.random.default_rng(int(stem[-2:]))
    events, onset, task = [], 0.0, False
    while onset < seconds - 4.2:
        length = 4.1 if task else 4.2
        events.append((round(onset, 1), length, ("T1" if rng.random() < 0.5 else "T2") if task else "T0"))
        onset, task = round(onset + length, 1), not task
    return events


def write_eegmmidb(root: Path) -> Path:
    """files/S001/S001R01.edf (eyes open), S001R02.edf (eyes closed), S001R04.edf (imagined
    fist movements): EDF+ with 64 dot-padded channels at 160 Hz and T0/T1/T2 annotations."""
    root = Path(root)
    folder = root / "files" / "S001"
    for index, (stem, seconds) in enumerate(EEGMMIDB_RUNS.items()):
        rng = np.random.default_rng(500 + index)
        sfreq, n = 160, seconds * 160
        closed = stem.endswith("R02")
        signals = [Signal(label, awake_eeg(rng, n, sfreq, occipital_weight(label) * (14 if closed else 5)), sfreq,
                          limit=800) for label in EEGMMIDB_CHANNELS]
        write_edf(folder / f"{stem}.edf", signals, EEGMMIDB_START + dt.timedelta(minutes=3 * index),
                  annotations=eegmmidb_annotations(stem, seconds))
        (folder / f"{stem}.edf.event").write_bytes(b"\x00\x00")  # the WFDB twin: not read
    return root


# ------------------------------------------------------------------ OpenNeuro ds002718 (BIDS, EEGLAB)
def write_ds002718(root: Path) -> Path:
    """dataset_description.json, participants.tsv and sub-00n/eeg/ with the EEGLAB .set/.fdt
    pair and its _events.tsv, _channels.tsv and _eeg.json."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "dataset_description.json").write_text(json.dumps(
        {"Name": "Face processing EEG dataset for EEGLAB", "BIDSVersion": "1.2.0", "License": "CC0",
         "Authors": ["Daniel G. Wakeman", "Richard N. Henson"]}, indent=2) + "\n")
    (root / "participants.tsv").write_text("participant_id\tage\tsex\nsub-002\t31\tM\nsub-003\t25\tF\n")
    (root / "README").write_text("Wakeman & Henson face recognition EEG, prepared for EEGLAB.\n")
    for index, subject in enumerate(DS_SUBJECTS):
        rng = np.random.default_rng(600 + index)
        folder = root / subject / "eeg"
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{subject}_task-FaceRecognition"
        data = ds_data(rng)
        events = ds_events(subject)
        write_set(folder, f"{stem}_eeg", data, events)
        write_tsv(folder / f"{stem}_events.tsv", ["onset", "duration", "sample", "trial_type", "response_time",
                                                   "stim_file", "value"],
                  [[f"{s / DS_SFREQ:.3f}", "0", str(s), kind, "n/a", "n/a", str(code)] for s, kind, code in events])
        write_tsv(folder / f"{stem}_channels.tsv", ["name", "type", "units"],
                  [[name, DS_TYPES.get(name, ("EEG",))[0], "uV"] for name in DS_CHANNELS])
        (folder / f"{stem}_eeg.json").write_text(json.dumps(
            {"TaskName": "FaceRecognition", "SamplingFrequency": DS_SFREQ, "EEGReference": "nose",
             "PowerLineFrequency": 50, "EEGChannelCount": 70, "EOGChannelCount": 2, "ECGChannelCount": 1,
             "MiscChannelCount": 1, "RecordingDuration": DS_SECONDS, "RecordingType": "continuous"},
            indent=2) + "\n")
    return root


def ds_data(rng: np.random.Generator) -> np.ndarray:
    """74 channels x 60 s in uV: EEG with alpha, HEOG/VEOG with blinks, ECG, an idle channel."""
    n = DS_SFREQ * DS_SECONDS
    rows = []
    for index, name in enumerate(DS_CHANNELS):
        if name == "EEG063":
            rows.append(ecg(rng, DS_SFREQ, n))
        elif name in ("EEG061", "EEG062"):
            rows.append(eog(rng, ["W"] * (DS_SECONDS // EPOCH_S), DS_SFREQ, n, 1.0 if name == "EEG061" else -1.0))
        elif name == "EEG064":
            rows.append(2 * rng.standard_normal(n))
        else:
            rows.append(awake_eeg(rng, n, DS_SFREQ, 4 + 8 * index / 74))  # more alpha towards the back
    return np.array(rows)


def ds_events(subject: str) -> list[tuple[int, str, int]]:
    """(sample, trial_type, value): a face every ~3 s, a right-hand button press after it."""
    rng = np.random.default_rng(int(subject.removeprefix("sub-")))
    events = []
    sample = int(1.5 * DS_SFREQ)
    while sample < (DS_SECONDS - 3) * DS_SFREQ:
        code = int(rng.integers(len(DS_FACES)))
        events.append((sample, DS_FACES[code], 5 + code))
        events.append((sample + int(rng.integers(150, 250)), "right_sym", 256))
        sample += int(rng.integers(int(2.9 * DS_SFREQ), int(3.4 * DS_SFREQ)))
    return events


def write_tsv(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    """A BIDS .tsv."""
    path.write_text("\n".join("\t".join(row) for row in [columns, *rows]) + "\n")


def write_set(folder: Path, stem: str, data: np.ndarray, events: list[tuple[int, str, int]]) -> None:
    """An EEGLAB .set (MATLAB v5 struct EEG) naming its .fdt, and the .fdt: float32 samples,
    channels varying fastest, in uV. The .mat header's creation time is fixed."""
    import scipy.io

    n_channels, n = data.shape
    chanlocs = np.array([(name, DS_TYPES.get(name, ("", "EEG"))[1]) for name in DS_CHANNELS],
                        dtype=[("labels", "O"), ("type", "O")])
    event = np.array([(kind, float(sample + 1), 0.0, float(i + 1)) for i, (sample, kind, _) in enumerate(events)],
                     dtype=[("type", "O"), ("latency", "O"), ("duration", "O"), ("urevent", "O")])
    eeg = {"setname": stem, "filename": f"{stem}.set", "filepath": "", "nbchan": float(n_channels),
           "trials": 1.0, "pnts": float(n), "srate": float(DS_SFREQ), "xmin": 0.0, "xmax": (n - 1) / DS_SFREQ,
           "times": np.array([]), "data": f"{stem}.fdt", "datfile": f"{stem}.fdt", "ref": "common",
           "chanlocs": chanlocs, "urchanlocs": np.array([]), "event": event, "urevent": np.array([]),
           "epoch": np.array([]), "icaact": np.array([]), "icawinv": np.array([]), "icasphere": np.array([]),
           "icaweights": np.array([]), "icachansind": np.array([]), "history": "", "saved": "justloaded"}
    path = folder / f"{stem}.set"
    scipy.io.savemat(path, {"EEG": eeg}, appendmat=False, format="5")
    content = bytearray(path.read_bytes())
    content[:116] = MAT_HEADER.ljust(116)  # savemat writes the wall-clock time here
    path.write_bytes(bytes(content))
    data.T.astype("<f4").tofile(folder / f"{stem}.fdt")
