"""Data quality and cleaning pipelines: channel screening and repair, channel relabelling, unit
rescaling, epoch rejection by annotated spans or amplitude, per-epoch band power of channel
groups, paired tests across epochs, quality summaries of signals, and results collected into
one table.

Everything takes shared_state ids and registers new entries; nothing is changed in place.
Voltages are microvolts, times seconds from the recording's start, band power the area under
the power spectral density (trapezoidal rule over the bins with low <= f <= high), in µV².
"""
from __future__ import annotations

import re
import warnings
from typing import Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Epochs, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool

Estimator = Literal["welch", "periodogram", "multitaper"]


# ----------------------------------------------------------------------------- preparation


@tool("preparation")
def interpolate_bad_channels(source: str, channels: list[str], montage: str = "biosemi128",
                             origin: Literal["auto", "head_center"] = "auto",
                             mode: Literal["accurate", "fast"] = "accurate") -> dict[str, object]:
    """Replace channels by spherical-spline interpolation from the others (mne's interpolate_bads).

    The signal's EEG channels get the positions of a standard MNE montage; the named channels
    are marked bad, interpolated with mne.io.Raw.interpolate_bads(reset_bads=True) and kept in
    place, so the channel list and order do not change. With origin "auto" the sphere is fitted
    to the montage's points (mne's default); "head_center" uses (0, 0, 0).

    Parameters
    ----------
    %(source)s
    channels : list of str
        The channels to replace (at least one; every other EEG channel is used to interpolate).
    montage : str, optional
        Name of a standard MNE montage holding every EEG channel's position (mne.channels.get_builtin_montages()).
    origin : str, optional
        Sphere origin: "auto" (fitted, mne's default) or "head_center".
    mode : str, optional
        mne's interpolation mode: "accurate" (default) or "fast".
    """
    import mne

    sig = refs.signal(source)
    if not channels:
        raise ToolError("bad_argument", "channels: name at least one channel to interpolate", argument="channels")
    picks = refs.channel_indices(sig.ch_names, channels)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # older names (standard_1020, ...) are deprecated aliases
            layout = mne.channels.make_standard_montage(montage)
    except ValueError:
        raise ToolError("bad_argument", f"montage: {montage!r} is not a standard MNE montage; one of "
                        f"{', '.join(mne.channels.get_builtin_montages()[:12])}, ...", argument="montage") from None
    eeg = [i for i, kind in enumerate(sig.ch_types) if kind == "eeg"]
    missing = [sig.ch_names[i] for i in eeg if sig.ch_names[i] not in layout.ch_names]
    if missing:
        raise ToolError("unknown_channel", f"montage: {montage} has no position for {missing[:10]}", argument="montage")
    if any(i not in eeg for i in picks):
        raise ToolError("bad_argument", "channels: only EEG channels can be interpolated", argument="channels")
    if len(eeg) - len(set(picks)) < 3:
        raise ToolError("bad_argument", "channels: too few good EEG channels are left to interpolate from", argument="channels")
    types = ["eeg" if i in eeg else "misc" for i in range(len(sig.ch_names))]
    raw = mne.io.RawArray(sig.data * 1e-6, mne.create_info(list(sig.ch_names), sig.sfreq, types), verbose="ERROR")
    raw.set_montage(layout, on_missing="ignore", verbose="ERROR")
    raw.info["bads"] = [sig.ch_names[i] for i in dict.fromkeys(picks)]
    raw.interpolate_bads(reset_bads=True, mode=mode, origin="auto" if origin == "auto" else (0.0, 0.0, 0.0),
                         verbose="ERROR")
    out = sig.derive(raw.get_data() * 1e6, f"interpolated {raw.info['bads'] or channels} ({montage})")
    return {"signal": New("views", "sig", out), "interpolated": [sig.ch_names[i] for i in dict.fromkeys(picks)]}


def standard_label(name: str) -> str:
    """10-10 spelling of an electrode label: dots and spaces removed, upper case except the
    'p' of a leading 'Fp' and a final 'z' ('Fc5.' -> 'FC5', 'Fpz.' -> 'Fpz', 'Iz..' -> 'Iz')."""
    text = re.sub(r"[.\s]", "", name).upper()
    if text.startswith("FP"):
        text = "Fp" + text[2:]
    if text.endswith("Z") and len(text) > 1:
        text = text[:-1] + "z"
    return text


