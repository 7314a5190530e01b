"""Reference for nc_inversion_effect: how much larger is the N170 to inverted than to upright faces?

pylossless face/house/checkerboard data (128 channels, 256 Hz, stored band-passed 1-30 Hz).
The instruction names the site (a channel, or channels averaged after trial averaging), the two
conditions and the average reference, and describes the N170 without fixing a search window or
any preprocessing. The ground truth is therefore an ensemble (runner/ensemble.py) of 21
analyses: seven preprocessing pipelines (average reference over all 128 channels with a -200..0
ms or a -100..0 ms baseline; average reference without the grossly noisy channels, SD over the
recording > 3 x the median channel's; an extra 20 Hz zero-phase FIR low-pass, MNE defaults; an
extra 4th-order Butterworth 0.1-30 Hz band-pass run forward and backward; 100 µV peak-to-peak
rejection on the retained channels with the robust reference; dropping epochs that overlap a
segment annotated bad) times three N170 search windows (130-200, 120-210 and 140-220 ms,
inclusive). Each condition's N170 amplitude is the most negative value of the site waveform in
the window; the inversion effect is inverted minus upright.
"""
import mne
import numpy as np
import pandas as pd
from scipy import signal

WINDOWS_MS = ((130, 200), (120, 210), (140, 220))
SFREQ = 256.0
EPOCH = (-51, 128)  # samples around the onset: round(-0.2 * 256), round(0.5 * 256)
PIPELINES = {
    "avgref_base200": {"ref": "all", "base": -51},
    "avgref_base100": {"ref": "all", "base": -25},  # first sample at or after -100 ms
    "robustref": {"ref": "good", "base": -51},
    "fir_lowpass20": {"ref": "all", "base": -51, "filter": "fir20"},
    "butter_0.1_30": {"ref": "all", "base": -51, "filter": "butter"},
    "reject100": {"ref": "good", "base": -51, "reject_uv": 100.0},
    "drop_bad_segments": {"ref": "all", "base": -51, "drop_bad": True},
}



def run(inputs: list[str], params: dict) -> dict:
    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    conditions = {"upright": params["upright_types"], "inverted": params["inverted_types"]}
    epochs = pipeline_epochs(inputs[0], events, conditions, list(params["channels"]))
    upright, inverted, effect = {}, {}, {}
    for name, by_condition in epochs.items():
        waves = {cond: (ep.mean(axis=0).mean(axis=0), times_ms) for cond, (ep, times_ms) in by_condition.items()}
        for low, high in WINDOWS_MS:
            key = f"{name}+{low}-{high}ms"
            peaks = {}
            for cond, (wave, times_ms) in waves.items():
                peaks[cond] = float(wave[(times_ms >= low) & (times_ms <= high)].min())
            upright[key], inverted[key] = round(peaks["upright"], 2), round(peaks["inverted"], 2)
            effect[key] = round(peaks["inverted"] - peaks["upright"], 2)
    return {"n170_upright_uv": upright, "n170_inverted_uv": inverted, "inversion_effect_uv": effect}


# --- shared by the open ERP tasks: reading, referencing, filtering, epoching -----------------


def read_edf(path: str):
    """Channel names and a reader of one channel's samples in µV (EDF digital -> physical, as MNE)."""
    with open(path, "rb") as f:
        head = f.read(256)
        header_bytes, n_records, n_signals = int(head[184:192]), int(head[236:244]), int(head[252:256])
        ext = f.read(n_signals * 256)
    widths = [("label", 16), ("transducer", 80), ("unit", 8), ("pmin", 8), ("pmax", 8), ("dmin", 8),
              ("dmax", 8), ("prefilter", 80), ("n_samples", 8), ("reserved", 32)]
    fields, pos = {}, 0
    for key, width in widths:
        fields[key] = [ext[pos + i * width: pos + (i + 1) * width].decode("latin-1").strip() for i in range(n_signals)]
        pos += width * n_signals
    counts = np.array(fields["n_samples"], dtype=int)
    records = np.fromfile(path, dtype="<i2", offset=header_bytes, count=n_records * int(counts.sum()))
    records = records.reshape(n_records, -1)
    starts = np.concatenate([[0], np.cumsum(counts)])
    index = {label: i for i, label in enumerate(fields["label"]) if label != "EDF Annotations"}
    units = {"uV": 1.0, "µV": 1.0, "mV": 1e3, "V": 1e6}

    def channel(label: str) -> np.ndarray:
        i = index[label]
        pmin, pmax, dmin, dmax = (float(fields[k][i]) for k in ("pmin", "pmax", "dmin", "dmax"))
        gain = (pmax - pmin) / (dmax - dmin)
        digital = records[:, starts[i]:starts[i + 1]].reshape(-1)
        return (digital * gain + (pmin - dmin * gain)) * units.get(fields["unit"][i], 1.0)

    return list(index), channel


