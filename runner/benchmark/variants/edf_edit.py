"""Byte-level editing of EDF/EDF+ files in memory, for leak-resistant variants.

`parse` splits a file's bytes into its fixed header, every per-signal header field (kept as
the file's own padded ASCII text, so an untouched field is written back byte for byte) and
its data records as a read-only (records x samples) little-endian int16 array. The edits
return a new `Edf`; `to_bytes` writes one back. Nothing here draws random numbers, so equal
inputs give equal bytes.

Physical values follow the EDF definition MNE applies when reading:
``physical = physical_min + (digital - digital_min) * gain`` with
``gain = (physical_max - physical_min) / (digital_max - digital_min)``.
EDF+ 'EDF Annotations' signals hold TALs (time-stamped annotation lists, text) rather than
samples; they are never scaled, reordered away from the end or renamed.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import numpy.typing as npt

from runner.benchmark.agentbench.edf import FIXED_HEADER, EdfError, parse_start

ANNOTATION_LABEL = "EDF Annotations"
# Per-signal header fields in file order with their widths; each is stored for all signals
# in turn (all labels, then all transducers, ...).
SIGNAL_FIELDS: tuple[tuple[str, int], ...] = (
    ("label", 16), ("transducer", 80), ("dimension", 8), ("physical_min", 8),
    ("physical_max", 8), ("digital_min", 8), ("digital_max", 8), ("prefilter", 80),
    ("samples", 8), ("reserved", 32))
SIGNAL_HEADER = sum(width for _, width in SIGNAL_FIELDS)  # 256 bytes per signal
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")

Digital = npt.NDArray[np.int16]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Signal:
    """One signal's header fields as the raw, padded ASCII text of the file."""

    label: str
    transducer: str
    dimension: str
    physical_min: str
    physical_max: str
    digital_min: str
    digital_max: str
    prefilter: str
    samples: str
    reserved: str

    @property
    def name(self) -> str:
        """The label without its padding (what MNE calls the channel)."""
        return self.label.strip()

    @property
    def is_annotation(self) -> bool:
        """An EDF+ annotation signal (TAL text, not samples)."""
        return self.name == ANNOTATION_LABEL

    @property
    def n_samples(self) -> int:
        """Samples of this signal in one data record."""
        return int(self.samples.strip())

    @property
    def pmin(self) -> float:
        """Physical minimum as a number."""
        return float(self.physical_min.strip())

    @property
    def pmax(self) -> float:
        """Physical maximum as a number."""
        return float(self.physical_max.strip())

    @property
    def dmin(self) -> int:
        """Digital minimum as a number."""
        return int(self.digital_min.strip())

    @property
    def dmax(self) -> int:
        """Digital maximum as a number."""
        return int(self.digital_max.strip())

    @property
    def gain(self) -> float:
        """Physical units per digital step (negative for a negated signal)."""
        if self.dmax == self.dmin:
            raise EdfError(f"signal {self.name!r}: digital minimum equals maximum, no scale is defined")
        return (self.pmax - self.pmin) / (self.dmax - self.dmin)


