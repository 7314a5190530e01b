"""Loading recordings once: an LRU cache of whole recordings held as one float array.

A long PSG takes seconds to read; tools are called many times per episode, so a recording
is read with MNE (preload: one contiguous array) the first time and served from memory
afterwards. The cache key includes mtime and size, so a changed file is read again.
"""
from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from eegtools.errors import ToolError

MNE_SUFFIXES = (".edf", ".bdf", ".fif", ".fif.gz", ".set", ".vhdr", ".gdf")
CACHE_RECORDINGS = int(os.environ.get("EEGTOOLS_CACHE_RECORDINGS", "2"))
CACHE_BYTES = int(os.environ.get("EEGTOOLS_CACHE_BYTES", str(4 * 1024**3)))
NPY_UNITS = {"V": 1.0, "mV": 1e-3, "uV": 1e-6, "µV": 1e-6}
CacheKey: TypeAlias = tuple[str, int, int, float | None]  # resolved path, mtime_ns, size, sfreq


@dataclass(frozen=True)
class Recording:
    """A whole recording in memory. `data` is (n_channels, n_samples) in volts, read-only
    (MNE's convention; non-electrical channels keep their file units)."""

    path: str
    sfreq: float
    ch_names: tuple[str, ...]
    ch_types: tuple[str, ...]
    data: NDArray[np.float64] = field(repr=False)
    meas_date: str | None = None
    n_annotations: int = 0

    @property
    def n_samples(self) -> int:
        """Samples per channel."""
        return int(self.data.shape[1])

    @property
    def duration_s(self) -> float:
        """Length in seconds (samples / sampling rate)."""
        return self.n_samples / self.sfreq


class _Cache:
    """LRU by count and bytes; one lock per key so two callers never read one file twice."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: OrderedDict[CacheKey, Recording] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[CacheKey, threading.Lock] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: CacheKey, load: Callable[[], Recording]) -> Recording:
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return self._items[key]
            recording = load()
            with self._lock:
                self.misses += 1
                self._items[key] = recording
                self._evict()
                return recording

    def _evict(self) -> None:
        while len(self._items) > 1 and (
            len(self._items) > self.max_items or self._bytes() > self.max_bytes
        ):
            self._items.popitem(last=False)

    def _bytes(self) -> int:
        return sum(r.data.nbytes for r in self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0

    def info(self) -> dict[str, int]:
        with self._lock:
            return {"recordings": len(self._items), "bytes": self._bytes(), "hits": self.hits, "misses": self.misses}


_CACHE = _Cache(CACHE_RECORDINGS, CACHE_BYTES)


def load_recording(path: str | os.PathLike[str] | Recording, sfreq: float | None = None) -> Recording:
    """The recording at `path`, from the cache when the file is unchanged.

    EDF/BDF/FIF/SET/VHDR/GDF are read with MNE; `.npy` needs a sampling rate, from `sfreq`
    or a JSON sidecar (`<file>.json` or `<stem>.json`: {"sfreq", "ch_names", "unit"}).
    """
    if isinstance(path, Recording):
        return path
    resolved = Path(path)
    try:
        stat = resolved.stat()
    except OSError as exc:
        raise ToolError("bad_argument", f"record {str(path)!r} cannot be read: {exc.strerror}", argument="record") from exc
    key = (str(resolved.resolve()), stat.st_mtime_ns, stat.st_size, sfreq)
    return _CACHE.get(key, lambda: _read(resolved, sfreq))


def clear_cache() -> None:
    """Drop every cached recording and reset the hit and miss counts."""
    _CACHE.clear()


def cache_info() -> dict[str, int]:
    """The cache's state: recordings held, their bytes, hits and misses."""
    return _CACHE.info()


def _read(path: Path, sfreq: float | None) -> Recording:
    name = path.name.lower()
    if name.endswith(".npy"):
        return _read_npy(path, sfreq)
    if name.endswith(MNE_SUFFIXES):
        return _read_mne(path)
    raise ToolError(
        "unsupported",
        f"record {path.name!r}: format not supported (readable: {', '.join(MNE_SUFFIXES)}, .npy)",
        argument="record",
    )


def _read_mne(path: Path) -> Recording:
    import mne

    try:
        raw = mne.io.read_raw(str(path), preload=True, verbose="error")
    except Exception as exc:  # a corrupt file is the caller's argument problem, not a crash
        raise ToolError("unsupported", f"record {path.name!r} could not be read: {exc}", argument="record") from exc
    # raw._data is the preloaded array itself; get_data() would copy a 23-hour PSG once more.
    data = raw._data
    data.setflags(write=False)
    meas = raw.info.get("meas_date")
    return Recording(
        path=str(path),
        sfreq=float(raw.info["sfreq"]),
        ch_names=tuple(raw.ch_names),
        ch_types=tuple(raw.get_channel_types()),
        data=data,
        meas_date=meas.isoformat() if meas is not None else None,
        n_annotations=len(raw.annotations),
    )


