"""Physiological measures in windows: per-window measures and tables, a split into high and low windows, and the change point of band power."""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Table
from braintools.errors import ToolError
from braintools.registry import New, check_size, result, tool
from braintools.tools.features import TimeFeature, time_feature
from braintools.tools.physiol import channel_index, sample_span


@tool("physiol")
def window_measures(source: str, starts_s: list[float], duration_s: float, features: list[TimeFeature],
                    channel: str | None = None, label_prefix: str = "W") -> dict[str, object]:
    """Time-domain features of one channel in several windows of equal length, labelled prefix1, prefix2, ...

    Window i covers samples round(starts_s[i] * sfreq) up to round((starts_s[i] + duration_s) * sfreq), exclusive.

    Parameters
    ----------
    %(source_filter_whole)s
    %(starts_s)s
    duration_s : float
        Window length in seconds.
    features : list of str
        Features as in time_features (rms, ptp, std, ...).
    %(channel)s
    label_prefix : str, optional
        Labels are the prefix and the 1-based window number.
    """
    sig = refs.signal(source)
    x = sig.data[channel_index(sig, channel)][None, :]
    out = {}
    for i, start in enumerate(starts_s):
        a, b = sample_span(sig, start, start + duration_s, "starts_s")
        out[f"{label_prefix}{i + 1}"] = {f: float(time_feature(f, x[:, a:b], sig.sfreq, 0)[0]) for f in features}
    return {"measures": result("window_measures", out, duration_s=duration_s)}


@tool("physiol")
def window_table(starts_s: list[float], duration_s: float | None = None, ends_s: list[float] | None = None,
                 labels: list[str] | None = None, label_prefix: str = "W") -> dict[str, object]:
    """A table of time windows (onset_s, duration_s, label) from their starts and a common length or their ends.

    Window i covers [starts_s[i], starts_s[i] + duration_s) or [starts_s[i], ends_s[i]) in recording
    seconds; the table feeds segment_band_power or any tool reading onset_s and duration_s.

    Parameters
    ----------
    %(starts_s)s
    duration_s : float, optional
        One length for every window (give this or ends_s).
    ends_s : list of float, optional
        Each window's end, exclusive (give this or duration_s).
    labels : list of str, optional
        A label per window (default the prefix and the 1-based window number).
    label_prefix : str, optional
        Prefix of the default labels.
    """
    if (duration_s is None) == (ends_s is None):
        raise ToolError("bad_argument", "duration_s/ends_s: give exactly one", argument="duration_s")
    if not starts_s:
        raise ToolError("bad_argument", "starts_s: give at least one window", argument="starts_s")
    ends = [s + duration_s for s in starts_s] if duration_s is not None else list(ends_s or [])
    if len(ends) != len(starts_s):
        raise ToolError("bad_argument", f"ends_s: {len(ends)} ends for {len(starts_s)} starts", argument="ends_s")
    if any(e <= s or s < 0 for s, e in zip(starts_s, ends)):
        raise ToolError("out_of_range", "starts_s/ends_s: every window needs 0 <= start < end", argument="starts_s")
    names = labels if labels is not None else [f"{label_prefix}{i + 1}" for i in range(len(starts_s))]
    if len(names) != len(starts_s) or len(set(names)) != len(names):
        raise ToolError("bad_argument", "labels: one distinct label per window", argument="labels")
    frame = pd.DataFrame({"onset_s": [float(s) for s in starts_s], "duration_s": [float(e - s) for s, e in zip(starts_s, ends)],
                          "label": [str(n) for n in names]})
    return {"windows": New("events", "evt", Table(frame, "events"))}


@tool("physiol")
def split_high_low(result_id: str, feature: str | None = None, method: Literal["two_means", "largest_gap", "midrange"] = "two_means",
                   log: bool = True) -> dict[str, object]:
    """Split the names of a per-name result into a high and a low group by one feature (e.g. two states of a rhythm).

    "two_means": the split of the sorted values that minimises the summed squared deviation from
    each group's mean (optimal one-dimensional two-means); "largest_gap": the split at the widest
    gap between consecutive sorted values; "midrange": high = values above (max + min) / 2. With
    `log`, the natural log of the values is split (they must be positive).

    Parameters
    ----------
    result_id : str
        Id of a per-name result ({name: value} or {name: {feature: value}}) with at least two names.
    %(feature)s
    method : str, optional
        "two_means", "largest_gap" or "midrange".
    log : bool, optional
        Split the logarithms (for powers and ratios).
    """
    values = refs.named_values(result_id, feature)
    if len(values) < 2:
        raise ToolError("wrong_kind", f"result_id: {result_id} is not a per-name result of two or more names", argument="result_id")
    names = list(values)
    x = np.asarray(list(values.values()))
    if log:
        if (x <= 0).any():
            raise ToolError("bad_argument", "log: every value must be positive", argument="log")
        x = np.log(x)
    order = np.argsort(x, kind="stable")
    if method == "midrange":
        high = set(np.flatnonzero(x > (x.max() + x.min()) / 2).tolist())
    elif method == "largest_gap":
        k = int(np.argmax(np.diff(x[order]))) + 1
        high = set(order[k:].tolist())
    else:
        best_k, best = 1, np.inf
        for k in range(1, len(x)):
            low_part, high_part = x[order[:k]], x[order[k:]]
            sse = float(((low_part - low_part.mean()) ** 2).sum() + ((high_part - high_part.mean()) ** 2).sum())
            if sse < best:
                best_k, best = k, sse
        high = set(order[best_k:].tolist())
    groups = {"high": [names[i] for i in range(len(names)) if i in high],
              "low": [names[i] for i in range(len(names)) if i not in high]}
    return {"groups": result("high_low_split", {**groups, "n_high": len(groups["high"]), "n_low": len(groups["low"])},
                             method=method, log=log, feature=feature)}


