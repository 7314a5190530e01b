"""What the eegtools tools share: the types their signatures use (their JSON schemas come
from them), constants, and the helpers that open a recording and read a span of it."""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, SupportsFloat, TypeAlias, get_args

import numpy as np
from numpy.typing import ArrayLike

from eegtools import features as F
from eegtools.errors import ToolError
from eegtools.recording import Recording, load_recording, resolve_channels, resolve_span
from eegtools.schema import Minimum

RecordLike: TypeAlias = str | os.PathLike[str] | Recording
"""What every tool's `record` accepts: a file path, or a Recording from load_recording."""
ToolResult: TypeAlias = dict[str, Any]
"""A tool's JSON-serialisable result."""
NonNegative: TypeAlias = Annotated[float, Minimum(0)]
"""A number >= 0 (seconds, Hz, µV, ms); the bound is part of the tool's JSON schema."""
Count: TypeAlias = Annotated[int, Minimum(1)]
"""An integer >= 1; the bound is part of the tool's JSON schema."""
BandName: TypeAlias = Literal["delta", "theta", "alpha", "sigma", "beta", "gamma"]
"""The named frequency bands (eegtools.features.BANDS gives their edges)."""
Band: TypeAlias = BandName | Sequence[float]
"""A band by name, or as [low_hz, high_hz]."""
WindowFeature: TypeAlias = Literal[
    "rms_uv", "ptp_uv", "line_length_uv_per_s", "zero_crossing_rate_hz",
    "hjorth_activity_uv2", "hjorth_mobility_hz", "hjorth_complexity",
    "alpha_power", "alpha_relative", "beta_power", "beta_relative", "delta_power", "delta_relative",
    "gamma_power", "gamma_relative", "peak_frequency_hz", "sigma_power", "sigma_relative",
    "theta_power", "theta_relative",
]
"""The features compute_windowed_features computes: time-domain ones, then spectral ones sorted."""
CorrelationMethod: TypeAlias = Literal["pearson"]
"""The correlation methods compute_channel_correlation offers."""
FloatArray: TypeAlias = F.FloatArray
Transient: TypeAlias = tuple[float, str, float, float, float]  # time_s, channel, amplitude, width_ms, steepness

UV = 1e6
CHUNK_SAMPLES = 4_000_000  # windows are processed in chunks of about this many samples
SPECTRAL_FEATURES = {f"{b}_power" for b in F.BANDS} | {f"{b}_relative" for b in F.BANDS} | {"peak_frequency_hz"}
TIME_FEATURES = (
    "rms_uv", "ptp_uv", "line_length_uv_per_s", "zero_crossing_rate_hz",
    "hjorth_activity_uv2", "hjorth_mobility_hz", "hjorth_complexity",
)
WINDOW_FEATURES: tuple[WindowFeature, ...] = get_args(WindowFeature)  # = TIME_FEATURES + sorted(SPECTRAL_FEATURES)
DEFAULT_WINDOW_FEATURES: tuple[WindowFeature, ...] = (
    "rms_uv", "delta_relative", "theta_relative", "alpha_relative", "beta_relative",
)


def _sig(value: SupportsFloat, digits: int = 4) -> float | None:
    """A float rounded to `digits` significant digits; None for NaN/inf (JSON has neither)."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def _sig_list(values: ArrayLike, digits: int = 4) -> list[float | None]:
    return [_sig(v, digits) for v in np.asarray(values).ravel()]


def _open(record: RecordLike) -> Recording:
    return record if isinstance(record, Recording) else load_recording(record)


def _name(rec: Recording) -> str:
    return Path(rec.path).name


def _segment(
    rec: Recording, channels: Sequence[str] | None, start_s: float | None, end_s: float | None,
) -> tuple[list[int], int, int]:
    picks = resolve_channels(rec, channels)
    first, last = resolve_span(rec, start_s, end_s)
    return picks, first, last


def _uv(rec: Recording, picks: list[int], first: int, last: int) -> FloatArray:
    return rec.data[picks, first:last] * UV


def _longest(rec: Recording, picks: list[int]) -> str:
    return max((rec.ch_names[i] for i in picks), key=len, default="")


def _span(rec: Recording, first: int, last: int) -> list[float | None]:
    return [_sig(first / rec.sfreq, 8), _sig(last / rec.sfreq, 8)]


def _positive(name: str, value: object, *, allow_zero: bool = False) -> float:
    if value is None or not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ToolError("bad_argument", f"{name}: expected a number, got {value!r}", argument=name)
    if value < 0 or (value == 0 and not allow_zero):
        raise ToolError("bad_argument", f"{name}: must be {'>= 0' if allow_zero else '> 0'}, got {value!r}", argument=name)
    return float(value)
