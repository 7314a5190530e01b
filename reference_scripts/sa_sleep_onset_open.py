"""Reference for sa_sleep_onset_open: sleep onset latency of one night, as a method ensemble.

The SRI sample file codes 30-s epochs 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM.
The night starts at lights-off (the start of epoch `lights_off`). Sleep onset is left to the
analyst, so the latency is computed under four definitions in use:
- first_sleep_epoch: the first epoch of any sleep stage (AASM);
- three_consecutive: the first of three consecutive sleep epochs;
- rk_light3_or_deep_rem: the first of three consecutive light epochs or the first deep or
  REM epoch, whichever comes first (Rechtschaffen & Kales' "three epochs of stage 1 or one of
  a deeper stage", with light sleep read as possibly N1 since N1 and N2 are merged here);
- persistent_sleep_10min: the first epoch of 10 min (20 epochs) of uninterrupted sleep
  (latency to persistent sleep).
SOL = minutes from lights-off to the start of the onset epoch.
"""
import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, LIGHT, DEEP, REM = 0, 1, 2, 3


def run(inputs: list[str], params: dict) -> dict:
    stages = _night(inputs[0], params["subject"], params["column"], int(params["lights_off"]))
    # Pipelines in name order, so a cached result (stored with sorted keys) reads the same.
    return {"sol_min": {name: onset * EPOCH_MIN for name, onset in sorted(_onsets(stages).items())}}


def _night(path: str, subject: str, column: str, lights_off: int) -> np.ndarray:
    table = pd.read_csv(path)
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"no rows for subject {subject!r}")
    stages = rows.loc[rows["epoch"] >= lights_off, column].to_numpy().astype(int)
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
