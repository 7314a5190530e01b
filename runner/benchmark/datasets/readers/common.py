"""What the six dataset readers share: EDF headers read as channels and rates (no signal is
decoded), channel kinds from the usual label prefixes, 30-s sleep stages from annotation
onsets, and the one-phrase description every Recording carries."""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.benchmark.agentbench.edf import EdfError, EdfHeader, read_header
from runner.benchmark.datasets.base import Channel, ChannelKind, DatasetError
from validation.agentbench.answers import EPOCH_S

ANNOTATION_SIGNAL = "EDF Annotations"  # the EDF+ time-keeping signal: not a channel
KIND_ORDER: tuple[ChannelKind, ...] = ("eeg", "eog", "emg", "ecg", "misc")
KIND_WORDS = {"eeg": "EEG", "eog": "EOG", "emg": "EMG", "ecg": "ECG", "misc": "other"}
PREFIX_KINDS: dict[str, ChannelKind] = {"EEG": "eeg", "EOG": "eog", "EMG": "emg", "ECG": "ecg", "EKG": "ecg"}


@dataclass(frozen=True)
class EdfSignals:
    """The channels of one EDF file as a reader reports them."""

    path: Path
    channels: tuple[Channel, ...]
    rates: tuple[float, ...]  # samples per second of each channel
    sfreq: float  # the EEG channels' rate
    duration_s: float
    header: EdfHeader

    def other_rates(self) -> str:
        """"Resp oro-nasal, EMG submental at 1 Hz" for the channels not sampled at `sfreq`."""
        other: dict[float, list[str]] = {}
        for channel, rate in zip(self.channels, self.rates):
            if rate != self.sfreq:
                other.setdefault(rate, []).append(channel.name)
        return "; ".join(f"{', '.join(names)} at {rate:g} Hz" for rate, names in sorted(other.items()))


def named_files(root: Path, glob: str, name: re.Pattern[str], layout: str) -> list[Path]:
    """The files under `root` matching `glob` whose whole name matches `name`, sorted;
    DatasetError naming the root and the expected layout when there is none."""
    files = sorted(path for path in Path(root).rglob(glob) if name.fullmatch(path.name))
    if not files:
        raise DatasetError(f"{root}: {layout}")
    return files


def read_edf(path: Path, kind_of: Callable[[str], ChannelKind]) -> EdfSignals:
    """The channels, rates and length of an EDF/EDF+ file from its header (no signal decoded);
    DatasetError naming the file when it is not a readable EDF with signals."""
    try:
        head = read_header(path)
    except EdfError as exc:
        raise DatasetError(str(exc)) from exc
    pairs = [(label, n / head.record_duration_s) for label, n in zip(head.labels, head.samples_per_record)
             if label != ANNOTATION_SIGNAL] if head.record_duration_s > 0 else []
    if not pairs or head.n_records <= 0:
        raise DatasetError(f"{path}: an EDF header without signals or data records; expected a recording")
    channels = tuple(Channel(label, kind_of(label)) for label, _ in pairs)
    rates = tuple(rate for _, rate in pairs)
    return EdfSignals(path=Path(path), channels=channels, rates=rates, sfreq=eeg_rate(channels, rates),
                      duration_s=head.duration_s, header=head)


def kind_by_prefix(name: str) -> ChannelKind:
    """The kind a PSG label's first word names ("EEG Fpz-Cz", "EMG chin", "ECG"); misc otherwise."""
    return PREFIX_KINDS.get(name.split(" ")[0].split("-")[0].upper(), "misc")


def eeg_rate(channels: Sequence[Channel], rates: Sequence[float]) -> float:
    """The EEG channels' rate (their most common one; the highest on a tie), else the highest
    rate: what a task means by "the recording's sampling rate" in a mixed-rate PSG file."""
    eeg = [rate for channel, rate in zip(channels, rates) if channel.kind == "eeg"] or list(rates)
    if not eeg:
        return 0.0
    counts = Counter(eeg)
    return float(max(counts, key=lambda rate: (counts[rate], rate)))


def n_epochs(duration_s: float) -> int:
    """Whole 30-s epochs in a recording of `duration_s` seconds."""
    return int(duration_s // EPOCH_S)


def stages_from_annotations(annotations: Iterable[tuple[float, float, str]],
                            stage_of: Mapping[str, str], count: int) -> tuple[str, ...]:
    """One label per 30-s epoch: each annotation whose text `stage_of` maps labels the epochs
    its onset and duration cover (onsets in seconds from the recording's start); "?" elsewhere."""
    labels = ["?"] * count
    for onset, duration, text in annotations:
        stage = stage_of.get(text.strip())
        if stage is None:
            continue
        first = int(round(onset / EPOCH_S))
        start, stop = max(first, 0), min(first + max(1, int(round(duration / EPOCH_S))), count)
        if start < stop:
            labels[start:stop] = [stage] * (stop - start)
    return tuple(labels)


def describe(what: str, source: str, key: str, channels: Sequence[Channel], sfreq: float,
             duration_s: float, naming: str, rates: str = "") -> str:
    """The {recording} phrase: what the file is, then (dataset, key; channel counts per kind;
    rate; length; how channel names look)."""
    counts = Counter(channel.kind for channel in channels)
    per_kind = ", ".join(f"{counts[kind]} {KIND_WORDS[kind]}" for kind in KIND_ORDER if counts[kind])
    rate = f"{sfreq:g} Hz" + (f" ({rates})" if rates else "")
    return (f"{what} ({source}, recording {key}; {len(channels)} channels: {per_kind}; {rate}; "
            f"{seconds(duration_s)} s; {naming})")


def seconds(value: float) -> str:
    """A duration as people write it: 1,512 or 60.5."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.3f}".rstrip("0")


def name_examples(channels: Sequence[Channel]) -> str:
    """"channel names like 'EEG F4-M1', 'EOG E1-M2'": the first name of each kind, as stored."""
    firsts: dict[ChannelKind, str] = {}
    for channel in channels:
        firsts.setdefault(channel.kind, channel.name)
    return "channel names like " + ", ".join(f"'{firsts[kind]}'" for kind in KIND_ORDER if kind in firsts)


def edf_annotations(path: Path, since: dt.datetime | None = None) -> list[tuple[float, float, str]]:
    """(onset s, duration s, text) of an EDF+ file's annotations; with `since` (another file's
    start), onsets count from it, as a scoring file's must from its PSG's start."""
    import mne

    try:
        offset = 0.0 if since is None else (read_header(path).start - since).total_seconds()
        annotations = mne.read_annotations(path)
    except (EdfError, OSError, ValueError, RuntimeError) as exc:
        raise DatasetError(f"{path}: not a readable EDF+ annotation file: {exc}") from exc
    return [(float(onset) + offset, float(duration), str(text))
            for onset, duration, text in zip(annotations.onset, annotations.duration, annotations.description)]


def events_from(annotations: Iterable[tuple[float, float, str]], skip: Iterable[str] = ()) -> dict[str, tuple[float, ...]]:
    """Annotation onsets by their text (the event kind), in time order; texts in `skip` left out."""
    left_out = set(skip)
    events: dict[str, list[float]] = {}
    for onset, _, text in annotations:
        if text.strip() not in left_out:
            events.setdefault(text.strip(), []).append(onset)
    return {kind: tuple(sorted(onsets)) for kind, onsets in sorted(events.items())}
