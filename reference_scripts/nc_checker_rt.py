"""Reference for nc_checker_rt: reaction times to checkerboard stimuli from the BIDS events file.

Only the events file is used. A checkerboard trial is answered by the first button press
(press-left or press-right) after its onset; it counts as a correct response when that press
is on the stimulus side and comes no later than the response deadline. Times come from the
integer `sample` column at 256 Hz, so the result is exact.
"""
import numpy as np
import pandas as pd

SFREQ = 256.0


def run(inputs: list[str], params: dict) -> dict:
    events = pd.read_csv(inputs[-1], sep="\t", encoding="utf-8-sig")
    side = params["side"]
    start, end = params["segment_s"]
    stim = events.loc[events["trial_type"] == f"checker-{side}", "sample"].to_numpy(dtype=int)
    # The segment selects stimuli by onset time, inclusive at both ends.
    stim = stim[(stim / SFREQ >= start) & (stim / SFREQ <= end)]
    presses = events.loc[events["trial_type"].isin(["press-left", "press-right"]),
                         ["sample", "trial_type"]].sort_values("sample", kind="stable")
    press_samples = presses["sample"].to_numpy(dtype=int)
    press_types = presses["trial_type"].to_numpy()
    rts = []
    for onset in stim:
        later = np.flatnonzero(press_samples > onset)
        if later.size == 0:
            continue
        first = later[0]
        rt_ms = (press_samples[first] - onset) / SFREQ * 1000.0
        if press_types[first] == f"press-{side}" and rt_ms <= params["deadline_ms"]:
            rts.append(rt_ms)
    if not rts:
        raise ValueError("nc_checker_rt: no correct responses in the segment")
    return {
        "n_stimuli": int(stim.size),
        "n_correct": len(rts),
        "mean_rt_ms": round(float(np.mean(rts)), 1),
    }