@tool("preparation")
def standardize_channel_names(source: str, mapping: dict[str, str] | None = None) -> dict[str, object]:
    """Rename channels: by an explicit mapping, or to 10-10 spelling.

    Without a mapping every label is rewritten: dots and spaces removed, letters upper case
    except the 'p' of a leading 'Fp' and a final 'z' (e.g. "Fc5." -> "FC5", "Fpz." -> "Fpz",
    "Afz." -> "AFz", "Iz.." -> "Iz"). The channel order does not change.

    Parameters
    ----------
    %(source)s
    mapping : dict of str to str, optional
        Old name -> new name; channels not named keep their names.
    """
    sig = refs.signal(source)
    if mapping:
        refs.channel_indices(sig.ch_names, list(mapping), "mapping")
        new = [mapping.get(name, name) for name in sig.ch_names]
    else:
        new = [standard_label(name) for name in sig.ch_names]
    if len(set(new)) != len(new) or any(not n for n in new):
        raise ToolError("bad_argument", "mapping: the new names are empty or not unique", argument="mapping")
    renamed = {old: n for old, n in zip(sig.ch_names, new) if old != n}
    out = sig.derive(sig.data, f"renamed {len(renamed)} channels", ch_names=new)
    return {"signal": New("views", "sig", out), "renamed": renamed}


@tool("preparation")
def linear_rescale(source: str, gain: float, offset: float = 0.0, channels: list[str] | None = None) -> dict[str, object]:
    """Rescale channels linearly: y = gain * x + offset (e.g. raw ADC counts to microvolts).

    Parameters
    ----------
    %(source)s
    gain : float
        Factor applied to every sample.
    offset : float, optional
        Added after the factor.
    channels : list of str, optional
        Channels to rescale (default all); the others pass unchanged.
    """
    sig = refs.signal(source)
    if not np.isfinite(gain) or not np.isfinite(offset):
        raise ToolError("bad_argument", "gain/offset: must be finite numbers", argument="gain")
    picks = refs.channel_indices(sig.ch_names, channels)
    data = sig.data.astype(float, copy=True)
    data[picks] = gain * data[picks] + offset
    return {"signal": New("views", "sig", sig.derive(data, f"rescaled {gain:g} x + {offset:g}"))}


# ----------------------------------------------------------------------------- segmentation


@tool("segmentation")
def drop_epochs_in_spans(epochs: str, spans: str, label_prefix: str | None = None, labels: list[str] | None = None,
                         label_column: str = "trial_type", onset_column: str = "onset",
                         duration_column: str = "duration", ignore_case: bool = True) -> dict[str, object]:
    """Drop the epochs that overlap selected spans of an annotation table (e.g. bad segments).

    A selected row covers [onset, onset + duration] seconds; an epoch covering [start, end)
    seconds (start = its onset plus its first time, end = start + its number of samples / rate)
    overlaps it when onset < end and onset + duration > start (so a zero-length span at an
    epoch's first instant does not count). Rows are selected by a label prefix, by exact labels,
    or both (either matching).

    Parameters
    ----------
    %(epochs)s
    spans : str
        Id of a table with onset, duration and label columns (read_table, read_annotations).
    label_prefix : str, optional
        Select rows whose label starts with this text (e.g. "bad").
    labels : list of str, optional
        Select rows whose label is one of these.
    label_column : str, optional
        The label column ("trial_type" in BIDS events, "label" in read_annotations tables).
    onset_column : str, optional
        The onset column, in seconds from the recording's start ("onset" or "onset_s").
    duration_column : str, optional
        The duration column, in seconds ("duration" or "duration_s").
    ignore_case : bool, optional
        Compare labels without regard to letter case.
    """
    ep = refs.epochs(epochs)
    frame = refs.table(spans, "spans").frame
    for name, argument in ((label_column, "label_column"), (onset_column, "onset_column"), (duration_column, "duration_column")):
        if name not in frame.columns:
            raise ToolError("bad_argument", f"{argument}: no column {name!r}; columns: {list(frame.columns)}", argument=argument)
    if label_prefix is None and not labels:
        raise ToolError("bad_argument", "label_prefix/labels: select the spans by a prefix or by labels", argument="label_prefix")
    text = frame[label_column].astype(str)
    if ignore_case:
        text = text.str.lower()
    chosen = pd.Series(False, index=frame.index)
    if label_prefix is not None:
        chosen |= text.str.startswith(label_prefix.lower() if ignore_case else label_prefix)
    if labels:
        chosen |= text.isin({w.lower() if ignore_case else w for w in labels})
    onsets = pd.to_numeric(frame.loc[chosen, onset_column], errors="coerce").to_numpy(float)
    durations = pd.to_numeric(frame.loc[chosen, duration_column], errors="coerce").to_numpy(float)
    if not (np.isfinite(onsets).all() and np.isfinite(durations).all()):
        raise ToolError("bad_argument", "onset_column/duration_column: non-numeric values in the selected rows", argument="onset_column")
    starts = ep.onsets_s + (ep.times[0] if len(ep.times) else 0.0)
    ends = starts + ep.data.shape[2] / ep.sfreq
    hit = ((onsets[None, :] < ends[:, None]) & (onsets[None, :] + durations[None, :] > starts[:, None])).any(axis=1) \
        if len(onsets) else np.zeros(len(starts), bool)
    kept = _subset(ep, ~hit, f"dropped {int(hit.sum())} epochs overlapping {int(chosen.sum())} spans")
    return {"epochs": New("views", "ep", kept), "dropped": int(hit.sum()), "kept": int((~hit).sum()),
            "spans_selected": int(chosen.sum())}


