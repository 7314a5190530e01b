"""EDF headers and lossless cutting along data records (for the T5/T6 adapters).

Only the fixed header is parsed (no signal is decoded): enough for a record's duration, its
start time and the byte layout of its data records. `cut_records` writes a new EDF holding
data records [first, stop) byte for byte, with the record count and the start date/time
updated: the paper's T6 trimming ("the signal is losslessly cut from the source EDF along its
data-record boundaries").
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from validation.errors import UserError

FIXED_HEADER = 256


class EdfError(UserError, ValueError):
    """An EDF file this module cannot read or cut; the message names the file."""


@dataclass(frozen=True)
class EdfHeader:
    """The fixed header of one EDF file and the per-signal fields the cutting needs."""

    path: Path
    start: dt.datetime
    header_bytes: int
    reserved: str
    n_records: int
    record_duration_s: float
    labels: tuple[str, ...]
    samples_per_record: tuple[int, ...]

    @property
    def duration_s(self) -> float:
        """Recorded seconds: data records times the record duration."""
        return self.n_records * self.record_duration_s

    @property
    def record_bytes(self) -> int:
        """Bytes of one data record (16-bit samples of every signal)."""
        return 2 * sum(self.samples_per_record)

    @property
    def is_edf_plus(self) -> bool:
        """EDF+ (reserved field "EDF+C"/"EDF+D"), whose annotations keep time and forbid cuts."""
        return self.reserved.startswith("EDF+")


def read_header(path: Path) -> EdfHeader:
    """The header of `path` without decoding any signal; EdfError when it is unreadable."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            fixed = handle.read(FIXED_HEADER)
            ns = int(fixed[252:256].decode("ascii").strip())
            signal_header = handle.read(ns * 256)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise EdfError(f"{path}: not a readable EDF header: {exc}") from exc
    if len(fixed) < FIXED_HEADER or len(signal_header) < ns * 256:
        raise EdfError(f"{path}: truncated EDF header")
    text = fixed.decode("ascii", errors="replace")
    labels = tuple(signal_header[i * 16:(i + 1) * 16].decode("ascii", "replace").strip() for i in range(ns))
    base = ns * (16 + 80 + 8 + 8 + 8 + 8 + 8 + 80)
    samples = tuple(int(signal_header[base + i * 8: base + (i + 1) * 8].decode("ascii").strip())
                    for i in range(ns))
    try:
        n_records = int(text[236:244].strip())
        record_duration = float(text[244:252].strip())
        header_bytes = int(text[184:192].strip())
    except ValueError as exc:
        raise EdfError(f"{path}: bad EDF header field: {exc}") from exc
    return EdfHeader(path=path, start=parse_start(path, text[168:176], text[176:184]),
                     header_bytes=header_bytes, reserved=text[192:236].strip(),
                     n_records=n_records, record_duration_s=record_duration, labels=labels,
                     samples_per_record=samples)


def cut_records(header: EdfHeader, first: int, stop: int) -> bytes:
    """The bytes of an EDF with data records [first, stop) of `header.path`."""
    if header.is_edf_plus:
        raise EdfError(f"{header.path}: EDF+ time-keeping annotations cannot be cut losslessly here")
    if not 0 <= first < stop <= header.n_records:
        raise EdfError(f"{header.path}: record range [{first}, {stop}) outside 0..{header.n_records}")
    with open(header.path, "rb") as handle:
        head = bytearray(handle.read(header.header_bytes))
        handle.seek(header.header_bytes + first * header.record_bytes)
        body = handle.read((stop - first) * header.record_bytes)
    if len(body) != (stop - first) * header.record_bytes:
        raise EdfError(f"{header.path}: file shorter than its header says")
    start = header.start + dt.timedelta(seconds=first * header.record_duration_s)
    head[168:176] = start.strftime("%d.%m.%y").encode("ascii")
    head[176:184] = start.strftime("%H.%M.%S").encode("ascii")
    head[236:244] = f"{stop - first:<8d}".encode("ascii")
    return bytes(head) + body


def parse_start(path: Path, date: str, time: str) -> dt.datetime:
    """The start date/time of an EDF header (dd.mm.yy, hh.mm.ss; EDF's 1985-2084 year rule)."""
    try:
        day, month, year = (int(x) for x in date.strip().split("."))
        hour, minute, second = (int(x) for x in time.strip().split("."))
    except ValueError as exc:
        raise EdfError(f"{path}: bad start date/time {date!r} {time!r}") from exc
    year += 1900 if year >= 85 else 2000  # EDF's two-digit year rule
    return dt.datetime(year, month, day, hour, minute, second)