@dataclass(frozen=True, eq=False)
class Edf:
    """A whole EDF/EDF+ file: fixed header text, signal headers and data records."""

    name: str  # the input's name, used in every error message
    fixed: str  # the 256-character fixed header (latin-1 text)
    signals: tuple[Signal, ...]
    records: Digital  # (n_records, samples of all signals per record), read-only

    @property
    def n_records(self) -> int:
        """Number of data records."""
        return int(self.records.shape[0])

    @property
    def record_duration_s(self) -> float:
        """Seconds per data record."""
        return float(self.fixed[244:252].strip())

    @property
    def duration_s(self) -> float:
        """Recorded seconds: data records times the record duration."""
        return self.n_records * self.record_duration_s

    @property
    def reserved(self) -> str:
        """The reserved field: "EDF+C", "EDF+D" or blank for plain EDF."""
        return self.fixed[192:236].strip()

    @property
    def is_discontinuous(self) -> bool:
        """EDF+D: data records need not follow each other in time."""
        return self.reserved.startswith("EDF+D")

    @property
    def start(self) -> dt.datetime:
        """Start date and time of the first data record (whole seconds)."""
        return parse_start(Path(self.name), self.fixed[168:176], self.fixed[176:184])

    @property
    def ordinary(self) -> tuple[int, ...]:
        """Indices of the signals that hold samples (not annotations)."""
        return tuple(i for i, s in enumerate(self.signals) if not s.is_annotation)

    @property
    def annotations(self) -> tuple[int, ...]:
        """Indices of the EDF+ annotation signals, in file order."""
        return tuple(i for i, s in enumerate(self.signals) if s.is_annotation)

    @property
    def sfreq(self) -> float:
        """Highest sampling rate of the ordinary signals (the rate MNE reads the file at)."""
        return max(self.signals[i].n_samples for i in self.ordinary) / self.record_duration_s

    def index(self, name: str) -> int:
        """Index of the signal labelled `name` (stripped)."""
        for i, signal in enumerate(self.signals):
            if signal.name == name:
                return i
        raise EdfError(f"{self.name}: no signal labelled {name!r}")

    def gain(self, index: int) -> float:
        """Signal `index`'s physical units per digital step; EdfError naming the file when
        its digital range is empty."""
        try:
            return self.signals[index].gain
        except EdfError as exc:
            raise EdfError(f"{self.name}: {exc}") from exc

    def digital(self, index: int) -> Digital:
        """All samples of signal `index` in record order, as stored."""
        lo, hi = _columns(self)[index]
        return np.ascontiguousarray(self.records[:, lo:hi]).reshape(-1)

    def physical(self, index: int) -> Floats:
        """All samples of signal `index` in its physical dimension (as MNE scales them)."""
        s = self.signals[index]
        return s.pmin + (self.digital(index).astype(np.float64) - s.dmin) * self.gain(index)


def parse(data: bytes, name: str) -> Edf:
    """Split the bytes of an EDF/EDF+ file; EdfError naming `name` when they are not one."""
    try:
        ns = int(data[252:256].decode("ascii").strip())
        header_bytes = int(data[184:192].decode("ascii").strip())
        n_records = int(data[236:244].decode("ascii").strip())
    except (ValueError, UnicodeDecodeError) as exc:
        raise EdfError(f"{name}: not an EDF file (bad fixed header: {exc})") from exc
    if ns < 1 or header_bytes != FIXED_HEADER + ns * SIGNAL_HEADER or len(data) < header_bytes:
        raise EdfError(f"{name}: not an EDF file (header of {header_bytes} bytes for {ns} signals)")
    if data[:8] != b"0       ":
        raise EdfError(f"{name}: version {data[:8]!r} is not EDF (BDF's 24-bit samples are not handled)")
    signals = _signals(data[FIXED_HEADER:header_bytes].decode("latin-1"), ns)
    try:
        per_record = sum(s.n_samples for s in signals)
    except ValueError as exc:
        raise EdfError(f"{name}: bad samples-per-record field: {exc}") from exc
    body = data[header_bytes:]
    if n_records < 0:  # -1: still recording when written; the file size tells
        n_records = len(body) // (2 * per_record)
    if len(body) < n_records * 2 * per_record:
        raise EdfError(f"{name}: {len(body)} data bytes, the header says {n_records} records of "
                       f"{2 * per_record} bytes")
    records = np.frombuffer(body, dtype="<i2", count=n_records * per_record).reshape(n_records, per_record)
    edf = Edf(name=name, fixed=data[:FIXED_HEADER].decode("latin-1"), signals=signals,
              records=_frozen(records))
    _check_numbers(edf)
    return edf


def to_bytes(edf: Edf) -> bytes:
    """The bytes of `edf` as an EDF file (header sizes and record count written afresh)."""
    ns = len(edf.signals)
    fixed = _put(edf.fixed, 184, 8, str(FIXED_HEADER + ns * SIGNAL_HEADER))
    fixed = _put(fixed, 236, 8, str(edf.n_records))
    fixed = _put(fixed, 252, 4, str(ns))
    fields = "".join(getattr(s, field) for field, _ in SIGNAL_FIELDS for s in edf.signals)
    return (fixed + fields).encode("latin-1") + np.ascontiguousarray(edf.records, dtype="<i2").tobytes()


