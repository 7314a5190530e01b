"""Reference for nc_pipeline_two_subjects: one ERP contrast in two subjects, their grand average and agreement.

pylossless face/house/checkerboard data, sub-s01 and sub-s02 (128 channels, 256 Hz, BIDS events).
For each subject: bad channels (population SD over the whole file more than 8 times the median
SD of the 128 channels) are left out and the others re-referenced to their average; epochs
-0.2..0.5 s (samples -51..128) around the events of conditions A and B, baseline epoch
start..0 s; an epoch is rejected when its peak-to-peak exceeds the threshold on any good
channel (kept epochs per subject, A and B together); the cluster waveform of each condition's
average, the difference wave A - B and its mean over a latency window. Then the grand average
(the mean of the two subjects' difference waves), its extreme sample of a given polarity inside
a search window (latency and value), and the Pearson correlation of the two subjects' difference
waves over 0..500 ms; the figure shows the grand average (black) and both subjects (grey).

The EDF is decoded with NumPy (16-bit samples times the header's calibration, as MNE does; equal
to mne.io.read_raw_edf to 1e-12 uV), so only the samples needed become floats.
"""
import os
import struct
import zlib

import numpy as np
import pandas as pd

SFREQ = 256.0
START, STOP = -51, 128  # epoch samples around the onset: round(-0.2 * 256), round(0.5 * 256)
BAD_FACTOR = 8.0
FIGURE = "file_check/grand_average.png"


def run(inputs: list[str], params: dict) -> dict:
    t_ms = np.arange(START, STOP + 1) / SFREQ * 1000.0
    window = (t_ms >= params["window_ms"][0]) & (t_ms <= params["window_ms"][1])
    result: dict = {}
    waves = []
    for subject, (edf_path, tsv_path) in zip(("s01", "s02"), (inputs[0:2], inputs[2:4])):
        events = pd.read_csv(tsv_path, sep="\t", encoding="utf-8-sig")
        edf = _Edf(edf_path)
        good = edf.good_channels(BAD_FACTOR)
        epochs = {}
        for cond in ("a", "b"):
            onsets = events.loc[events["trial_type"].isin(params[f"types_{cond}"]), "sample"].to_numpy(dtype=int)
            if onsets.size == 0:
                raise ValueError(f"nc_pipeline_two_subjects: no events {params[f'types_{cond}']}")
            epochs[cond] = edf.epochs(onsets, good, params["channels"], params["reject_uv"])
        wave = epochs["a"].mean(axis=0).mean(axis=0) - epochs["b"].mean(axis=0).mean(axis=0)
        waves.append(wave)
        result[f"n_kept_{subject}"] = int(len(epochs["a"]) + len(epochs["b"]))
        result[f"difference_{subject}_uv"] = _round(float(wave[window].mean()), 2)
    grand = (waves[0] + waves[1]) / 2.0
    search = np.flatnonzero((t_ms >= params["search_ms"][0]) & (t_ms <= params["search_ms"][1]))
    k = search[np.argmin(grand[search]) if params["polarity"] == "negative" else np.argmax(grand[search])]
    span = (t_ms >= 0) & (t_ms <= 500)
    r = np.corrcoef(waves[0][span], waves[1][span])[0, 1]
    os.makedirs("file_check", exist_ok=True)
    _line_png(FIGURE, [waves[0], waves[1], grand], [150, 150, 0], int(np.flatnonzero(t_ms == 0)[0]))
    result.update({
        "grand_peak_latency_ms": _round(float(t_ms[k]), 1),
        "grand_peak_uv": _round(float(grand[k]), 2),
        "agreement_r": _round(float(r), 3),
        "figure_path": FIGURE,
        "figure_properties": {"artifact_path": FIGURE, "format": "png"},
    })
    return result


def _round(value: float, decimals: int) -> float:
    """Python's round, without a negative zero."""
    return round(float(value), decimals) + 0.0

