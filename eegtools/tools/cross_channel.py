"""Tools 9-10: left-right asymmetry and the correlation between channels."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import cast

import numpy as np

from eegtools import features as F
from eegtools.budget import DEFAULT_BUDGET_TOKENS, SAMPLE_VALUE, check_budget
from eegtools.errors import ToolError
from eegtools.recording import Recording, resolve_channels, resolve_span
from eegtools.tools._common import (
    Band,
    CorrelationMethod,
    FloatArray,
    NonNegative,
    RecordLike,
    ToolResult,
    _longest,
    _name,
    _open,
    _segment,
    _sig,
    _sig_list,
    _span,
    _uv,
)
from eegtools.tools.metadata import DIGITS, hemisphere
from eegtools.tools.spectra import resolve_bands

# --- 9-10: cross-channel ----------------------------------------------------------------


def _mirror(name: str) -> str:
    """The homologous 10-20 name: each odd number n becomes n+1 (left -> right)."""
    return DIGITS.sub(lambda m: str(int(m.group()) + 1) if int(m.group()) % 2 else m.group(), name)


def homologous_pairs(rec: Recording) -> list[tuple[int, int]]:
    """(left, right) channel pairs found by the 10-20 numbering (F3/F4, FP1-F7/FP2-F8, ...)."""
    index = {re.sub(r"[^0-9a-z\-]+", "", n.casefold()): i for i, n in enumerate(rec.ch_names)}
    pairs = []
    for i, n in enumerate(rec.ch_names):
        if hemisphere(n) != "left":
            continue
        j = index.get(re.sub(r"[^0-9a-z\-]+", "", _mirror(n).casefold()))
        if j is not None and hemisphere(rec.ch_names[j]) == "right":
            pairs.append((i, j))
    return pairs


def compute_asymmetry(
    record: RecordLike, pairs: list[Sequence[str]] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, bands: Sequence[Band] = ("alpha",),
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Left-right band-power asymmetry per homologous channel pair.

    asymmetry_index = (R - L) / (R + L) and log_ratio = ln R - ln L. `pairs`:
    [[left, right], ...]; default all 10-20 pairs.

    Parameters
    ----------
    %(record)s
    pairs : list of [str, str], optional
        [[left, right], ...] channel pairs (default: all 10-20 homologous pairs).
    %(start_s)s
    %(end_s)s
    bands : sequence of (str or [float, float]), optional
        Band names (delta, theta, alpha, sigma, beta, gamma) or [low_hz, high_hz] pairs.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``pairs``: [{``left``, ``right``, ``band``,
        ``left_power_uv2``, ``right_power_uv2``, ``asymmetry_index``, ``log_ratio``}], one
        per pair and band.

    Raises
    ------
    ToolError
        ``unsupported`` when no 10-20 pairs are found or for an unknown band name;
        ``bad_argument`` for malformed pairs or bands; ``unknown_channel``,
        ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    chosen = resolve_bands(list(bands) if isinstance(bands, (list, tuple)) else bands)
    if pairs is None:
        index_pairs = homologous_pairs(rec)
        if not index_pairs:
            raise ToolError("unsupported", "pairs: no homologous 10-20 pairs found in the channel names; give pairs explicitly", argument="pairs")
    else:
        if not isinstance(pairs, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs) or not pairs:
            raise ToolError("bad_argument", "pairs: expected a list of [left, right] channel-name pairs", argument="pairs")
        index_pairs = [(resolve_channels(rec, [str(p[0])])[0], resolve_channels(rec, [str(p[1])])[0]) for p in pairs]
    first, last = resolve_span(rec, start_s, end_s)
    sample = [_longest(rec, [p[0] for p in index_pairs]) * 2, "gamma", SAMPLE_VALUE, SAMPLE_VALUE, SAMPLE_VALUE, SAMPLE_VALUE]
    check_budget("compute_asymmetry", len(index_pairs) * len(chosen), sample, budget_tokens, f"{len(index_pairs)} pairs x {len(chosen)} bands")
    picks = sorted({i for p in index_pairs for i in p})
    position = {ch: k for k, ch in enumerate(picks)}
    freqs, psd = F.welch_psd(_uv(rec, picks, first, last), rec.sfreq)
    rows = []
    for left, right in index_pairs:
        for label, (low, high) in chosen.items():
            pl = F.band_power(freqs, psd[position[left]], low, high)
            pr = F.band_power(freqs, psd[position[right]], low, high)
            with np.errstate(divide="ignore", invalid="ignore"):
                index = (pr - pl) / (pr + pl)
                log_ratio = np.log(pr) - np.log(pl)
            rows.append({
                "left": rec.ch_names[left], "right": rec.ch_names[right], "band": label,
                "left_power_uv2": _sig(pl), "right_power_uv2": _sig(pr),
                "asymmetry_index": _sig(index), "log_ratio": _sig(log_ratio),
            })
    return {"record": _name(rec), "time_range_s": _span(rec, first, last), "pairs": rows}


def compute_channel_correlation(
    record: RecordLike, channels: Sequence[str] | None = None, start_s: NonNegative | None = None,
    end_s: NonNegative | None = None, *, method: CorrelationMethod = "pearson",
    budget_tokens: int | None = DEFAULT_BUDGET_TOKENS,
) -> ToolResult:
    """Pearson (zero-lag) correlation matrix between channels over a time range.

    Parameters
    ----------
    %(record)s
    %(channels)s
    %(start_s)s
    %(end_s)s
    method : {'pearson'}, optional
        Correlation method.
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``time_range_s``, ``method``, ``channels`` (names), ``matrix`` (rows in
        channel order; None where a channel is constant).

    Raises
    ------
    ToolError
        ``unsupported`` for a method other than pearson; ``bad_argument`` for fewer than 2
        channels; ``unknown_channel``, ``out_of_range`` (time range), ``budget_exceeded``.
    """
    rec = _open(record)
    if method != "pearson":
        raise ToolError("unsupported", f"method: {method!r} is not supported (only 'pearson')", argument="method")
    picks, first, last = _segment(rec, channels, start_s, end_s)
    if len(picks) < 2:
        raise ToolError("bad_argument", "channels: correlation needs at least 2 channels", argument="channels")
    check_budget("compute_channel_correlation", len(picks) ** 2, SAMPLE_VALUE, budget_tokens, f"{len(picks)} x {len(picks)} matrix")
    x = _uv(rec, picks, first, last)
    with np.errstate(divide="ignore", invalid="ignore"):
        matrix = cast(FloatArray, np.corrcoef(x))  # 2-D: at least 2 channels
    return {
        "record": _name(rec),
        "time_range_s": _span(rec, first, last),
        "method": method,
        "channels": [rec.ch_names[i] for i in picks],
        "matrix": [_sig_list(row, 3) for row in matrix],
    }
