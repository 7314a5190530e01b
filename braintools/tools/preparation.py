"""Signal preparation: load, pick, re-reference, filter, notch, resample, crop.

Each tool takes a recording or signal id and registers a new signal; nothing is changed in
place, so every intermediate view stays addressable.
"""
from __future__ import annotations

import re
from typing import Literal

import numpy as np

from braintools import paths, readers, refs
from braintools.data import Signal
from braintools.errors import ToolError
from braintools.registry import New, check_size, tool


@tool("preparation")
def load_recording(path: str, sfreq: float | None = None, keys: list[str] | None = None,
                   ch_names: list[str] | None = None,
                   layout: Literal["samples_x_channels", "channels_x_samples"] = "samples_x_channels",
                   scale: float = 1.0, ch_type: str = "eeg") -> dict[str, object]:
    """Open an input recording: EDF/BDF/FIF/SET/VHDR/GDF through MNE (voltages in µV), or arrays in .npy/.pkl/.h5.

    Parameters
    ----------
    path : str
        The input file, e.g. "/input/eegmmidb/S001R02.edf".
    sfreq : float, optional
        Sampling rate in Hz; required for array files, which do not store it (ignored for files that do).
    keys : list of str, optional
        Array files: the HDF5 dataset paths (glob patterns such as "*/raw/channel_*" allowed), pickle dict keys or list indices holding the data (one 2-D array, or one 1-D array per channel).
    ch_names : list of str, optional
        Array files: channel names (default: names stored beside the array, else ch1, ch2, ...).
    layout : str, optional
        Array files: how a 2-D array is laid out.
    scale : float, optional
        Array files: factor that turns stored values into µV.
    ch_type : str, optional
        Array files: the channel type.
    """
    file = paths.input_path(path)
    name = file.name.lower()
    if name.endswith(readers.MNE_SUFFIXES):
        rec = readers.read_mne(file, path)
    elif name.endswith(readers.ARRAY_SUFFIXES):
        if sfreq is None or sfreq <= 0:
            raise ToolError("bad_argument", "sfreq: array files do not store a sampling rate; give it", argument="sfreq")
        rec = readers.read_arrays(file, path, sfreq, keys, ch_names, layout, scale, ch_type)
    else:
        raise ToolError("unsupported", f"path: {file.name!r} is not a recording format ({', '.join(readers.MNE_SUFFIXES + readers.ARRAY_SUFFIXES)})", argument="path")
    return {"recording": New("recordings", "rec", rec)}


@tool("preparation")
def pick_channels(recording: str, channels: list[str] | None = None, types: list[str] | None = None,
                  exclude: list[str] | None = None, start_s: float | None = None, end_s: float | None = None,
                  duration_s: float | None = None) -> dict[str, object]:
    """Read channels of a recording into a signal (µV), by name or type, optionally only a time span.

    Parameters
    ----------
    %(recording)s
    channels : list of str, optional
        Channel names, in the order wanted (default: every channel of `types`, or all).
    types : list of str, optional
        Channel types to keep, e.g. ["eeg"] (as the file types them).
    exclude : list of str, optional
        Channel names to leave out.
    start_s : float, optional
        First sample: round(start_s * sfreq) (default: the start).
    end_s : float, optional
        End (exclusive): round(end_s * sfreq) (default: the end).
    duration_s : float, optional
        Instead of end_s: the end is round((start_s + duration_s) * sfreq).
    """
    rec = refs.recording(recording)
    picks = refs.channel_indices(rec.ch_names, channels)
    if types is not None:
        picks = [i for i in picks if rec.ch_types[i] in types]
    if exclude:
        dropped = set(refs.channel_indices(rec.ch_names, exclude, "exclude"))
        picks = [i for i in picks if i not in dropped]
    if not picks:
        raise ToolError("bad_argument", "channels: the selection is empty", argument="channels")
    start = 0 if start_s is None else int(round(start_s * rec.sfreq))
    if end_s is not None and duration_s is not None:
        raise ToolError("bad_argument", "end_s/duration_s: give at most one", argument="duration_s")
    if duration_s is not None:
        end_s = (start_s or 0.0) + duration_s
    stop = rec.n_samples if end_s is None else int(round(end_s * rec.sfreq))
    if not 0 <= start < stop <= rec.n_samples:
        raise ToolError("out_of_range", f"start_s/end_s: samples {start}-{stop} outside 0-{rec.n_samples} ({rec.duration_s:g} s)", argument="end_s")
    check_size(len(picks) * (stop - start), "the signal")
    data = rec.read(picks, start, stop)
    annotations = rec.annotations
    signal = Signal(data, rec.sfreq, [rec.ch_names[i] for i in picks], [rec.ch_types[i] for i in picks],
                    start / rec.sfreq, [f"picked from {recording}"], annotations)
    return {"signal": New("views", "sig", signal)}