def pipeline_epochs(path: str, events: pd.DataFrame, conditions: dict, channels: list) -> dict:
    """{pipeline: {condition: (epochs µV (trials, channels, samples), times_ms)}} for every pipeline."""
    names, channel = read_edf(path)
    offsets = np.arange(EPOCH[0], EPOCH[1] + 1)
    times_ms = offsets / SFREQ * 1000.0
    total, sds, kept, segments, onsets, idx = None, {}, {}, {}, {}, None
    for name in names:
        x = channel(name)
        if total is None:  # the first channel gives the length: keep the epochs that fit
            total = np.zeros_like(x)
            for cond, types in conditions.items():
                found = events.loc[events["trial_type"].isin(types), "sample"].to_numpy(dtype=int)
                if found.size == 0:
                    raise ValueError(f"no events of trial_type {types}")
                onsets[cond] = found[(found + EPOCH[0] >= 0) & (found + EPOCH[1] < x.size)]
            every = np.unique(np.concatenate(list(onsets.values())))
            idx = every[:, None] + offsets[None, :]
        total += x
        sds[name] = float(x.std())
        segments[name] = x[idx]
        if name in channels:
            kept[name] = x
    limit = 3.0 * float(np.median(list(sds.values())))
    good = [n for n in names if sds[n] <= limit]
    bad_total = np.sum([channel(n) for n in names if n not in good], axis=0) if len(good) < len(names) else 0.0
    references = {"all": total / len(names), "good": (total - bad_total) / len(good)}
    ref_at = references["good"][idx]
    worst = np.zeros(every.size)
    for name in good:
        seg = segments[name] - ref_at
        worst = np.maximum(worst, seg.max(axis=1) - seg.min(axis=1))
    ptp = dict(zip(every.tolist(), worst.tolist()))
    overlaps_bad = _overlaps_bad(events, every, total.size)
    data = {}
    for ref in ("all", "good"):
        referenced = np.stack([kept[c] - references[ref] for c in channels])
        data[(ref, None)] = referenced
        if ref == "all":
            data[(ref, "fir20")] = mne.filter.filter_data(referenced, SFREQ, None, 20.0, verbose="ERROR")
            sos = signal.butter(4, [0.1, 30.0], btype="bandpass", fs=SFREQ, output="sos")
            data[(ref, "butter")] = signal.sosfiltfilt(sos, referenced, axis=-1)
    out = {}
    for pname, spec in PIPELINES.items():
        continuous = data[(spec["ref"], spec.get("filter"))]
        base = (offsets >= spec["base"]) & (offsets <= 0)
        out[pname] = {}
        for cond, on in onsets.items():
            keep = np.ones(on.size, dtype=bool)
            if "reject_uv" in spec:
                keep &= np.array([ptp[o] <= spec["reject_uv"] for o in on.tolist()])
            if spec.get("drop_bad"):
                keep &= np.array([not overlaps_bad[o] for o in on.tolist()])
            chosen = on[keep]
            ep = continuous[:, chosen[:, None] + offsets[None, :]].transpose(1, 0, 2)
            ep = ep - ep[:, :, base].mean(axis=-1, keepdims=True)
            out[pname][cond] = (ep, times_ms)
    return out


def _overlaps_bad(events: pd.DataFrame, onsets: np.ndarray, n_samples: int) -> dict:
    """Per onset, whether its epoch overlaps a segment whose description starts with 'bad' (any case)."""
    mask = np.zeros(n_samples + 1, dtype=bool)
    bad = events[events["trial_type"].astype(str).str.lower().str.startswith("bad")]
    for onset, duration in zip(bad["onset"], bad["duration"]):
        start = int(round(onset * SFREQ))
        mask[max(start, 0):min(int(round((onset + duration) * SFREQ)) + 1, n_samples + 1)] = True
    return {int(o): bool(mask[o + EPOCH[0]:o + EPOCH[1] + 1].any()) for o in onsets}
