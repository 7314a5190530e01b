"""Reference for sa_rem_latency_open: REM latency of one night, elapsed and sleep-only, as a method ensemble.

The SRI sample file codes 30-s epochs 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM.
Both latencies run from the start of the sleep-onset epoch to the start of the first REM
epoch: rem_latency_min counts every epoch in between, rem_latency_sleep_min only the sleep
epochs (the wake in between left out). Sleep onset is left to the analyst, so each latency is
computed under four onset definitions in use:
- first_sleep_epoch: the first epoch of any sleep stage (AASM);
- three_consecutive: the first of three consecutive sleep epochs;
- rk_light3_or_deep_rem: the first of three consecutive light epochs or the first deep or
  REM epoch, whichever comes first (Rechtschaffen & Kales, light read as possibly N1);
- persistent_sleep_10min: the first epoch of 10 min (20 epochs) of uninterrupted sleep.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, LIGHT, DEEP, REM = 0, 1, 2, 3


def run(inputs: list[str], params: dict) -> dict:
    stages = _night(inputs[0], params["subject"], params["column"])
    elapsed, sleep_only = {}, {}
    for name, onset in _onsets(stages).items():
        rem = np.flatnonzero(stages[onset:] == REM)
        if not len(rem):
            raise ValueError(f"no REM after sleep onset ({name})")
        between = stages[onset:onset + int(rem[0])]
        elapsed[name] = len(between) * EPOCH_MIN
        sleep_only[name] = int((between != WAKE).sum()) * EPOCH_MIN
    # Pipelines in name order, so a cached result (stored with sorted keys) reads the same.
    return {"rem_latency_min": dict(sorted(elapsed.items())), "rem_latency_sleep_min": dict(sorted(sleep_only.items()))}


def _night(path: str, subject: str, column: str) -> np.ndarray:
    table = pd.read_csv(path)
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"no rows for subject {subject!r}")
    stages = rows[column].to_numpy().astype(int)
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
        raise ValueError("no sleep in this night")
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