@tool("preparation")
def set_channel_types(source: str, types: dict[str, str]) -> dict[str, object]:
    """Declare channel types (e.g. a file that types its EOG channels as EEG).

    Parameters
    ----------
    %(source)s
    types : dict of str to str
        Channel name -> type ("eeg", "eog", "emg", "ecg", "misc").
    """
    sig = refs.signal(source)
    new_types = list(sig.ch_types)
    for name, kind in types.items():
        new_types[refs.channel_indices(sig.ch_names, [name], "types")[0]] = kind
    return {"signal": New("views", "sig", sig.derive(sig.data, f"types set {types}", ch_types=new_types))}


@tool("preparation")
def rereference(source: str, reference: str | list[str] | None = None,
                mode: Literal["average", "channels"] = "average", channels: list[str] | None = None) -> dict[str, object]:
    """Re-reference: subtract the mean of all (EEG) channels, or of named reference channels.

    As mne's set_eeg_reference(projection=False): a reference channel that is re-referenced
    itself becomes flat zero and stays in the signal.

    Parameters
    ----------
    %(source)s
    reference : str or list of str, optional
        "average" for the common average, or the reference channel name(s) whose mean is
        subtracted (given, it decides the mode).
    mode : str, optional
        Used when `reference` is omitted: "average" (common average of the channels listed in `channels`, default every channel of type eeg) or "channels".
    channels : list of str, optional
        The channels that are re-referenced and, for "average", averaged (default: type eeg).
    """
    sig = refs.signal(source)
    targets = refs.channel_indices(sig.ch_names, channels) if channels else [i for i, t in enumerate(sig.ch_types) if t == "eeg"]
    if not targets:
        raise ToolError("bad_argument", "channels: no EEG channels to re-reference", argument="channels")
    if reference is not None:
        mode = "average" if reference == "average" else "channels"
        reference = [reference] if isinstance(reference, str) else reference
    if mode == "average":
        ref = sig.data[targets].mean(axis=0)
        what = "average reference"
    else:
        if not reference:
            raise ToolError("bad_argument", "reference: name the reference channels", argument="reference")
        ref = sig.data[refs.channel_indices(sig.ch_names, reference, "reference")].mean(axis=0)
        what = f"referenced to {reference}"
    data = sig.data.copy()
    data[targets] -= ref
    return {"signal": New("views", "sig", sig.derive(data, what))}


@tool("preparation")
def derive_channel(source: str, expression: str, name: str | None = None) -> dict[str, object]:
    """A channel computed from others by sums and differences, e.g. "EOG1 - EOG2" or a single name.

    Terms are separated by " - " or " + " (spaces around the sign, since names may hold hyphens).

    Parameters
    ----------
    %(source)s
    expression : str
        Channel names joined by " - " / " + ", e.g. "EOG EOG1 - EOG EOG2".
    name : str, optional
        The new channel's name (default the expression).
    """
    sig = refs.signal(source)
    parts = re.split(r"\s+([+-])\s+", expression.strip())
    names, signs = parts[0::2], [1.0] + [1.0 if s == "+" else -1.0 for s in parts[1::2]]
    if not names or any(not n for n in names):
        raise ToolError("bad_argument", f"expression: cannot read {expression!r}", argument="expression")
    picks = refs.channel_indices(sig.ch_names, names, "expression")
    data = sum(sign * sig.data[i] for sign, i in zip(signs, picks))
    out = sig.derive(np.asarray(data, float)[None, :], f"derived {expression}", ch_names=[name or expression.strip()],
                     ch_types=[sig.ch_types[picks[0]]])
    return {"signal": New("views", "sig", out)}


@tool("preparation")
def filter_signal(source: str, l_freq: float | None = None, h_freq: float | None = None,
                  method: Literal["fir", "iir"] = "fir", iir_order: int = 4, zero_phase: bool = True,
                  channels: list[str] | None = None, band: list[float] | None = None) -> dict[str, object]:
    """Band-, high- or low-pass filter the whole signal.

    "fir" is mne.filter.filter_data with its defaults (firwin, Hamming, length 'auto', zero
    phase, reflect_limited padding); "iir" is a Butterworth of `iir_order` in second-order
    sections (scipy.signal.butter), run forward and backward (sosfiltfilt) when zero_phase.

    Parameters
    ----------
    %(source)s
    l_freq : float, optional
        Lower edge in Hz (None: low-pass only).
    h_freq : float, optional
        Upper edge in Hz (None: high-pass only).
    method : str, optional
        "fir" or "iir".
    iir_order : int, optional
        Butterworth order for "iir".
    zero_phase : bool, optional
        "iir": filter forward and backward (sosfiltfilt) rather than once (sosfilt).
    channels : list of str, optional
        Channels to filter (default all); the others pass unchanged.
    band : list of float, optional
        [l_freq, h_freq] in one argument (instead of l_freq and h_freq).
    """
    from scipy import signal as sps

    sig = refs.signal(source)
    if band is not None:
        if len(band) != 2:
            raise ToolError("bad_argument", "band: expected [l_freq, h_freq]", argument="band")
        l_freq, h_freq = band
    if l_freq is None and h_freq is None:
        raise ToolError("bad_argument", "l_freq/h_freq: give at least one edge", argument="l_freq")
    nyquist = sig.sfreq / 2
    for name, edge in (("l_freq", l_freq), ("h_freq", h_freq)):
        if edge is not None and not 0 < edge < nyquist:
            raise ToolError("out_of_range", f"{name}: {edge} Hz must lie between 0 and Nyquist ({nyquist:g} Hz)", argument=name)
    picks = refs.channel_indices(sig.ch_names, channels)
    data = sig.data.copy()
    if method == "fir":
        import mne

        data[picks] = mne.filter.filter_data(sig.data[picks], sig.sfreq, l_freq=l_freq, h_freq=h_freq, verbose="ERROR")
        what = f"FIR {l_freq}-{h_freq} Hz (MNE defaults)"
    else:
        if l_freq is not None and h_freq is not None:
            sos = sps.butter(iir_order, [l_freq, h_freq], btype="bandpass", fs=sig.sfreq, output="sos")
        elif l_freq is not None:
            sos = sps.butter(iir_order, l_freq, btype="highpass", fs=sig.sfreq, output="sos")
        else:
            sos = sps.butter(iir_order, h_freq, btype="lowpass", fs=sig.sfreq, output="sos")
        run = sps.sosfiltfilt if zero_phase else sps.sosfilt
        data[picks] = run(sos, sig.data[picks], axis=-1)
        what = f"Butterworth order {iir_order} {l_freq}-{h_freq} Hz{' zero-phase' if zero_phase else ''}"
    return {"signal": New("views", "sig", sig.derive(data, what))}