@tool("segmentation")
def reject_epochs_ptp(epochs: str, ptp_uv: float, channels: list[str | list[str]] | None = None) -> dict[str, object]:
    """Drop the epochs whose peak-to-peak amplitude (max - min within the epoch) exceeds a limit on any channel considered.

    Parameters
    ----------
    %(epochs)s
    ptp_uv : float
        The limit in µV; an epoch is dropped when its peak-to-peak is strictly above it.
    channels : list of str or lists of str, optional
        The channels considered (default all); nested lists (channel groups) are joined.
    """
    ep = refs.epochs(epochs)
    if ptp_uv <= 0:
        raise ToolError("bad_argument", "ptp_uv: must be positive", argument="ptp_uv")
    flat = None if channels is None else [n for item in channels for n in ([item] if isinstance(item, str) else item)]
    picks = sorted(set(refs.channel_indices(ep.ch_names, flat)))
    if not len(ep.data):
        raise ToolError("bad_argument", "epochs: there are no epochs", argument="epochs")
    bad = (np.ptp(ep.data[:, picks, :], axis=2) > ptp_uv).any(axis=1)
    kept = _subset(ep, ~bad, f"rejected {int(bad.sum())} epochs with peak-to-peak > {ptp_uv:g} uV")
    return {"epochs": New("views", "ep", kept), "dropped": int(bad.sum()), "kept": int((~bad).sum())}


def _subset(ep: Epochs, keep: np.ndarray, what: str) -> Epochs:
    return Epochs(ep.data[keep], ep.sfreq, list(ep.ch_names), list(ep.ch_types), ep.times, ep.onsets_s[keep],
                  [label for label, k in zip(ep.labels, keep) if k], ep.history + [what])


# ----------------------------------------------------------------------------- features


@tool("features")
def channel_max_correlation(source: str, channels: list[str] | None = None) -> dict[str, object]:
    """Per channel, the largest absolute Pearson correlation with any other channel, and that channel.

    A flat channel (zero variance) correlates with nothing: its value is 0.

    Parameters
    ----------
    %(source)s
    channels : list of str, optional
        The channels compared with each other (default all; at least two).
    """
    sig = refs.signal(source)
    picks = refs.channel_indices(sig.ch_names, channels)
    if len(picks) < 2:
        raise ToolError("bad_argument", "channels: at least two channels are needed", argument="channels")
    x = sig.data[picks]
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(x)
    corr = np.nan_to_num(np.abs(corr), nan=0.0)
    np.fill_diagonal(corr, -1.0)
    best = corr.argmax(axis=1)
    names = [sig.ch_names[i] for i in picks]
    value = {name: {"max_abs_r": float(max(corr[k, best[k]], 0.0)), "partner": names[best[k]]}
             for k, name in enumerate(names)}
    return {"correlation": result("max_correlation", value)}


