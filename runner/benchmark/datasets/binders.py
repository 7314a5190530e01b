"""Binders: a task's params chosen from one local recording. A task spec names its binder and
fixed choices in `"local"` (runner/benchmark/datasets/needs.py); the binder picks what depends on the
recording (channels by their role, windows inside its length) with the given rng, so a binding
is a pure function of the recording, the task and the dataset. A recording the binder cannot
use raises Unfit with the reason the binder reports as skipped.

Channels are matched on their core name: the electrode without the file's decoration ('O1..',
'EEG O1-A2', 'O1-M2' and 'EEG O1' are all O1), so one task declaration serves every dataset's
naming; the params carry the names exactly as stored.
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner.benchmark.datasets.base import STAGES, Recording
from runner.benchmark.datasets.needs import Needs

EPOCH_S = 30.0
# Codes of the hypnogram CSV the sleep tasks read (the SRI sample's 4-stage coding).
CSV_CODES = {"W": 0, "N1": 1, "N2": 1, "N3": 2, "REM": 3}


class Unfit(ValueError):
    """The recording does not suit the task; the message says why (reported as skipped)."""


@dataclass(frozen=True)
class Proposal:
    """The params of one binding, and the derived inputs it stages instead of the recording's
    own files (suffix -> bytes maker); empty when the recording's files are the inputs."""

    params: dict[str, Any]
    derived: dict[str, Callable[[], bytes]] = field(default_factory=dict)


Binder = Callable[[Recording, dict[str, Any], random.Random], Proposal]


def core_name(name: str) -> str:
    """The electrode a stored channel name means: 'EEG O1-A2' -> 'O1', 'Fp1.' -> 'FP1'."""
    core = re.sub(r"^(EEG|EOG|EMG|ECG)\s+", "", name.strip(), flags=re.IGNORECASE)
    core = re.split(r"[-:/]", core)[0]
    return core.strip(". ").upper()


def unfit_reason(recording: Recording, needs: Needs) -> str | None:
    """Why the recording does not meet the task's needs, or None when it does."""
    low, high = needs.sfreq_hz
    eeg = recording.of_kind("eeg")
    checks = [
        (needs.hypnogram and not recording.stages, "no sleep hypnogram"),
        (needs.eog and not recording.of_kind("eog"), "no EOG channel"),
        (needs.emg and not recording.of_kind("emg"), "no EMG channel"),
        (len(eeg) < needs.min_eeg_channels, f"{len(eeg)} EEG channel(s), the task needs {needs.min_eeg_channels}"),
        (not low <= recording.sfreq <= high, f"sampling rate {recording.sfreq:g} Hz outside {low:g}-{high:g} Hz"),
        (recording.duration_s < needs.min_duration_s,
         f"{recording.duration_s:g} s long, the task needs {needs.min_duration_s:g} s"),
    ]
    for kind in needs.event_kinds:
        found = len(recording.events.get(kind, ()))
        checks.append((found < max(needs.min_events, 1), f"{found} event(s) of kind {kind!r}"))
    return next((why for failed, why in checks if failed), None)


# --- what the binders share --------------------------------------------------------------


def _eeg(recording: Recording, prefer: list[str] | None = None) -> list[str]:
    """EEG channel names, those whose core is in `prefer` first (in prefer's order)."""
    names = recording.of_kind("eeg")
    if not prefer:
        return names
    rank = {core.upper(): i for i, core in enumerate(prefer)}
    preferred = sorted((n for n in names if core_name(n) in rank), key=lambda n: rank[core_name(n)])
    return preferred + [n for n in names if core_name(n) not in rank]


def _one_channel(recording: Recording, options: dict[str, Any], rng: random.Random) -> str:
    prefer = options.get("prefer")
    names = _eeg(recording, prefer)
    if not names:
        raise Unfit("no EEG channel")
    matching = [n for n in names if prefer and core_name(n) in {p.upper() for p in prefer}]
    return rng.choice(matching or names)


