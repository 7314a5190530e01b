"""Reference for sa_sleep_cycles_open: completed NREM-REM cycles in the first hours of a night, as a method ensemble.

The SRI sample file codes 30-s epochs 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM.
The window is epochs 1 .. last_epoch (the first hours after lights-off). A cycle is a NREM
period followed by a REM period; it is complete when its REM period has ended inside the
window, and it runs from its start (sleep onset for the first cycle, the end of the previous
REM period otherwise) to the end of its REM period. Where competent analysts differ, every
combination is computed:
- sleep onset: the first epoch of any sleep (AASM); the first of three consecutive sleep
  epochs; the first of three consecutive light epochs or the first deep/REM epoch
  (Rechtschaffen & Kales, light read as possibly N1); the first epoch of 10 min of
  uninterrupted sleep;
- REM episodes separated by less than 15 min (Feinberg & Floyd 1979) or 20 min of non-REM
  belong to one REM period;
- every REM period counts, or only those with at least 5 min of REM, the first exempt
  (Feinberg & Floyd);
- a REM period still running at the window's end closes a cycle, or does not.
n_cycles must be the same under every pipeline; mean_cycle_min is the mean cycle length.
"""
import itertools

import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, LIGHT, DEEP, REM = 0, 1, 2, 3


def run(inputs: list[str], params: dict) -> dict:
    stages = _night(inputs[0], params["subject"], params["column"], int(params["last_epoch"]))
    counts, means = {}, {}
    for (onset_name, onset), gap_min, min_rem, open_end in itertools.product(
            _onsets(stages).items(), (15, 20), (0, 5), ("open_counts", "open_ignored")):
        name = f"{onset_name}|gap{gap_min}|minrem{min_rem}|{open_end}"
        durations = _cycles(stages, onset, gap_min, min_rem, open_end == "open_counts")
        if not durations:
            raise ValueError(f"no completed cycle under {name}")
        counts[name] = len(durations)
        means[name] = round(float(np.mean(durations)), 2)
    # Pipelines in name order, so a cached result (stored with sorted keys) reads the same.
    return {"n_cycles": dict(sorted(counts.items())), "mean_cycle_min": dict(sorted(means.items()))}


def _cycles(stages: np.ndarray, onset: int, gap_min: float, min_rem_min: float, count_open: bool) -> list[float]:
    periods: list[list[int]] = []
    for start, stop in _runs(stages[onset:] == REM):
        a, b = onset + start, onset + stop
        if periods and (a - periods[-1][1]) * EPOCH_MIN < gap_min:
            periods[-1][1] = b
        else:
            periods.append([a, b])
    kept = [p for i, p in enumerate(periods)
            if i == 0 or int((stages[p[0]:p[1]] == REM).sum()) * EPOCH_MIN >= min_rem_min]
    if kept and kept[-1][1] == len(stages) and not count_open:
        kept = kept[:-1]
    durations, begin = [], onset
    for _, stop in kept:
        durations.append((stop - begin) * EPOCH_MIN)
        begin = stop
    return durations


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate([[0], mask.astype(int), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _night(path: str, subject: str, column: str, last_epoch: int) -> np.ndarray:
    table = pd.read_csv(path)
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"no rows for subject {subject!r}")
    if last_epoch > int(rows["epoch"].max()):
        raise ValueError(f"last_epoch {last_epoch} is past the night's end")
    stages = rows.loc[rows["epoch"] <= last_epoch, column].to_numpy().astype(int)
    if not set(np.unique(stages)) <= {WAKE, LIGHT, DEEP, REM}:
        raise ValueError(f"unexpected stage codes {sorted(set(stages))}")
    return stages


def _first_run(mask: np.ndarray, length: int) -> int | None:
    count = 0
    for i, flag in enumerate(mask):
        count = count + 1 if flag else 0
        if count >= length:
            return i - length + 1
    return None


def _onsets(stages: np.ndarray) -> dict[str, int]:
    asleep = stages != WAKE
    if not asleep.any():
        raise ValueError("no sleep in this window")
    deep_rem = np.flatnonzero((stages == DEEP) | (stages == REM))
    light3 = _first_run(stages == LIGHT, 3)
    candidates = [c for c in (deep_rem[0] if len(deep_rem) else None, light3) if c is not None]
    onsets = {
        "first_sleep_epoch": int(np.flatnonzero(asleep)[0]),
        "three_consecutive": _first_run(asleep, 3),
        "rk_light3_or_deep_rem": int(min(candidates)) if candidates else None,
        "persistent_sleep_10min": _first_run(asleep, 20),
    }
    missing = [name for name, onset in onsets.items() if onset is None]
    if missing:
        raise ValueError(f"no sleep onset under {missing}")
    return onsets
