"""Features: spectra, band power, spectral edge, aperiodic fits, coherence, time-domain and Hjorth features per channel.

Per-channel results have one shape, {channel: {feature: value}}, so the statistics tools
(rank, aggregate, compare) work on any of them; from epochs, {epoch index: {channel: ...}}
becomes a features table instead.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from braintools import refs
from braintools.data import Epochs, Signal, Spectrum, Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool
from braintools.state import STATE

TimeFeature = Literal["mean", "rms", "std", "var", "ptp", "min", "max", "max_abs", "max_abs_diff", "line_length",
                      "kurtosis", "skewness", "hjorth_activity", "hjorth_mobility", "hjorth_complexity", "zero_crossings"]


@tool("features")
def compute_psd(source: str, method: Literal["welch", "multitaper", "periodogram"] = "welch", segment_s: float = 2.0,
                overlap: float = 0.5, window: str = "hann", detrend: Literal["constant", "linear", "none"] = "constant",
                average: Literal["mean", "median"] = "mean", fmin: float = 0.0, fmax: float | None = None,
                bandwidth_hz: float | None = None) -> dict[str, object]:
    """Power spectral density (µV²/Hz) of each channel of a signal, or of each epoch.

    Welch is scipy.signal.welch with nperseg = round(segment_s * sfreq), noverlap =
    floor(nperseg * overlap), density scaling; multitaper is mne's psd_array_multitaper.

    Parameters
    ----------
    %(source_or_epochs)s
    method : str, optional
        "welch", "multitaper" or "periodogram".
    %(segment_s)s
    overlap : float, optional
        Welch segment overlap as a fraction of the segment.
    window : str, optional
        Welch/periodogram window name (scipy.signal.get_window).
    detrend : str, optional
        Welch/periodogram detrending of each segment.
    average : str, optional
        Welch: how segments are averaged.
    fmin : float, optional
        Lowest frequency kept.
    fmax : float, optional
        Highest frequency kept (default Nyquist).
    %(bandwidth_hz)s
    """
    from scipy import signal as sps

    entry = STATE.get(source, "source", (Signal, Epochs))
    obj = entry.value
    data, sfreq = obj.data, obj.sfreq
    n = data.shape[-1]
    if method == "welch":
        nperseg = int(round(segment_s * sfreq))
        if not 1 < nperseg <= n:
            raise ToolError("out_of_range", f"segment_s: {nperseg} samples, the data have {n}", argument="segment_s")
        freqs, power = sps.welch(data, fs=sfreq, window=window, nperseg=nperseg, noverlap=int(nperseg * overlap),
                                 detrend=False if detrend == "none" else detrend, scaling="density", average=average, axis=-1)
        label = f"welch {segment_s:g} s, {overlap:g} overlap, {window}"
    elif method == "periodogram":
        freqs, power = sps.periodogram(data, fs=sfreq, window=window, detrend=False if detrend == "none" else detrend, axis=-1)
        label = f"periodogram {window}"
    else:
        import mne

        # normalization="full" divides by the rate as well as the length: a density in µV²/Hz like
        # Welch's (mne's default, "length", is sfreq times larger).
        power, freqs = mne.time_frequency.psd_array_multitaper(data, sfreq, fmin=fmin, fmax=fmax or sfreq / 2,
                                                                bandwidth=bandwidth_hz, normalization="full",
                                                                verbose="ERROR")
        label = "multitaper"
    keep = (freqs >= fmin) & (freqs <= (fmax if fmax is not None else sfreq / 2))
    labels = obj.labels if isinstance(obj, Epochs) else None
    return {"spectrum": New("views", "psd", Spectrum(freqs[keep], power[..., keep], list(obj.ch_names), label, labels))}


@tool("features")
def band_power(spectrum: str, bands: dict[str, list[float]], edges: Literal["closed", "half_open"] = "closed",
               integration: Literal["sum", "sum_times_df", "trapezoid", "simpson"] = "sum",
               relative_to: list[float] | None = None, decibels: bool = False) -> dict[str, object]:
    """Power in frequency bands per channel, absolute or relative to a total band, optionally in dB.

    Parameters
    ----------
    %(spectrum)s
    %(bands)s
    %(edges)s
    integration : str, optional
        How bins are combined: their sum, sum times the bin width, trapezoid or Simpson rule.
    relative_to : list of float, optional
        [low, high] of the total band: each band's power is divided by it (same edges and integration).
    decibels : bool, optional
        Report 10*log10 of the power (or of the ratio).
    """
    spec = _spectrum(spectrum)
    total = _integrate(spec, relative_to, edges, integration, "relative_to") if relative_to else None
    values = {}
    for name, band in bands.items():
        power = _integrate(spec, band, edges, integration, f"bands.{name}")
        if total is not None:
            power = power / total
        values[name] = 10 * np.log10(power) if decibels else power
    return {"band_power": result("band_power", _per_channel(spec, values), bands=bands, relative=relative_to is not None,
                                 decibels=decibels)}


@tool("features")
def spectral_edge(spectrum: str, percent: float = 95.0, fmin: float | None = None, fmax: float | None = None,
                  band: list[float] | None = None) -> dict[str, object]:
    """Spectral edge frequency per channel: the first frequency at which the cumulative power reaches `percent` of the total in [fmin, fmax].

    Parameters
    ----------
    %(spectrum_short)s
    percent : float, optional
        The share of power, in percent.
    fmin : float, optional
        Lowest frequency of the range (default the spectrum's).
    fmax : float, optional
        Highest frequency of the range (default the spectrum's).
    band : list of float, optional
        [fmin, fmax] in one argument.
    """
    spec = _spectrum(spectrum)
    if band is not None:
        if len(band) != 2:
            raise ToolError("bad_argument", "band: expected [fmin, fmax]", argument="band")
        fmin, fmax = band
    low = spec.freqs[0] if fmin is None else fmin
    high = spec.freqs[-1] if fmax is None else fmax
    mask = (spec.freqs >= low) & (spec.freqs <= high)
    if not mask.any():
        raise ToolError("out_of_range", f"fmin/fmax: no frequency bin in {low}-{high} Hz", argument="fmin")
    freqs, power = spec.freqs[mask], spec.power[..., mask]
    share = np.cumsum(power, axis=-1) / power.sum(axis=-1, keepdims=True)
    index = np.argmax(share >= percent / 100.0, axis=-1)
    return {"edge": result("spectral_edge", _per_channel(spec, {"sef_hz": freqs[index]}), percent=percent)}


@tool("features")
def peak_frequency(spectrum: str, fmin: float, fmax: float) -> dict[str, object]:
    """Frequency of the largest power bin in [fmin, fmax] per channel.

    Parameters
    ----------
    %(spectrum_short)s
    fmin : float
        Lowest frequency.
    fmax : float
        Highest frequency.
    """
    spec = _spectrum(spectrum)
    mask = (spec.freqs >= fmin) & (spec.freqs <= fmax)
    if not mask.any():
        raise ToolError("out_of_range", f"fmin/fmax: no frequency bin in {fmin}-{fmax} Hz", argument="fmin")
    peak = spec.freqs[mask][np.argmax(spec.power[..., mask], axis=-1)]
    return {"peak": result("peak_frequency", _per_channel(spec, {"peak_hz": peak}))}


@tool("features")
def aperiodic_fit(spectrum: str, fmin: float = 2.0, fmax: float = 40.0, exclude: list[list[float]] | None = None,
                  two_pass: bool = False, band: list[float] | None = None) -> dict[str, object]:
    """Aperiodic (1/f) background per channel: a straight line of log10 power against log10 frequency.

    The line is fitted by least squares to the bins with fmin <= f <= fmax, leaving out the
    bins inside any `exclude` range (edges included). With two_pass, it is then refitted on
    the fitted bins whose power lies on or below the first line (rejecting oscillatory
    peaks). exponent = -slope (power ~ 1/f^exponent); offset = the line's log10 power at
    1 Hz. With `band`, over its bins (edges included): excess_db = 10*log10(sum of the power /
    sum of the fitted background), and residual_peak_hz = the bin where log10 power rises
    most above the line.

    Parameters
    ----------
    %(spectrum)s
    fmin : float, optional
        Lowest frequency of the fit in Hz (above 0).
    fmax : float, optional
        Highest frequency of the fit in Hz.
    exclude : list of list of float, optional
        [low, high] ranges left out of the fit, e.g. [[7, 14]] for the alpha peak.
    two_pass : bool, optional
        Refit on the bins on or below the first fit.
    band : list of float, optional
        [low, high] of a band to compare with the background, e.g. [8, 13].
    """
    spec = _spectrum(spectrum)
    if not 0 < fmin < fmax:
        raise ToolError("bad_argument", "fmin/fmax: need 0 < fmin < fmax", argument="fmin")
    mask = (spec.freqs >= fmin) & (spec.freqs <= fmax)
    for gap in exclude or []:
        if len(gap) != 2 or gap[0] >= gap[1]:
            raise ToolError("bad_argument", "exclude: each range is [low, high] with low < high", argument="exclude")
        mask &= ~((spec.freqs >= gap[0]) & (spec.freqs <= gap[1]))
    if mask.sum() < 3:
        raise ToolError("out_of_range", f"fmin/fmax: fewer than 3 bins to fit in {fmin}-{fmax} Hz", argument="fmin")
    if band is not None and (len(band) != 2 or band[0] >= band[1]):
        raise ToolError("bad_argument", "band: expected [low, high] with low < high", argument="band")
    in_band = None if band is None else (spec.freqs >= band[0]) & (spec.freqs <= band[1]) & (spec.freqs > 0)
    if band is not None and in_band is not None and not in_band.any():
        raise ToolError("out_of_range", f"band: no frequency bin in {band[0]}-{band[1]} Hz", argument="band")
    power = spec.power if spec.power.ndim == 2 else spec.power.reshape(-1, spec.power.shape[-1])
    if np.any(power[:, mask] <= 0):
        raise ToolError("bad_argument", "spectrum: non-positive power in the fit range (flat channel?)", argument="spectrum")
    logf = np.log10(np.where(spec.freqs > 0, spec.freqs, 1.0))
    rows: dict[str, list[float]] = {"exponent": [], "offset": [], "r_squared": []}
    if in_band is not None:
        rows.update(excess_db=[], residual_peak_hz=[])
    for p in power:
        logp = np.log10(np.where(p > 0, p, np.nan))
        slope, intercept = np.polyfit(logf[mask], logp[mask], 1)
        if two_pass:
            below = mask & (logp <= intercept + slope * logf)
            if below.sum() >= 3:
                slope, intercept = np.polyfit(logf[below], logp[below], 1)
        line = intercept + slope * logf
        residual = logp[mask] - line[mask]
        total = logp[mask] - logp[mask].mean()
        rows["exponent"].append(-float(slope))
        rows["offset"].append(float(intercept))
        rows["r_squared"].append(float(1 - np.sum(residual ** 2) / np.sum(total ** 2)))
        if in_band is not None:
            rows["excess_db"].append(float(10 * np.log10(p[in_band].sum() / np.sum(10 ** line[in_band]))))
            rows["residual_peak_hz"].append(float(spec.freqs[in_band][np.nanargmax(logp[in_band] - line[in_band])]))
    values = {k: np.asarray(v).reshape(spec.power.shape[:-1]) for k, v in rows.items()}
    return {"fit": result("aperiodic_fit", _per_channel(spec, values), fmin=fmin, fmax=fmax, exclude=exclude or [],
                          two_pass=two_pass, band=band)}


@tool("features")
def coherence(source: str, pairs: list[list[str]], bands: dict[str, list[float]], segment_s: float = 2.0,
              overlap: float = 0.5, window: str = "hann") -> dict[str, object]:
    """Magnitude-squared coherence of channel pairs, averaged over the bins of each band.

    scipy.signal.coherence with nperseg = round(segment_s * sfreq), noverlap = floor(nperseg *
    overlap) and the window named; a band's value is the mean coherence over its bins with
    low <= f <= high. Results are keyed "A|B" per pair.

    Parameters
    ----------
    %(source)s
    pairs : list of list of str
        Channel pairs, e.g. [["O1", "O2"], ["F3", "F4"]].
    %(bands)s
    segment_s : float, optional
        Segment length in seconds.
    overlap : float, optional
        Segment overlap as a fraction of the segment.
    window : str, optional
        Window name (scipy.signal.get_window).
    """
    from scipy import signal as sps

    sig = refs.signal(source)
    nperseg = int(round(segment_s * sig.sfreq))
    if not 1 < nperseg <= sig.n_samples:
        raise ToolError("out_of_range", f"segment_s: {nperseg} samples, the signal has {sig.n_samples}", argument="segment_s")
    if not 0 <= overlap < 1:
        raise ToolError("bad_argument", "overlap: a fraction in [0, 1)", argument="overlap")
    values: dict[str, dict[str, float]] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ToolError("bad_argument", f"pairs: {pair!r} is not two channel names", argument="pairs")
        first, second = refs.channel_indices(sig.ch_names, list(pair), "pairs")
        freqs, coh = sps.coherence(sig.data[first], sig.data[second], fs=sig.sfreq, window=window, nperseg=nperseg,
                                   noverlap=int(nperseg * overlap))
        record = {}
        for name, band in bands.items():
            if len(band) != 2 or band[0] > band[1]:
                raise ToolError("bad_argument", f"bands.{name}: expected [low, high]", argument="bands")
            inside = (freqs >= band[0]) & (freqs <= band[1])
            if not inside.any():
                raise ToolError("out_of_range", f"bands.{name}: no frequency bin in {band[0]}-{band[1]} Hz", argument="bands")
            record[name] = float(coh[inside].mean())
        values[f"{pair[0]}|{pair[1]}"] = record
    return {"coherence": result("coherence", values, bands=bands, segment_s=segment_s, overlap=overlap, window=window)}


@tool("features")
def time_features(source: str, features: list[TimeFeature], ddof: int = 0, demean: bool = False,
                  channels: list[str] | None = None) -> dict[str, object]:
    """Time-domain features per channel (of a signal) or per epoch and channel (of epochs, as a table).

    Hjorth parameters use first differences times the sampling rate (derivatives per second);
    kurtosis is Fisher's (normal = 0) without bias correction; variances use `ddof`.

    Parameters
    ----------
    %(source_or_epochs)s
    features : list of str
        Which features.
    ddof : int, optional
        Delta degrees of freedom of std, var and the Hjorth variances.
    demean : bool, optional
        Subtract each channel's mean first (changes rms, max_abs, line_length only).
    %(channels_only)s
    """
    entry = STATE.get(source, "source", (Signal, Epochs))
    obj = entry.value
    picks = refs.channel_indices(obj.ch_names, channels)
    names = [obj.ch_names[i] for i in picks]
    data = obj.data[..., picks, :]
    data = data - data.mean(axis=-1, keepdims=True) if demean else data
    values = {name: time_feature(name, data, obj.sfreq, ddof) for name in features}
    if isinstance(obj, Signal):
        return {"features": result("time_features", {ch: {k: v[i] for k, v in values.items()} for i, ch in enumerate(names)},
                                   ddof=ddof, demean=demean)}
    rows = [{"epoch": e, "label": obj.labels[e] if obj.labels else None, "onset_s": float(obj.onsets_s[e]), "channel": ch,
             **{k: float(v[e, i]) for k, v in values.items()}}
            for e in range(data.shape[0]) for i, ch in enumerate(names)]
    return {"table": New("results", "tab", Table(pd.DataFrame(rows), "features"))}


def time_feature(name: str, x: np.ndarray, sfreq: float, ddof: int) -> np.ndarray:
    """One time-domain feature along the last axis of `x` (the rules `time_features` documents)."""
    from scipy import stats

    def mobility(y: np.ndarray) -> np.ndarray:
        return np.asarray(np.sqrt(np.var(np.diff(y, axis=-1) * sfreq, axis=-1, ddof=ddof) / np.var(y, axis=-1, ddof=ddof)))

    table: dict[str, Callable[[], Any]] = {
        "mean": lambda: x.mean(axis=-1),
        "rms": lambda: np.sqrt(np.mean(x ** 2, axis=-1)),
        "std": lambda: x.std(axis=-1, ddof=ddof),
        "var": lambda: x.var(axis=-1, ddof=ddof),
        "ptp": lambda: np.ptp(x, axis=-1),
        "min": lambda: x.min(axis=-1),
        "max": lambda: x.max(axis=-1),
        "max_abs": lambda: np.abs(x).max(axis=-1),
        "max_abs_diff": lambda: np.abs(np.diff(x, axis=-1)).max(axis=-1),
        "line_length": lambda: np.abs(np.diff(x, axis=-1)).sum(axis=-1),
        "kurtosis": lambda: stats.kurtosis(x, axis=-1, fisher=True, bias=True),
        "skewness": lambda: stats.skew(x, axis=-1, bias=True),
        "hjorth_activity": lambda: x.var(axis=-1, ddof=ddof),
        "hjorth_mobility": lambda: mobility(x),
        "hjorth_complexity": lambda: mobility(np.diff(x, axis=-1) * sfreq) / mobility(x),
        "zero_crossings": lambda: (np.diff(np.signbit(x), axis=-1) != 0).sum(axis=-1).astype(float),
    }
    return np.asarray(table[name](), dtype=float)


def _spectrum(entry_id: str) -> Spectrum:
    return STATE.get(entry_id, "spectrum", (Spectrum,)).value  # type: ignore[no-any-return]


def _integrate(spec: Spectrum, band: list[float] | None, edges: str, integration: str, argument: str) -> np.ndarray:
    if band is None or len(band) != 2 or band[0] >= band[1]:
        raise ToolError("bad_argument", f"{argument}: a band is [low, high] with low < high", argument=argument)
    low, high = band
    mask = (spec.freqs >= low) & ((spec.freqs < high) if edges == "half_open" else (spec.freqs <= high))
    if not mask.any():
        raise ToolError("out_of_range", f"{argument}: no frequency bin in {low}-{high} Hz", argument=argument)
    power, freqs = spec.power[..., mask], spec.freqs[mask]
    if integration == "sum":
        return np.asarray(power.sum(axis=-1), dtype=float)
    if integration == "sum_times_df":
        return np.asarray(power.sum(axis=-1) * float(spec.freqs[1] - spec.freqs[0]), dtype=float)
    if integration == "trapezoid":
        return np.asarray(np.trapezoid(power, freqs, axis=-1), dtype=float)
    from scipy.integrate import simpson

    return np.asarray(simpson(power, x=freqs, axis=-1))


def _per_channel(spec: Spectrum, values: dict[str, np.ndarray]) -> dict[str, object]:
    """{channel: {name: value}}; for epoch spectra {epoch index: {channel: {...}}}."""
    if spec.power.ndim == 2:
        return {ch: {k: float(v[i]) for k, v in values.items()} for i, ch in enumerate(spec.ch_names)}
    return {str(e): {ch: {k: float(v[e, i]) for k, v in values.items()} for i, ch in enumerate(spec.ch_names)}
            for e in range(spec.power.shape[0])}