def _sidecar(path: Path) -> dict[str, Any]:
    for candidate in (path.with_name(path.name + ".json"), path.with_suffix(".json")):
        if candidate.is_file():
            try:
                meta: dict[str, Any] = json.loads(candidate.read_text())
                return meta
            except (OSError, json.JSONDecodeError) as exc:
                raise ToolError("unsupported", f"sidecar {candidate.name!r} is not valid JSON: {exc}", argument="record") from exc
    return {}


def _read_npy(path: Path, sfreq: float | None) -> Recording:
    meta = _sidecar(path)
    rate = sfreq or meta.get("sfreq")
    if not rate:
        raise ToolError("unsupported", f"record {path.name!r}: a .npy file needs its sampling rate (sidecar JSON with 'sfreq')", argument="record")
    array = np.load(path, allow_pickle=False)
    if array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2:
        raise ToolError("unsupported", f"record {path.name!r}: expected (n_channels, n_samples), got shape {array.shape}", argument="record")
    unit = meta.get("unit", "uV")
    if unit not in NPY_UNITS:
        raise ToolError("unsupported", f"record {path.name!r}: sidecar unit {unit!r} not one of {sorted(NPY_UNITS)}", argument="record")
    data = np.ascontiguousarray(array, dtype=np.float64) * NPY_UNITS[unit]
    data.setflags(write=False)
    names = meta.get("ch_names") or [f"ch{i}" for i in range(data.shape[0])]
    if len(names) != data.shape[0]:
        raise ToolError("unsupported", f"record {path.name!r}: {len(names)} ch_names for {data.shape[0]} channels", argument="record")
    types = meta.get("ch_types") or ["eeg"] * len(names)
    return Recording(str(path), float(rate), tuple(names), tuple(types), data)


# --- selecting channels and times ---------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z\-]+", "", name.casefold())


def resolve_channels(rec: Recording, channels: Sequence[str] | None, *, default_eeg: bool = True) -> list[int]:
    """Indices of the named channels (exact, then case/dot/space-insensitive match).

    None means every EEG-typed channel (all channels when none is typed EEG)."""
    if channels is None:
        eeg = [i for i, t in enumerate(rec.ch_types) if t == "eeg"]
        return eeg if (eeg and default_eeg) else list(range(len(rec.ch_names)))
    if isinstance(channels, str):
        channels = [channels]
    if not channels:
        raise ToolError("bad_argument", "channels: give at least one channel name (or omit it for all EEG channels)", argument="channels")
    exact = {n: i for i, n in enumerate(rec.ch_names)}
    loose: dict[str, list[int]] = {}
    for i, n in enumerate(rec.ch_names):
        loose.setdefault(_norm(n), []).append(i)
    picked: list[int] = []
    for name in channels:
        if name in exact:
            index = exact[name]
        else:
            matches = loose.get(_norm(str(name)), [])
            if len(matches) != 1:
                raise _unknown_channel(rec, name, matches)
            index = matches[0]
        if index not in picked:
            picked.append(index)
    return picked


def _unknown_channel(rec: Recording, name: str, matches: list[int]) -> ToolError:
    if matches:
        names = [rec.ch_names[i] for i in matches]
        return ToolError("unknown_channel", f"channels: {name!r} is ambiguous, it matches {names}", argument="channels")
    shown = ", ".join(rec.ch_names[:40]) + (" ..." if len(rec.ch_names) > 40 else "")
    return ToolError("unknown_channel", f"channels: {name!r} is not in this recording; available: {shown}", argument="channels")


def resolve_span(rec: Recording, start_s: float | None, end_s: float | None) -> tuple[int, int]:
    """Sample bounds [start, stop) of a time range in seconds; None means the recording's edge."""
    duration = rec.duration_s
    start = 0.0 if start_s is None else float(start_s)
    end = duration if end_s is None else float(end_s)
    slack = 1.0 / rec.sfreq  # a range ending at the rounded duration is still inside
    if start < 0 or start >= duration:
        raise ToolError("out_of_range", f"start_s={start:g} lies outside the recording (0 to {duration:.3f} s)", argument="start_s")
    if end > duration + slack or end <= 0:
        raise ToolError("out_of_range", f"end_s={end:g} lies outside the recording (0 to {duration:.3f} s)", argument="end_s")
    if end <= start:
        raise ToolError("out_of_range", f"end_s={end:g} must be greater than start_s={start:g}", argument="end_s")
    first = int(round(start * rec.sfreq))
    last = min(rec.n_samples, int(round(end * rec.sfreq)))
    if last - first < 2:
        raise ToolError("out_of_range", f"time range {start:g}-{end:g} s holds fewer than 2 samples", argument="end_s")
    return first, last