def reorder(edf: Edf, order: Sequence[int]) -> Edf:
    """Signals in the order `order` (a permutation of the ordinary signals' indices); the
    annotation signals follow, in their own order (EDF+ readers look for them anywhere, but
    keeping them last leaves every ordinary signal's new position plain)."""
    if sorted(order) != list(edf.ordinary):
        raise EdfError(f"{edf.name}: {list(order)} is not a permutation of the signals {list(edf.ordinary)}")
    full = [*order, *edf.annotations]
    bounds = _columns(edf)
    columns = np.concatenate([np.arange(*bounds[i]) for i in full])
    return dataclasses.replace(edf, signals=tuple(edf.signals[i] for i in full),
                               records=_frozen(edf.records[:, columns]))


def relabel(edf: Edf, names: Mapping[str, str]) -> Edf:
    """Signals relabelled by `names` (old stripped label -> new label); labels must stay
    unique, printable ASCII and within EDF's 16 characters."""
    signals = []
    for signal in edf.signals:
        new = names.get(signal.name, signal.name)
        if len(new) > 16 or not new.isascii() or not new.isprintable() or not new.strip():
            raise EdfError(f"{edf.name}: {new!r} cannot be an EDF label (1-16 printable ASCII characters)")
        signals.append(dataclasses.replace(signal, label=new.ljust(16)))
    labels = [s.name for s in signals if not s.is_annotation]
    if len(set(labels)) != len(labels):
        raise EdfError(f"{edf.name}: relabelling makes labels repeat: {sorted(labels)}")
    return dataclasses.replace(edf, signals=tuple(signals))


def rescale_unit(edf: Edf, index: int, dimension: str, factor: float) -> Edf:
    """Signal `index` declared in `dimension` with its physical range times `factor` (the
    digital samples stay; e.g. uV -> mV is factor 1e-3, so the volts MNE reads are unchanged
    to within half a quantisation step of the written range)."""
    signal = edf.signals[index]
    step = abs(edf.gain(index) * factor)
    low = _number_text(edf, signal, signal.pmin * factor, step)
    high = _number_text(edf, signal, signal.pmax * factor, step)
    changed = dataclasses.replace(signal, dimension=dimension.ljust(8), physical_min=low, physical_max=high)
    return _with_signal(edf, index, changed)


def negate(edf: Edf, index: int) -> Edf:
    """Signal `index` read negated, through its header alone: physical min and max become
    their negatives (swapped when the range is symmetric), so the gain changes sign and
    every physical value v reads as -v (to within half a quantisation step when a negative
    needs a ninth character and is rounded)."""
    signal = edf.signals[index]
    step = abs(edf.gain(index))
    changed = dataclasses.replace(signal, physical_min=_negated(edf, signal, signal.physical_min, step),
                                  physical_max=_negated(edf, signal, signal.physical_max, step))
    return _with_signal(edf, index, changed)


def add_physical(edf: Edf, index: int, values: Floats) -> tuple[Edf, int]:
    """Signal `index` with `values` (one per sample, physical units) added, re-encoded to
    digital by rounding and clipped to the digital range; also the number of clipped samples."""
    signal = edf.signals[index]
    target = edf.physical(index) + values
    exact = (target - signal.pmin) / edf.gain(index) + signal.dmin
    low, high = sorted((signal.dmin, signal.dmax))
    clipped = int(np.count_nonzero((exact < low - 0.5) | (exact > high + 0.5)))
    digital = np.clip(np.rint(exact), low, high).astype("<i2")
    lo, hi = _columns(edf)[index]
    records = edf.records.copy()
    records[:, lo:hi] = digital.reshape(edf.n_records, hi - lo)
    return dataclasses.replace(edf, records=_frozen(records)), clipped