@tool("features")
def epoch_region_band_power(epochs: str, band: list[float], regions: dict[str, list[str]],
                            method: Estimator = "welch", segment_s: float = 1.0, overlap: float = 0.5,
                            window: str = "hann", bandwidth_hz: float | None = None, decibels: bool = True,
                            difference: list[str] | None = None, time_column: str = "epoch_start_s") -> dict[str, object]:
    """Band power of every epoch and channel, averaged over channel groups, as a table with one row per epoch.

    Each epoch's PSD (µV²/Hz; demeaned): Welch (scipy.signal.welch, nperseg = round(segment_s *
    sfreq), noverlap = floor(nperseg * overlap)), a periodogram with `window`, or mne's multitaper
    (full normalisation, bandwidth_hz). Band power is the area under the PSD over low <= f <= high
    (trapezoidal rule). With decibels each channel's power becomes 10 log10(power) before the
    channels of a group are averaged. Columns: time_column (the epoch's start, seconds from the
    recording's start), "<group>_db" (or "<group>_power"), and with `difference` = [a, b] a
    column "difference_db" (or "difference_power") = a - b.

    Parameters
    ----------
    %(epochs)s
    %(band)s
    regions : dict of str to list of str
        Group name -> its channels, e.g. {"left": ["C3", "CP3"], "right": ["C4", "CP4"]}.
    method : str, optional
        "welch", "periodogram" or "multitaper".
    %(segment_s)s
    %(overlap)s
    window : str, optional
        Welch/periodogram window (scipy.signal.get_window name).
    %(bandwidth_hz)s
    decibels : bool, optional
        Average 10 log10 of each channel's power (True) or the power itself.
    difference : list of str, optional
        Two group names [a, b]: add the per-epoch difference a - b.
    time_column : str, optional
        Name of the column holding each epoch's start.
    """
    from scipy import signal as sps

    ep = refs.epochs(epochs)
    if len(band) != 2 or not band[0] < band[1]:
        raise ToolError("bad_argument", "band: expected [low, high] with low < high", argument="band")
    if not regions:
        raise ToolError("bad_argument", "regions: name at least one group of channels", argument="regions")
    if difference is not None and (len(difference) != 2 or any(d not in regions for d in difference)):
        raise ToolError("bad_argument", "difference: expected two of the group names", argument="difference")
    if not len(ep.data):
        raise ToolError("bad_argument", "epochs: there are no epochs", argument="epochs")
    groups = {name: refs.channel_indices(ep.ch_names, chans, "regions") for name, chans in regions.items()}
    used = sorted({i for idx in groups.values() for i in idx})
    x = ep.data[:, used, :]
    x = x - x.mean(axis=-1, keepdims=True)
    n = x.shape[-1]
    if method == "welch":
        nperseg = int(round(segment_s * ep.sfreq))
        if not 1 < nperseg <= n:
            raise ToolError("out_of_range", f"segment_s: {nperseg} samples, the epochs have {n}", argument="segment_s")
        freqs, psd = sps.welch(x, fs=ep.sfreq, window=window, nperseg=nperseg, noverlap=int(nperseg * overlap),
                               detrend="constant", axis=-1)
    elif method == "periodogram":
        freqs, psd = sps.periodogram(x, fs=ep.sfreq, window=window, detrend="constant", axis=-1)
    else:
        import mne

        psd, freqs = mne.time_frequency.psd_array_multitaper(x, ep.sfreq, bandwidth=bandwidth_hz, normalization="full",
                                                             verbose="ERROR")
    inside = (freqs >= band[0]) & (freqs <= band[1])
    if inside.sum() < 2:
        raise ToolError("out_of_range", f"band: fewer than two frequency bins in {band} Hz", argument="band")
    power = np.trapezoid(psd[..., inside], freqs[inside], axis=-1)
    values = 10 * np.log10(power) if decibels else power
    suffix = "_db" if decibels else "_power"
    column = {i: k for k, i in enumerate(used)}
    starts = ep.onsets_s + (ep.times[0] if len(ep.times) else 0.0)
    frame = pd.DataFrame({time_column: starts})
    for name, idx in groups.items():
        frame[f"{name}{suffix}"] = values[:, [column[i] for i in idx]].mean(axis=1)
    if difference is not None:
        frame[f"difference{suffix}"] = frame[f"{difference[0]}{suffix}"] - frame[f"{difference[1]}{suffix}"]
    means = {col: float(frame[col].mean()) for col in frame.columns if col != time_column}
    return {"table": New("results", "tab", Table(frame, "features", {"band": list(band), "method": method})),
            "means": result("column_means", means, n_epochs=len(frame))}