def _homologous_pairs(recording: Recording) -> list[tuple[str, str]]:
    """(left, right) channels over homologous sites: an odd-numbered site and the even one after it."""
    by_core = {core_name(n): n for n in recording.of_kind("eeg")}
    pairs = []
    for core, name in sorted(by_core.items()):
        match = re.fullmatch(r"([A-Z]+)(\d+)", core)
        if match and int(match.group(2)) % 2 == 1:
            partner = by_core.get(f"{match.group(1)}{int(match.group(2)) + 1}")
            if partner:
                pairs.append((name, partner))
    return pairs


def _window(recording: Recording, options: dict[str, Any], rng: random.Random) -> tuple[float, float]:
    """(start_s, length_s): options.window_s long (whole seconds), at a whole-second start
    drawn inside the recording."""
    length = float(options.get("window_s", 30))
    room = int(recording.duration_s - length)
    if room < 0:
        raise Unfit(f"{recording.duration_s:g} s is shorter than the task's {length:g}-s window")
    return float(rng.randint(0, room)), length


def _numbers(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _windowed(recording: Recording, options: dict[str, Any], rng: random.Random,
              params: dict[str, Any]) -> Proposal:
    start, length = _window(recording, options, rng)
    params["start_s"] = _numbers(start)
    if options.get("window_end", False):
        params["end_s"] = _numbers(start + length)
    else:
        params["length_s"] = _numbers(length)
    return Proposal({**options.get("fixed", {}), **params, "recording": recording.description})


# --- the binders -------------------------------------------------------------------------


def one_channel_window(recording: Recording, options: dict[str, Any], rng: random.Random) -> Proposal:
    """One EEG channel (options.prefer first) and a window: channel, start_s, length_s (or end_s)."""
    return _windowed(recording, options, rng, {options.get("param", "channel"): _one_channel(recording, options, rng)})


def channel_pair_window(recording: Recording, options: dict[str, Any], rng: random.Random) -> Proposal:
    """A homologous left/right pair (named by options.params) and a window."""
    pairs = _homologous_pairs(recording)
    prefer = {p.upper() for p in options.get("prefer", [])}
    preferred = [p for p in pairs if core_name(p[0]) in prefer]
    if not pairs:
        raise Unfit("no homologous left/right EEG channel pair")
    left, right = rng.choice(preferred or pairs)
    names = options.get("params", ["left", "right"])
    return _windowed(recording, options, rng, {names[0]: left, names[1]: right})


def channel_set(recording: Recording, options: dict[str, Any], rng: random.Random) -> Proposal:
    """options.count EEG channels (sorted as stored) under options.param, and no window."""
    names = _eeg(recording)
    count = int(options.get("count", 3))
    if len(names) < count:
        raise Unfit(f"{len(names)} EEG channel(s), the task compares {count}")
    chosen = sorted(rng.sample(names, count), key=names.index)
    return Proposal({**options.get("fixed", {}), options.get("param", "channels"): chosen,
                     "recording": recording.description})


def hypnogram_csv(recording: Recording, options: dict[str, Any], rng: random.Random) -> Proposal:
    """The recording's expert hypnogram as the sleep tasks' CSV (columns subject, epoch,
    reference; 4-stage codes), from its first to its last scored epoch."""
    stages = list(recording.stages or ())
    scored = [i for i, stage in enumerate(stages) if stage in STAGES]
    if not scored:
        raise Unfit("no scored epoch")
    night = stages[scored[0]:scored[-1] + 1]
    if any(stage not in STAGES for stage in night):
        raise Unfit("unscored epochs inside the night")
    if not {"REM"} <= set(night) or all(stage == "W" for stage in night):
        raise Unfit("no REM sleep scored")
    subject = options.get("subject", "s01")
    lines = ["subject,epoch,reference"] + [f"{subject},{i},{CSV_CODES[s]}" for i, s in enumerate(night, start=1)]
    text = "\n".join(lines) + "\n"
    return Proposal({**options.get("fixed", {}), "subject": subject, "column": "reference",
                     "recording": recording.description, "n_epochs": len(night)},
                    derived={".csv": text.encode})


BINDERS: dict[str, Binder] = {
    "one_channel_window": one_channel_window,
    "channel_pair_window": channel_pair_window,
    "channel_set": channel_set,
    "hypnogram_csv": hypnogram_csv,
}