def prepend_records(edf: Edf, count: int) -> Edf:
    """`count` copies of the first data records put before the recording: the start time
    moves back by their duration and every EDF+ annotation onset moves later by it, so each
    original sample and event keeps its time relative to the others. The copies carry only
    the time-keeping annotation (no event is duplicated). An annotation signal whose longer
    onsets no longer fit a record gets more samples per record."""
    if edf.is_discontinuous:
        raise EdfError(f"{edf.name}: EDF+D (discontinuous) records cannot be prepended here")
    if not 0 < count <= edf.n_records:
        raise EdfError(f"{edf.name}: cannot prepend {count} of its {edf.n_records} records")
    offset = Decimal(edf.fixed[244:252].strip()) * count
    if offset != offset.to_integral_value():
        raise EdfError(f"{edf.name}: {count} records last {offset} s, not whole seconds (the header "
                       "start time has 1-s resolution)")
    records = np.concatenate([edf.records[:count], edf.records])
    signals, columns = list(edf.signals), []
    for index, (lo, hi) in enumerate(_columns(edf)):
        if not edf.signals[index].is_annotation:
            columns.append(records[:, lo:hi])
            continue
        first = index == edf.annotations[0]
        texts = [_prepended_tals(edf, row[lo:hi], first) for row in records[:count]]
        texts += [_shift_tals(edf, _tals(row[lo:hi]), offset) for row in records[count:]]
        block = _annotation_blocks(texts, hi - lo)
        signals[index] = dataclasses.replace(signals[index], samples=str(block.shape[1]).ljust(8))
        columns.append(block)
    start = edf.start - dt.timedelta(seconds=int(offset))
    return dataclasses.replace(edf, fixed=_with_start(edf.fixed, start), signals=tuple(signals),
                               records=_frozen(np.concatenate(columns, axis=1)))


def format_number(value: float, width: int = 8) -> str:
    """`value` as the most precise decimal text of at most `width` characters (no exponent)."""
    for decimals in range(width, -1, -1):
        text = f"{value:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if text in ("-0", ""):
            text = "0"
        if len(text) <= width:
            return text
    raise ValueError(f"{value} does not fit in {width} characters")


# --- helpers -----------------------------------------------------------------------------


def _signals(text: str, ns: int) -> tuple[Signal, ...]:
    values: dict[str, list[str]] = {}
    at = 0
    for field, width in SIGNAL_FIELDS:
        values[field] = [text[at + i * width: at + (i + 1) * width] for i in range(ns)]
        at += ns * width
    return tuple(Signal(**{field: values[field][i] for field, _ in SIGNAL_FIELDS}) for i in range(ns))


def _check_numbers(edf: Edf) -> None:
    """Every numeric field parses, so later edits fail only for their own reasons."""
    try:
        float(edf.record_duration_s)
        [(s.pmin, s.pmax, s.dmin, s.dmax) for s in edf.signals]
    except ValueError as exc:
        raise EdfError(f"{edf.name}: bad numeric header field: {exc}") from exc


def _columns(edf: Edf) -> list[tuple[int, int]]:
    """Each signal's [start, stop) column range within a data record."""
    stops = np.cumsum([s.n_samples for s in edf.signals])
    return [(int(stop) - s.n_samples, int(stop)) for s, stop in zip(edf.signals, stops)]


def _frozen(records: Digital) -> Digital:
    records = np.ascontiguousarray(records, dtype="<i2")
    records.flags.writeable = False
    return records


def _put(text: str, at: int, width: int, value: str) -> str:
    if len(value) > width:
        raise ValueError(f"{value!r} does not fit a {width}-character header field")
    return text[:at] + value.ljust(width) + text[at + width:]


def _with_signal(edf: Edf, index: int, signal: Signal) -> Edf:
    signals = list(edf.signals)
    signals[index] = signal
    return dataclasses.replace(edf, signals=tuple(signals))


