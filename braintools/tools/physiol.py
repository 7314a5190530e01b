"""Physiology: EOG/EMG channels beside the EEG, blinks, regression of ocular artefact, reference
correlation, artefact windows, marker (protocol) states and blocks, checked window measures,
window tables, two-state splits of a feature and the change point of a band's power.

Per-channel results have the shape {channel: {feature: value}} and per-segment results
{label: {feature: value}}, so the statistics tools (rank, aggregate, threshold) apply.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Signal, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool


def channel_index(sig: Signal, channel: str | None, argument: str = "channel") -> int:
    """Index of `channel`, or of the only channel when None."""
    if channel is None:
        if len(sig.ch_names) != 1:
            raise ToolError("bad_argument", f"{argument}: the signal has {len(sig.ch_names)} channels; name one", argument=argument)
        return 0
    return refs.channel_indices(sig.ch_names, [channel], argument)[0]


def sample_span(sig: Signal, start_s: float | None, end_s: float | None, argument: str) -> tuple[int, int]:
    """Sample range [start, stop) of a window in recording seconds (default the whole signal)."""
    first = int(round(sig.start_s * sig.sfreq))
    start = 0 if start_s is None else int(round(start_s * sig.sfreq)) - first
    stop = sig.n_samples if end_s is None else int(round(end_s * sig.sfreq)) - first
    if not 0 <= start < stop <= sig.n_samples:
        raise ToolError("out_of_range", f"{argument}: {start_s}-{end_s} s is not inside the signal", argument=argument)
    return start, stop


def _window(sig: Signal, window: list[float] | None, argument: str) -> tuple[int, int]:
    if window is not None and len(window) != 2:
        raise ToolError("bad_argument", f"{argument}: expected [start_s, end_s]", argument=argument)
    return sample_span(sig, None, None, argument) if window is None else sample_span(sig, window[0], window[1], argument)


@tool("physiol")
def detect_blinks(source: str, height_uv: float, channel: str | None = None, distance_s: float | None = None,
                  polarity: Literal["positive", "negative"] = "positive", prominence_uv: float | None = None) -> dict[str, object]:
    """Blinks (or any peaks) on one channel with scipy.signal.find_peaks: height, minimum distance, polarity.

    "negative" negates the trace first so downward deflections become peaks. The minimum
    distance in samples is round(distance_s * sfreq). Peaks on the first or last sample are
    never found (find_peaks needs both neighbours).

    Parameters
    ----------
    source : str
        Id of a signal (filter and crop it first as needed).
    height_uv : float
        Minimum peak height, in the signal's units (µV), after the polarity is applied.
    %(channel)s
    distance_s : float, optional
        Minimum distance between peaks in seconds.
    polarity : str, optional
        "positive" (peaks as they are) or "negative" (negate first).
    prominence_uv : float, optional
        Minimum peak prominence.
    """
    from scipy.signal import find_peaks

    sig = refs.signal(source)
    index = channel_index(sig, channel)
    x = sig.data[index] * (-1.0 if polarity == "negative" else 1.0)
    distance = None if distance_s is None else max(1, int(round(distance_s * sig.sfreq)))
    peaks, props = find_peaks(x, height=height_uv, distance=distance, prominence=prominence_uv)
    frame = pd.DataFrame({"onset_s": sig.start_s + peaks / sig.sfreq, "duration_s": 0.0, "label": "peak",
                          "sample": peaks, "height_uv": props["peak_heights"]})
    summary = {"count": len(peaks), "channel": sig.ch_names[index], "polarity": polarity,
               "min_margin_uv": float(props["peak_heights"].min() - height_uv) if len(peaks) else None}
    return {"events": New("events", "evt", Table(frame, "events")), "blinks": result("peak_count", summary)}


@tool("physiol")
def correlate_channels(source: str, reference: str, channels: list[str] | None = None) -> dict[str, object]:
    """Pearson correlation of each channel with a reference channel (e.g. EEG vs EOG), and its absolute value.

    Parameters
    ----------
    source : str
        Id of a signal holding the channels and the reference.
    reference : str
        The reference channel's name.
    channels : list of str, optional
        Channels to correlate (default every channel except the reference).
    """
    sig = refs.signal(source)
    ref = refs.channel_indices(sig.ch_names, [reference], "reference")[0]
    picks = refs.channel_indices(sig.ch_names, channels) if channels else [i for i in range(len(sig.ch_names)) if i != ref]
    values = {}
    for i in picks:
        r = float(np.corrcoef(sig.data[i], sig.data[ref])[0, 1])
        values[sig.ch_names[i]] = {"r": r, "abs_r": abs(r)}
    return {"correlation": result("correlation", values, reference=sig.ch_names[ref], method="pearson")}


@tool("physiol")
def regress_out(source: str, regressors: list[str], channels: list[str] | None = None,
                model: Literal["intercept", "centered", "none"] = "intercept",
                fit_window_s: list[float] | None = None, apply_window_s: list[float] | None = None) -> dict[str, object]:
    """Least-squares removal of reference channels (EOG) from others, fitted on one window and applied to another.

    "intercept": OLS on [1, regressors] (np.linalg.lstsq), cleaned = x - (c + sum b_k r_k);
    "centered": means over the fit window are removed from x and the regressors, then a fit
    without intercept, cleaned = (x - mean x) - sum b_k (r_k - mean r_k) (zero mean); "none":
    no intercept and no centring. The new signal holds the cleaned channels over the apply
    window; variance_removed_pct = 100 (1 - var(cleaned) / var(x)) there (ddof 0).

    Parameters
    ----------
    source : str
        Id of a signal holding the channels and the regressors.
    regressors : list of str
        Reference channels regressed out, e.g. ["EOG1", "EOG2"].
    channels : list of str, optional
        Channels cleaned (default every channel that is not a regressor), in this order.
    model : str, optional
        "intercept", "centered" or "none".
    fit_window_s : list of float, optional
        [start, end) of the fit (calibration) window in recording seconds (default the whole signal).
    apply_window_s : list of float, optional
        [start, end) of the window the fit is applied to (default the whole signal).
    """
    sig = refs.signal(source)
    reg = refs.channel_indices(sig.ch_names, regressors, "regressors")
    picks = refs.channel_indices(sig.ch_names, channels) if channels else [i for i in range(len(sig.ch_names)) if i not in reg]
    f0, f1 = _window(sig, fit_window_s, "fit_window_s")
    a0, a1 = _window(sig, apply_window_s, "apply_window_s")
    x_fit, r_fit = sig.data[picks, f0:f1], sig.data[reg, f0:f1]
    x_mean, r_mean = x_fit.mean(axis=1, keepdims=True), r_fit.mean(axis=1, keepdims=True)
    if model == "centered":
        x_fit, r_fit = x_fit - x_mean, r_fit - r_mean
    design = np.vstack([np.ones(f1 - f0), r_fit]).T if model == "intercept" else r_fit.T
    coef = np.linalg.lstsq(design, x_fit.T, rcond=None)[0]  # (n_terms, n_channels)
    x_app, r_app = sig.data[picks, a0:a1], sig.data[reg, a0:a1]
    if model == "centered":
        x_app, r_app = x_app - x_mean, r_app - r_mean
    apply_design = np.vstack([np.ones(a1 - a0), r_app]).T if model == "intercept" else r_app.T
    cleaned = x_app - (apply_design @ coef).T
    slopes = coef[1:] if model == "intercept" else coef
    report = {}
    for j, i in enumerate(picks):
        entry = {f"b_{sig.ch_names[k]}": float(slopes[m, j]) for m, k in enumerate(reg)}
        entry["intercept"] = float(coef[0, j]) if model == "intercept" else 0.0
        entry["variance_removed_pct"] = float(100 * (1 - cleaned[j].var() / sig.data[i, a0:a1].var()))
        report[sig.ch_names[i]] = entry
    out = sig.derive(cleaned, f"regressed out {regressors} ({model})", ch_names=[sig.ch_names[i] for i in picks],
                     ch_types=[sig.ch_types[i] for i in picks], first_sample=a0)
    return {"signal": New("views", "sig", out), "coefficients": result("regression", report, model=model, regressors=regressors)}


@tool("physiol")
def flag_artifact_windows(epochs: str, ptp_threshold: float | None = None, gradient_threshold: float | None = None,
                          channel: str | None = None, inclusive: bool = False) -> dict[str, object]:
    """Windows (epochs) flagged as artefact: peak-to-peak or largest sample-to-sample step above a threshold.

    A window is flagged when ptp = max - min exceeds ptp_threshold or gradient = max |diff|
    (per sample, in the signal's units) exceeds gradient_threshold, on any of the channels
    considered.

    Parameters
    ----------
    epochs : str
        Id of epochs (fixed_windows).
    ptp_threshold : float, optional
        Peak-to-peak limit (omit to skip this rule).
    gradient_threshold : float, optional
        Largest absolute step between consecutive samples (omit to skip this rule).
    channel : str, optional
        Only this channel (default every channel).
    inclusive : bool, optional
        Flag values equal to a threshold too (>= instead of >).
    """
    ep = refs.epochs(epochs)
    if ptp_threshold is None and gradient_threshold is None:
        raise ToolError("bad_argument", "ptp_threshold/gradient_threshold: give at least one", argument="ptp_threshold")
    picks = refs.channel_indices(ep.ch_names, [channel] if channel else None)
    data = ep.data[:, picks, :]
    ptp, grad = np.ptp(data, axis=-1).max(axis=1), np.abs(np.diff(data, axis=-1)).max(axis=-1).max(axis=1)

    def over(values: np.ndarray, limit: float | None) -> np.ndarray:
        if limit is None:
            return np.zeros(len(values), bool)
        return values >= limit if inclusive else values > limit

    flags = over(ptp, ptp_threshold) | over(grad, gradient_threshold)
    flagged = [int(i) for i in np.flatnonzero(flags)]
    n = len(flags)
    summary = {"flagged": flagged, "n_flagged": len(flagged), "n_windows": n, "percent": 100.0 * len(flagged) / n if n else 0.0}
    frame = pd.DataFrame({"window": np.arange(n), "onset_s": ep.onsets_s, "ptp": ptp, "gradient": grad, "flagged": flags})
    return {"flags": result("artifact_windows", summary, ptp_threshold=ptp_threshold, gradient_threshold=gradient_threshold),
            "table": New("results", "tab", Table(frame, "features"))}


def _runs(high: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(high.astype(int))) + 1
    bounds = [0, *edges.tolist(), high.size]
    return list(zip(bounds[:-1], bounds[1:]))


@tool("physiol")
def marker_blocks(source: str, marker: str, threshold: float, level: Literal["high", "low"] = "high",
                  drop_at_start: bool = False, drop_at_end: bool = False) -> dict[str, object]:
    """Blocks of a protocol marker channel at one level: runs where marker >= threshold ("high") or < threshold ("low").

    Blocks touching the signal's first or last sample may be incomplete (the protocol
    started before or ran past the recording); drop_at_start / drop_at_end leave them out.

    Parameters
    ----------
    %(source_marker)s
    %(marker)s
    threshold : float
        Level boundary: values >= threshold are "high", below it "low".
    level : str, optional
        Which level's blocks to return.
    drop_at_start : bool, optional
        Leave out a block starting at the signal's first sample.
    drop_at_end : bool, optional
        Leave out a block reaching the signal's last sample.
    """
    sig = refs.signal(source)
    values = sig.data[channel_index(sig, marker, "marker")]
    high = values >= threshold
    rows: list[dict[str, object]] = []
    for a, b in _runs(high):
        if bool(high[a]) != (level == "high") or (drop_at_start and a == 0) or (drop_at_end and b == values.size):
            continue
        rows.append({"onset_s": sig.start_s + a / sig.sfreq, "duration_s": (b - a) / sig.sfreq,
                     "label": f"{level}{len(rows) + 1}", "start_sample": a, "stop_sample": b})
    frame = pd.DataFrame(rows, columns=["onset_s", "duration_s", "label", "start_sample", "stop_sample"])
    return {"blocks": New("events", "evt", Table(frame, "events", {"level": level, "threshold": threshold}))}


@tool("physiol")
def marker_state(source: str, marker: str, threshold: float, start_s: float | None = None, end_s: float | None = None,
                 low_label: str = "low", high_label: str = "high") -> dict[str, object]:
    """The marker level over a window: high_label if every sample >= threshold, low_label if every sample is below, else "mixed".

    Parameters
    ----------
    %(source_marker)s
    %(marker)s
    threshold : float
        Level boundary (values >= threshold are high).
    start_s : float, optional
        Window start in recording seconds (default the signal's start).
    end_s : float, optional
        Window end, exclusive (default the signal's end).
    low_label : str, optional
        Name of the low level (e.g. what it means in the protocol).
    high_label : str, optional
        Name of the high level.
    """
    sig = refs.signal(source)
    a, b = sample_span(sig, start_s, end_s, "end_s")
    high = sig.data[channel_index(sig, marker, "marker"), a:b] >= threshold
    state = high_label if high.all() else low_label if not high.any() else "mixed"
    return {"state": result("marker_state", {"state": state, "fraction_high": float(high.mean()), "mixed": state == "mixed"})}


@tool("physiol")
def segment_band_power(source: str, segments: str, bands: dict[str, list[float]], channel: str | None = None,
                       relative_to: list[float] | None = None, segment_s: float = 2.0, overlap: float = 0.5,
                       window: str = "hann", edges: Literal["closed", "half_open"] = "closed") -> dict[str, object]:
    """Welch band power of one channel in each segment of a table (onset_s, duration_s), e.g. every marker block.

    scipy.signal.welch with nperseg = round(segment_s * sfreq), noverlap = floor(nperseg *
    overlap), constant detrend, density scaling; a band's power is the sum of its bins.

    Parameters
    ----------
    %(source)s
    %(segments)s
    bands : dict of str to list of float
        Band name -> [low, high] in Hz.
    %(channel)s
    relative_to : list of float, optional
        [low, high] of a total band each band is divided by.
    %(segment_s)s
    %(overlap)s
    window : str, optional
        Welch window.
    %(edges)s
    """
    from scipy.signal import welch

    sig, frame = refs.signal(source), refs.table(segments, "segments").frame
    if not {"onset_s", "duration_s"} <= set(frame.columns) or frame.empty:
        raise ToolError("bad_argument", "segments: needs rows with onset_s and duration_s", argument="segments")
    x = sig.data[channel_index(sig, channel)]
    nperseg = int(round(segment_s * sig.sfreq))
    out: dict[str, dict[str, float]] = {}
    for k, row in enumerate(frame.itertuples(index=False)):
        a, b = sample_span(sig, float(row.onset_s), float(row.onset_s) + float(row.duration_s), "segments")
        part = x[a:b] - x[a:b].mean()
        freqs, psd = welch(part, fs=sig.sfreq, window=window, nperseg=min(nperseg, b - a), noverlap=int(min(nperseg, b - a) * overlap))

        def power(band: list[float]) -> float:
            upper = freqs < band[1] if edges == "half_open" else freqs <= band[1]
            return float(psd[(freqs >= band[0]) & upper].sum())

        total = power(relative_to) if relative_to else 1.0
        label = str(getattr(row, "label", k))
        out[label] = {name: power(band) / total for name, band in bands.items()}
    return {"band_power": result("segment_band_power", out, bands=bands, relative=relative_to is not None)}
