"""Reference for sa_pipeline_night_report: the whole-night report of one subject's hypnogram.

SRI coding (0 = wake, 1 = light, 2 = deep, 3 = REM; 30-s epochs). Sleep = codes 1-3; the sleep
period runs from the first to the last sleep epoch. The pipeline, each step feeding the next:
summary metrics (TST, efficiency, WASO, REM latency from sleep onset), architecture (deep and
REM as % of TST), distribution over the night (an hour-by-hour CSV of stage minutes, the share
of deep sleep in the first half of the sleep period, the longest uninterrupted sleep bout) and
a hypnogram figure (PNG). The figure is drawn with numpy and zlib (no plotting library): only
its existence and format are scored.
"""
import csv
import os
import struct
import zlib

import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
HOUR_EPOCHS = 120
NAMES = ("wake", "light", "deep", "rem")
TABLE = "stage_minutes_per_hour.csv"
FIGURE = "hypnogram.png"


def _runs(mask: np.ndarray) -> list[int]:
    """Lengths of the maximal runs of True."""
    padded = np.concatenate([[0], mask.astype(int), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return [int(b - a) for a, b in zip(edges[::2], edges[1::2])]


def _hour_table(stages: np.ndarray) -> list[list]:
    rows = []
    for hour, start in enumerate(range(0, len(stages), HOUR_EPOCHS), start=1):
        block = stages[start:start + HOUR_EPOCHS]
        rows.append([hour] + [_num((block == code).sum() * EPOCH_MIN) for code in range(4)])
    return rows


def _num(value: float):
    return int(value) if float(value).is_integer() else float(value)


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    rows = table[table["subject"] == params["subject"]].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_pipeline_night_report: no rows for subject {params['subject']!r}")
    stages = rows[params["column"]].to_numpy().astype(int)
    asleep = np.flatnonzero(stages != 0)
    onset, last = int(asleep[0]), int(asleep[-1])
    period = stages[onset:last + 1]
    n_sleep = len(asleep)
    tst = n_sleep * EPOCH_MIN
    rem_first = int(np.flatnonzero(stages == 3)[0])
    half = len(period) // 2
    deep_total = int((stages == 2).sum())

    os.makedirs("file_check", exist_ok=True)
    table_path = os.path.join("file_check", TABLE)
    hours = _hour_table(stages)
    with open(table_path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["hour", "wake_min", "light_min", "deep_min", "rem_min"])
        writer.writerows(hours)
    figure_path = os.path.join("file_check", FIGURE)
    _write_png(figure_path, stages)

    return {
        "tst_min": _num(tst),
        "sleep_efficiency": round(100.0 * n_sleep / len(stages), 2),
        "waso_min": _num(int((period == 0).sum()) * EPOCH_MIN),
        "rem_latency_min": _num((rem_first - onset) * EPOCH_MIN),
        "deep_pct": round(100.0 * int((stages == 2).sum()) / n_sleep, 2),
        "rem_pct": round(100.0 * int((stages == 3).sum()) / n_sleep, 2),
        "deep_first_half_pct": round(100.0 * int((period[:half] == 2).sum()) / deep_total, 1),
        "longest_sleep_bout_min": _num(max(_runs(stages != 0)) * EPOCH_MIN),
        "table_path": table_path,
        "table_properties": {
            "artifact_path": table_path,
            "row_count": len(hours),
            "column_names": ["hour", "wake_min", "light_min", "deep_min", "rem_min"],
            "total_duration_sec": _num(deep_total * EPOCH_MIN),
        },
        "figure_path": figure_path,
        "figure_properties": {"artifact_path": figure_path, "format": "png"},
    }


def _write_png(path: str, stages: np.ndarray) -> None:
    """A grey-scale step hypnogram: wake on top, then REM, light, deep; 2 px per epoch."""
    level = {0: 0, 3: 1, 1: 2, 2: 3}
    band, width = 24, 2
    height = band * 4
    image = np.full((height, len(stages) * width), 255, dtype=np.uint8)
    previous = None
    for i, code in enumerate(stages):
        y = level[int(code)] * band + band // 2
        image[y, i * width:(i + 1) * width] = 0
        if previous is not None and previous != y:
            image[min(previous, y):max(previous, y) + 1, i * width] = 0
        previous = y
    raw = b"".join(b"\x00" + row.tobytes() for row in image)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", image.shape[1], height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as handle:
        handle.write(png)
