"""A recording's signal quality summarised, and the statistics tools that compare and collect per-name results."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool


@tool("features")
def signal_quality_summary(source: str, ptp_uv: float, piece_s: float = 1.0, clip_uv: float | None = None,
                           flat_sd_uv: float | None = None, max_bad_pct: float | None = None,
                           line_band: list[float] | None = None, reference_band: list[float] | None = None,
                           segment_s: float = 2.0, channels: list[str] | None = None) -> dict[str, object]:
    """Quality figures of each channel of a signal: spread, clipping, bad pieces, a verdict and a line-noise ratio.

    Per channel: sd_uv (standard deviation, ddof 0); clipped_pct (percentage of samples with
    |x| >= clip_uv); the signal cut into consecutive pieces of piece_s seconds from its first
    sample (whole pieces only), a piece being bad when its peak-to-peak exceeds ptp_uv or it holds
    a clipped sample: n_pieces, bad_pieces, bad_pct; the verdict "flat" when sd_uv < flat_sd_uv,
    else "artefact" when bad_pct > max_bad_pct, else "usable" (usable = 1 or 0); and
    line_noise_db = 10 log10(power in line_band / power in reference_band), band powers being
    areas under the Welch PSD of the demeaned channel (Hann, segment_s, 50% overlap, trapezoidal rule).

    Parameters
    ----------
    %(source)s
    ptp_uv : float
        Peak-to-peak limit of a piece in µV.
    piece_s : float, optional
        Piece length in seconds.
    clip_uv : float, optional
        A sample with |x| at or above this is clipped (default: no clipping test).
    flat_sd_uv : float, optional
        Standard deviation below which a channel is "flat" (default: no flat test).
    max_bad_pct : float, optional
        Largest share of bad pieces (percent) of a "usable" channel (default 100: never "artefact").
    line_band : list of float, optional
        [low, high] of the line-noise band in Hz (default [48, 52]).
    reference_band : list of float, optional
        [low, high] of the reference band in Hz (default [1, 45]).
    segment_s : float, optional
        Welch segment length in seconds for the line-noise ratio.
    %(channels_only)s
    """
    from scipy import signal as sps

    sig = refs.signal(source)
    picks = refs.channel_indices(sig.ch_names, channels)
    length = int(round(piece_s * sig.sfreq))
    if length < 2 or length > sig.n_samples:
        raise ToolError("out_of_range", f"piece_s: {length} samples for a signal of {sig.n_samples}", argument="piece_s")
    nperseg = int(round(segment_s * sig.sfreq))
    if not 1 < nperseg <= sig.n_samples:
        raise ToolError("out_of_range", f"segment_s: {nperseg} samples for a signal of {sig.n_samples}", argument="segment_s")
    line = _band(line_band or [48.0, 52.0], "line_band")
    reference = _band(reference_band or [1.0, 45.0], "reference_band")
    n_pieces = sig.n_samples // length
    value: dict[str, Any] = {}
    for i in picks:
        x = sig.data[i]
        clipped = np.abs(x) >= clip_uv if clip_uv is not None else np.zeros(len(x), bool)
        pieces = x[: n_pieces * length].reshape(n_pieces, length)
        bad = (np.ptp(pieces, axis=1) > ptp_uv) | clipped[: n_pieces * length].reshape(n_pieces, length).any(axis=1)
        sd = float(x.std())
        bad_pct = 100.0 * float(bad.sum()) / n_pieces
        verdict = "flat" if flat_sd_uv is not None and sd < flat_sd_uv else \
            "artefact" if max_bad_pct is not None and bad_pct > max_bad_pct else "usable"
        freqs, psd = sps.welch(x - x.mean(), fs=sig.sfreq, window="hann", nperseg=nperseg, noverlap=nperseg // 2)
        ratio = _area(freqs, psd, line, "line_band") / _area(freqs, psd, reference, "reference_band")
        value[sig.ch_names[i]] = {"sd_uv": sd, "clipped_pct": 100.0 * float(clipped.mean()), "n_pieces": int(n_pieces),
                                  "bad_pieces": int(bad.sum()), "bad_pct": bad_pct, "verdict": verdict,
                                  "usable": int(verdict == "usable"),
                                  "line_noise_db": float(10 * np.log10(ratio)) if ratio > 0 else None}
    return {"quality": result("signal_quality", value, ptp_uv=ptp_uv, piece_s=piece_s)}


def _band(band: list[float], argument: str) -> tuple[float, float]:
    if len(band) != 2 or not band[0] < band[1]:
        raise ToolError("bad_argument", f"{argument}: expected [low, high] with low < high", argument=argument)
    return float(band[0]), float(band[1])


def _area(freqs: np.ndarray, psd: np.ndarray, band: tuple[float, float], argument: str) -> float:
    inside = (freqs >= band[0]) & (freqs <= band[1])
    if inside.sum() < 2:
        raise ToolError("out_of_range", f"{argument}: fewer than two frequency bins in {list(band)} Hz", argument=argument)
    return float(np.trapezoid(psd[inside], freqs[inside]))


# ----------------------------------------------------------------------------- statistics


@tool("statistics")
def paired_difference_test(table: str, column_a: str, column_b: str | None = None,
                           test: Literal["wilcoxon", "t"] = "wilcoxon", alpha: float = 0.05) -> dict[str, object]:
    """Test whether paired values differ (or one column is centred on zero), two-sided, across the rows of a table.

    "wilcoxon" is scipy.stats.wilcoxon with its defaults on column_a - column_b (or on column_a);
    "t" is scipy.stats.ttest_rel (or ttest_1samp against 0). Also gives the means and the
    mean difference; significant = p_value < alpha.

    Parameters
    ----------
    table : str
        Id of a table with one row per pair (e.g. per epoch).
    column_a : str
        The first column (or the differences themselves when column_b is omitted).
    column_b : str, optional
        The second column.
    test : str, optional
        "wilcoxon" (signed-rank) or "t" (paired t-test).
    %(alpha)s
    """
    from scipy import stats

    frame = refs.table(table).frame
    for name, argument in ((column_a, "column_a"), (column_b, "column_b")):
        if name is not None and name not in frame.columns:
            raise ToolError("bad_argument", f"{argument}: no column {name!r}; columns: {list(frame.columns)}", argument=argument)
    a = pd.to_numeric(frame[column_a], errors="coerce").to_numpy(float)
    b = pd.to_numeric(frame[column_b], errors="coerce").to_numpy(float) if column_b is not None else np.zeros_like(a)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ToolError("bad_argument", "column_a/column_b: non-numeric or missing values", argument="column_a")
    if len(a) < 2 or not 0 < alpha < 1:
        raise ToolError("bad_argument", "table/alpha: need at least two rows and 0 < alpha < 1", argument="alpha")
    d = a - b
    if test == "wilcoxon":
        if not np.any(d):
            raise ToolError("bad_argument", "column_a/column_b: every difference is zero", argument="column_a")
        res = stats.wilcoxon(d)
    else:
        res = stats.ttest_rel(a, b) if column_b is not None else stats.ttest_1samp(a, 0.0)
    p = float(res.pvalue)
    value = {"n": int(len(d)), "mean_a": float(a.mean()), "mean_b": float(b.mean()) if column_b is not None else None,
             "mean_difference": float(d.mean()), "statistic": float(res.statistic), "p_value": p,
             "significant": bool(p < alpha)}
    return {"test": result("paired_test", value, test=test, alpha=alpha)}


@tool("statistics")
def collect_named_results(results: dict[str, str], channel: str | None = None, label_column: str = "name",
                          extra_columns: dict[str, dict[str, str | float]] | None = None,
                          rename: dict[str, str] | None = None) -> dict[str, object]:
    """Gather several results under names into one per-name result and one table (one row per name).

    Each result is a record of numbers or labels, or a per-channel result ({channel: record});
    for the latter the record of `channel` (or of the only channel) is taken. The table has the
    label column first, then every record field (renamed as asked), then the extra columns.

    Parameters
    ----------
    results : dict of str to str
        Name -> result id, e.g. {"W1": "res4", "W2": "res9"} (rows keep this order).
    channel : str, optional
        Which channel's record to take from per-channel results.
    label_column : str, optional
        Name of the table's first column, holding the names.
    extra_columns : dict of str to dict of str to str or float, optional
        Column -> {name: value}: more columns for the table, e.g. {"file": {"W1": "a.h5"}}.
    rename : dict of str to str, optional
        Record field -> new field name (in the per-name result and the table).
    """
    if not results:
        raise ToolError("bad_argument", "results: name at least one result", argument="results")
    records: dict[str, dict[str, Any]] = {}
    for name, entry_id in results.items():
        value = refs.result_value(entry_id, "results")
        if not isinstance(value, dict) or not value:
            raise ToolError("wrong_kind", f"results: {entry_id} is not a record", argument="results")
        nested = all(isinstance(v, dict) for v in value.values())
        if nested:
            if channel is None and len(value) != 1:
                raise ToolError("bad_argument", f"channel: {entry_id} holds {list(value)[:8]}; name one", argument="channel")
            key = channel if channel is not None else next(iter(value))
            if key not in value:
                raise ToolError("unknown_channel", f"channel: {entry_id} has no {key!r}", argument="channel")
            value = value[key]
        records[name] = {(rename or {}).get(k, k): v for k, v in value.items()}
    frame = pd.DataFrame([{label_column: name, **record} for name, record in records.items()])
    for column, cells in (extra_columns or {}).items():
        missing = [name for name in records if name not in cells]
        if missing:
            raise ToolError("bad_argument", f"extra_columns: {column!r} lacks {missing}", argument="extra_columns")
        frame[column] = [cells[name] for name in records]
    return {"collected": result("collected", records), "table": New("results", "tab", Table(frame, "features"))}
