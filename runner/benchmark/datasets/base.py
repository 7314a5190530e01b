"""A recording of a local dataset as the binder sees it: its files, channels, rate, length,
sleep stages and events, read from the dataset's native layout by one reader per dataset."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from validation.errors import UserError

ChannelKind = Literal["eeg", "eog", "emg", "ecg", "misc"]
STAGES = ("W", "N1", "N2", "N3", "REM")  # "?" marks an epoch no scorer staged


class DatasetError(UserError, ValueError):
    """The local copy does not have the dataset's native layout; the message names the path."""


@dataclass(frozen=True)
class Channel:
    """One stored channel and what it records."""

    name: str  # exactly as stored in the file
    kind: ChannelKind


@dataclass(frozen=True)
class Recording:
    """One recording. `signal` is the file the reference scripts read (EDF, or EEGLAB .set
    for BIDS data); `suffix` is what it is staged as (.edf even for ISRUC's .rec, which is EDF).
    `events_tsv` is a BIDS events file when the dataset has one (columns onset, duration,
    trial_type, sample). `stages` holds one label per 30-s epoch from the recording's start."""

    dataset: str
    key: str  # the recording's id within the copy, e.g. "SN001", "subgroupI/1", "S001R04"
    subject: str
    signal: Path
    suffix: str
    channels: tuple[Channel, ...]
    sfreq: float
    duration_s: float
    description: str  # one phrase for a {recording} placeholder, e.g. "an EDF file of 19-channel ..."
    stages: tuple[str, ...] | None = None
    events: dict[str, tuple[float, ...]] = field(default_factory=dict)  # kind -> onsets (s)
    events_tsv: Path | None = None
    companions: tuple[Path, ...] = ()  # other files the reader read (hypnogram files): provenance only
    # Bytes staged instead of `signal` when it cannot be staged as is (an EEGLAB .set names its
    # .fdt, so a renamed copy breaks: BIDS readers convert it to EDF); must be deterministic.
    content: Callable[[], bytes] | None = field(default=None, compare=False)

    def of_kind(self, kind: ChannelKind) -> list[str]:
        """Channel names of one kind, in file order."""
        return [c.name for c in self.channels if c.kind == kind]
