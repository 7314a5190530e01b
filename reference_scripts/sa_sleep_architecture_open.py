"""Reference for sa_sleep_architecture_open: the sleep architecture of one night, as a method ensemble.

The SRI sample file codes 30-s epochs 0 = wake, 1 = light (N1+N2), 2 = deep (N3), 3 = REM.
Time in bed (TIB) runs from lights-off (the start of epoch `lights_off`) to lights-on (the end
of epoch `lights_on`). Sleep efficiency = 100 x TST / TIB; WASO = wake after sleep onset; light_pct,
deep_pct and rem_pct = each stage's share of TST. Where competent analysts differ, every
combination is computed:
- sleep onset: the first epoch of any sleep (AASM); the first of three consecutive sleep
  epochs; the first of three consecutive light epochs or the first deep/REM epoch
  (Rechtschaffen & Kales, light read as possibly N1); the first epoch of 10 min of
  uninterrupted sleep (persistent sleep);
- the end of the WASO window: the last sleep epoch (final awakening) or lights-on;
- TST: every sleep epoch in TIB, or only the sleep epochs from sleep onset to the last
  sleep epoch (TST = sleep period - WASO).
"""
import itertools

import numpy as np
import pandas as pd

EPOCH_MIN = 0.5
WAKE, LIGHT, DEEP, REM = 0, 1, 2, 3
UNITS = ("sleep_efficiency", "waso_min", "light_pct", "deep_pct", "rem_pct")


def run(inputs: list[str], params: dict) -> dict:
    stages = _night(inputs[0], params["subject"], params["column"], int(params["lights_off"]), int(params["lights_on"]))
    asleep = stages != WAKE
    last = int(np.flatnonzero(asleep)[-1])
    out: dict[str, dict[str, float]] = {unit: {} for unit in UNITS}
    for (onset_name, onset), end_name, tst_name in itertools.product(
            _onsets(stages).items(), ("to_final_awakening", "to_lights_on"), ("all_sleep", "sleep_period")):
        name = f"{onset_name}|{end_name}|{tst_name}"
        stop = last + 1 if end_name == "to_final_awakening" else len(stages)
        counted = asleep.copy()
        if tst_name == "sleep_period":
            counted[:onset] = False
            counted[last + 1:] = False
        tst = int(counted.sum())
        out["sleep_efficiency"][name] = round(100.0 * tst / len(stages), 2)
        out["waso_min"][name] = int((~asleep[onset:stop]).sum()) * EPOCH_MIN
        for unit, code in (("light_pct", LIGHT), ("deep_pct", DEEP), ("rem_pct", REM)):
            out[unit][name] = round(100.0 * int((counted & (stages == code)).sum()) / tst, 2)
    # Pipelines in name order, so a cached result (stored with sorted keys) reads the same.
    return {unit: dict(sorted(values.items())) for unit, values in out.items()}


def _night(path: str, subject: str, column: str, lights_off: int, lights_on: int) -> np.ndarray:
    table = pd.read_csv(path)
    rows = table[table["subject"] == subject].sort_values("epoch")
    if rows.empty:
        raise ValueError(f"no rows for subject {subject!r}")
    if not 1 <= lights_off < lights_on <= int(rows["epoch"].max()):
        raise ValueError(f"lights-off {lights_off} / lights-on {lights_on} outside the night")
    inside = (rows["epoch"] >= lights_off) & (rows["epoch"] <= lights_on)
    stages = rows.loc[inside, column].to_numpy().astype(int)
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