@tool("physiol")
def band_power_change_point(source: str, band: list[float], window_s: float, step_s: float, channel: str | None = None,
                            start_s: float | None = None, end_s: float | None = None,
                            segment_s: float | None = None) -> dict[str, object]:
    """The single change point of a channel's band power over a time window (e.g. when a rhythm appears or vanishes).

    Sliding windows of window_s seconds, every step_s seconds from start_s (samples
    round(start_s * sfreq) onward, the last window ending by round(end_s * sfreq)); each window's
    mean is removed and its power is scipy.signal.welch (Hann, nperseg = round(segment_s * sfreq),
    50% overlap; segment_s defaults to the window: one Hann periodogram) summed over the bins with
    band[0] <= f <= band[1]. Each window is timed at its centre. On the log powers, the change point
    is the split into two constant levels with the least squared error (at least two windows each
    side), placed halfway between the last window before and the first after it; "rise" when the
    later level is higher.

    Parameters
    ----------
    %(source)s
    band : list of float
        [low, high] in Hz, e.g. [8, 13].
    window_s : float
        Length of each sliding window in seconds.
    step_s : float
        Step between sliding windows in seconds.
    %(channel)s
    start_s : float, optional
        Start of the analysed span in recording seconds (default the signal's start).
    end_s : float, optional
        End of the span, exclusive (default the signal's end).
    segment_s : float, optional
        Welch segment inside each window (default the whole window).
    """
    from scipy.signal import welch

    sig = refs.signal(source)
    if len(band) != 2 or not 0 <= band[0] < band[1]:
        raise ToolError("bad_argument", "band: expected [low, high] with low < high", argument="band")
    x = sig.data[channel_index(sig, channel)]
    a, b = sample_span(sig, start_s, end_s, "end_s")
    n, step = int(round(window_s * sig.sfreq)), int(round(step_s * sig.sfreq))
    m = n if segment_s is None else int(round(segment_s * sig.sfreq))
    if step < 1 or not 1 < m <= n:
        raise ToolError("out_of_range", "window_s/step_s/segment_s: need step >= 1 sample and 1 < segment <= window", argument="window_s")
    starts = range(a, b - n + 1, step)
    if len(starts) < 5:
        raise ToolError("out_of_range", "window_s: fewer than 5 sliding windows fit in the span", argument="window_s")
    check_size(len(starts) * n, "the sliding windows")
    times, power = [], []
    for k in starts:
        part = x[k:k + n] - x[k:k + n].mean()
        freqs, psd = welch(part, fs=sig.sfreq, window="hann", nperseg=m, noverlap=m // 2)
        keep = (freqs >= band[0]) & (freqs <= band[1])
        if not keep.any():
            raise ToolError("out_of_range", f"band: no frequency bin in {band} Hz", argument="band")
        power.append(float(psd[keep].sum()))
        times.append(sig.start_s + (k + n / 2) / sig.sfreq)
    if min(power) <= 0:
        raise ToolError("failed", "the band power is zero in a window (flat signal)", argument="source")
    logs = np.log(np.asarray(power))
    csum, csq, total = np.cumsum(logs), np.cumsum(logs ** 2), len(logs)
    best_k, best = 2, np.inf
    for k in range(2, total - 1):
        left = csq[k - 1] - csum[k - 1] ** 2 / k
        right = (csq[-1] - csq[k - 1]) - (csum[-1] - csum[k - 1]) ** 2 / (total - k)
        if left + right < best:
            best_k, best = k, float(left + right)
    before, after = float(logs[:best_k].mean()), float(logs[best_k:].mean())
    summary = {"time_s": float((times[best_k - 1] + times[best_k]) / 2), "direction": "rise" if after > before else "fall",
               "change_db": float(10 * (after - before) / np.log(10)), "n_windows": total}
    frame = pd.DataFrame({"onset_s": np.asarray(times) - window_s / 2, "duration_s": window_s, "label": "window",
                          "centre_s": times, "band_power": power})
    return {"change": result("change_point", summary, band=band, window_s=window_s, step_s=step_s),
            "course": New("results", "tab", Table(frame, "features"))}
