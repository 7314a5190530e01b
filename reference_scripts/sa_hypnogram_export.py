"""Reference for sa_hypnogram_export: one subject's hypnogram as a run-length annotation CSV.

Each maximal run of identical stage codes (SRI coding 0 = wake, 1 = light, 2 = deep,
3 = REM, 30-s epochs) becomes one row onset_sec, duration_sec, stage; epoch 1 starts at
0 s. The file goes to file_check/ (relative to the working directory) and the script
returns its expected properties plus two numbers read off the table.
"""
import csv
import os

import numpy as np
import pandas as pd

EPOCH_SEC = 30
NAMES = ("wake", "light", "deep", "rem")
COLUMNS = ["onset_sec", "duration_sec", "stage"]
FILE_NAME = "hypnogram_annotations.csv"


def _segments(stages: np.ndarray) -> list[list]:
    """[onset_sec, duration_sec, name] for each maximal run of one code."""
    edges = np.flatnonzero(np.diff(stages)) + 1
    starts = np.concatenate([[0], edges])
    stops = np.concatenate([edges, [len(stages)]])
    return [
        [int(a * EPOCH_SEC), int((b - a) * EPOCH_SEC), NAMES[stages[a]]]
        for a, b in zip(starts, stops)
    ]


def run(inputs: list[str], params: dict) -> dict:
    table = pd.read_csv(inputs[0])
    subject, column = params["subject"], params["column"]
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"sa_hypnogram_export: no rows for subject {subject!r}")
    segments = _segments(rows[column].to_numpy())
    path = os.path.join("file_check", FILE_NAME)
    os.makedirs("file_check", exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(segments)
    rem_onsets = [onset for onset, _, name in segments if name == "rem"]
    return {
        "artifact_path": path,
        "file_properties": {
            "artifact_path": path,
            "row_count": len(segments),
            "column_names": COLUMNS,
            "total_duration_sec": int(len(rows) * EPOCH_SEC),
        },
        "n_segments": len(segments),
        "first_rem_onset_sec": rem_onsets[0] if rem_onsets else None,
    }