@tool("preparation")
def notch_filter(source: str, freqs: list[float], channels: list[str] | None = None) -> dict[str, object]:
    """Remove line noise at `freqs` (mne.filter.notch_filter with its defaults).

    Parameters
    ----------
    %(source)s
    freqs : list of float
        Frequencies in Hz, e.g. [50, 100].
    channels : list of str, optional
        Channels to filter (default all).
    """
    import mne

    sig = refs.signal(source)
    picks = refs.channel_indices(sig.ch_names, channels)
    data = sig.data.copy()
    data[picks] = mne.filter.notch_filter(sig.data[picks], sig.sfreq, np.asarray(freqs, float), verbose="ERROR")
    return {"signal": New("views", "sig", sig.derive(data, f"notch {freqs} Hz"))}


@tool("preparation")
def resample_signal(source: str, sfreq: float) -> dict[str, object]:
    """Resample to `sfreq` Hz (mne.filter.resample: FFT method with its anti-aliasing).

    Parameters
    ----------
    %(source)s
    sfreq : float
        The new sampling rate in Hz.
    """
    import mne

    sig = refs.signal(source)
    if sfreq <= 0:
        raise ToolError("bad_argument", "sfreq: must be positive", argument="sfreq")
    check_size(sig.data.size * sfreq / sig.sfreq, "the resampled signal")
    data = mne.filter.resample(sig.data, up=sfreq, down=sig.sfreq, verbose="ERROR")
    out = sig.derive(data, f"resampled to {sfreq:g} Hz")
    out.sfreq = float(sfreq)
    return {"signal": New("views", "sig", out)}


@tool("preparation")
def crop_signal(source: str, start_s: float | None = None, end_s: float | None = None, duration_s: float | None = None,
                include_end: bool = False, window_s: list[float] | None = None) -> dict[str, object]:
    """Cut a time window (seconds from the recording's start) out of a signal.

    Samples round(start_s * sfreq) up to round(end_s * sfreq), the end excluded; with
    include_end the sample at end_s is kept too (as mne's Raw.crop(tmin, tmax) does).

    Parameters
    ----------
    %(source)s
    start_s : float, optional
        Window start in seconds from the recording's start (or give window_s).
    end_s : float, optional
        Window end in seconds (give end_s or duration_s).
    duration_s : float, optional
        Window length in seconds.
    include_end : bool, optional
        Keep the sample at end_s.
    %(window_s)s
    """
    sig = refs.signal(source)
    if window_s is not None:
        if len(window_s) != 2 or start_s is not None or end_s is not None:
            raise ToolError("bad_argument", "window_s: expected [start_s, end_s], without start_s/end_s", argument="window_s")
        start_s, end_s = window_s
    if start_s is None:
        raise ToolError("bad_argument", "start_s: give start_s or window_s", argument="start_s")
    if (end_s is None) == (duration_s is None):
        raise ToolError("bad_argument", "end_s/duration_s: give exactly one", argument="end_s")
    end = end_s if end_s is not None else start_s + float(duration_s or 0)
    first = int(round(sig.start_s * sig.sfreq))
    start = int(round(start_s * sig.sfreq)) - first
    stop = int(round(end * sig.sfreq)) - first + (1 if include_end else 0)
    if not 0 <= start < stop <= sig.n_samples:
        span = f"{sig.start_s:g}-{sig.start_s + sig.n_samples / sig.sfreq:g} s"
        raise ToolError("out_of_range", f"start_s/end_s: {start_s:g}-{end:g} s is not inside the signal ({span})", argument="end_s")
    out = sig.derive(sig.data[:, start:stop].copy(), f"cropped {start_s:g}-{end:g} s")
    out.start_s = (first + start) / sig.sfreq
    return {"signal": New("views", "sig", out)}