def _line_png(path: str, traces: list, greys: list, onset: int, width: int = 640, height: int = 320) -> None:
    """Line plots (one grey level each; grey zero and onset lines) as a grey-scale PNG, built with zlib."""
    image = np.full((height, width), 255, np.uint8)
    span = max(float(np.max(np.abs(t))) for t in traces) or 1.0
    cols = np.round(np.linspace(0, width - 1, len(traces[0]))).astype(int)
    image[(height - 1) // 2, :] = 200
    image[:, cols[onset]] = 200
    for trace, grey in zip(traces, greys):
        rows = np.round((height - 1) / 2 - trace / span * (height * 0.45)).astype(int)
        for k in range(len(trace) - 1):
            steps = max(abs(rows[k + 1] - rows[k]), abs(cols[k + 1] - cols[k]), 1)
            rr = np.round(np.linspace(rows[k], rows[k + 1], steps + 1)).astype(int)
            cc = np.round(np.linspace(cols[k], cols[k + 1], steps + 1)).astype(int)
            image[np.clip(rr, 0, height - 1), cc] = grey
    raw_rows = b"".join(b"\x00" + row.tobytes() for row in image)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw_rows, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as handle:
        handle.write(png)


class _Edf:
    """The 128 EEG channels of an EDF(+) file, decoded lazily (int16 records, header calibration)."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            head = handle.read(256)
            n_signals, n_records = int(head[252:256]), int(head[236:244])
            fields = handle.read(n_signals * 256)
            body = np.fromfile(handle, dtype="<i2")

        def field(offset: int, width: int) -> list[str]:
            start = offset * n_signals
            return [fields[start + i * width:start + (i + 1) * width].decode("ascii").strip()
                    for i in range(n_signals)]

        labels = field(0, 16)
        pmin, pmax = (np.array(field(o, 8), float) for o in (104, 112))
        dmin, dmax = (np.array(field(o, 8), float) for o in (120, 128))
        per_record = np.array(field(216, 8), int)
        eeg = [i for i, name in enumerate(labels) if name != "EDF Annotations"]
        if eeg != list(range(len(eeg))) or len(set(per_record[eeg])) != 1:
            raise ValueError("nc_pipeline_two_subjects: unexpected EDF layout")
        self.n = int(per_record[0])
        records = body[:n_records * per_record.sum()].reshape(n_records, per_record.sum())
        self.blocks = records[:, :len(eeg) * self.n].reshape(n_records, len(eeg), self.n)
        self.names = [labels[i] for i in eeg]
        self.cal = (pmax - pmin)[eeg] / (dmax - dmin)[eeg]
        self.off = pmin[eeg] - dmin[eeg] * self.cal
        self.n_samples = n_records * self.n

    def good_channels(self, factor: float) -> list[int]:
        """Channels whose population SD over the whole file is at most `factor` times the median SD."""
        sd = np.array([abs(self.cal[i]) * self.blocks[:, i, :].std(dtype=np.float64) for i in range(len(self.names))])
        return [i for i in range(len(sd)) if sd[i] <= factor * np.median(sd)]

    def epochs(self, onsets: np.ndarray, good: list[int], cluster: list[str], reject_uv: float) -> np.ndarray:
        """Cluster epochs (epochs x cluster channels x samples, uV, average reference of the good
        channels, baseline removed) of the onsets whose epoch fits in the file and whose
        peak-to-peak on every good channel is at most reject_uv."""
        onsets = onsets[(onsets + START >= 0) & (onsets + STOP < self.n_samples)]
        index = onsets[:, None] + np.arange(START, STOP + 1)[None, :]
        raw = self.blocks[index // self.n, :, index % self.n][:, :, good]  # epochs x samples x good channels
        x = raw * self.cal[good] + self.off[good]
        x = (x - x.mean(axis=2, keepdims=True)).transpose(0, 2, 1)  # average reference; epochs x channels x samples
        keep = np.ptp(x, axis=2).max(axis=1) <= reject_uv
        wanted = [good.index(self.names.index(name)) if self.names.index(name) in good else -1 for name in cluster]
        if min(wanted) < 0:
            raise ValueError("nc_pipeline_two_subjects: a cluster channel is bad")
        out = x[keep][:, wanted, :]
        return out - out[:, :, :-START + 1].mean(axis=2, keepdims=True)