def _number_text(edf: Edf, signal: Signal, value: float, step: float) -> str:
    """`value` as an 8-character field; EdfError when rounding it would move samples by half a
    quantisation step (`step`, physical units of the new range) or more. The bound holds for
    every sample: a sample's error interpolates linearly between the two range ends' errors."""
    try:
        text = format_number(value)
    except ValueError as exc:
        raise EdfError(f"{edf.name}: signal {signal.name!r}: {exc}") from exc
    if abs(float(text) - value) >= 0.5 * step:
        raise EdfError(f"{edf.name}: signal {signal.name!r}: physical bound {value} cannot be written "
                       "in 8 characters without moving samples by half a quantisation step")
    return text.ljust(8)


def _negated(edf: Edf, signal: Signal, text: str, step: float) -> str:
    """The negative of a number field: its own digits when they fit, rounded otherwise."""
    core = text.strip()
    if float(core) == 0:
        return text
    flipped = core[1:] if core.startswith("-") else "-" + core.lstrip("+")
    if len(flipped) <= 8:
        return flipped.ljust(8)
    return _number_text(edf, signal, -float(core), step)


# --- EDF+ annotations (TALs) --------------------------------------------------------------


def _tals(block: Digital) -> list[bytes]:
    """The TALs of one record's annotation signal, each without its terminating NUL."""
    return [tal for tal in np.ascontiguousarray(block, dtype="<i2").tobytes().split(b"\x00") if tal]


def _is_timekeeping(tal: bytes) -> bool:
    """The record-start TAL: an onset and one empty annotation ("+12.5\\x14\\x14")."""
    return re.fullmatch(rb"[+-][0-9.]+\x14\x14", tal) is not None


def _shift_tals(edf: Edf, tals: list[bytes], offset: Decimal) -> list[bytes]:
    """Each TAL with its onset (the text before \\x15 or \\x14) later by `offset` seconds."""
    shifted = []
    for tal in tals:
        match = re.match(rb"([+-][0-9.]+)([\x14\x15].*)", tal, flags=re.DOTALL)
        if match is None:
            raise EdfError(f"{edf.name}: unreadable EDF+ annotation {tal[:40]!r}")
        try:
            onset = Decimal(match.group(1).decode("ascii")) + offset
        except InvalidOperation as exc:
            raise EdfError(f"{edf.name}: bad annotation onset {match.group(1)!r}") from exc
        shifted.append(f"{onset:+f}".encode("ascii") + match.group(2))
    return shifted


def _prepended_tals(edf: Edf, block: Digital, first: bool) -> list[bytes]:
    """What a copied record keeps of its annotations: the time-keeping TAL of the first
    annotation signal (its onset unchanged: the copy now starts the file), nothing else."""
    kept = _tals(block)[:1] if first else []
    if kept and not _is_timekeeping(kept[0]):
        raise EdfError(f"{edf.name}: a data record lacks its EDF+ time-keeping annotation")
    return kept


def _annotation_blocks(texts: list[list[bytes]], n_samples: int) -> Digital:
    """Each record's TALs packed NUL-terminated and NUL-padded into one (records x samples)
    block, at least `n_samples` wide and wider when a record needs it."""
    raws = [b"".join(tal + b"\x00" for tal in tals) for tals in texts]
    width = max(n_samples, max((len(raw) + 1) // 2 for raw in raws))
    joined = b"".join(raw.ljust(2 * width, b"\x00") for raw in raws)
    return np.frombuffer(joined, dtype="<i2").reshape(len(raws), width)


def _with_start(fixed: str, start: dt.datetime) -> str:
    """The fixed header with a new start date/time, in the EDF+ recording field too."""
    fixed = _put(fixed, 168, 8, start.strftime("%d.%m.%y"))
    fixed = _put(fixed, 176, 8, start.strftime("%H.%M.%S"))
    recording = fixed[88:168]
    match = re.match(r"Startdate \d{2}-[A-Z]{3}-\d{4}", recording)
    if match:  # EDF+: "Startdate 12-AUG-2009 ..." (left alone when it reads "Startdate X")
        date = f"Startdate {start.day:02d}-{_MONTHS[start.month - 1]}-{start.year:04d}"
        fixed = fixed[:88] + date + recording[len(date):] + fixed[168:]
    return fixed
