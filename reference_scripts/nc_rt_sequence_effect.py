"""Reference for nc_rt_sequence_effect: are responses faster when a checkerboard switches side?

Only the BIDS events file is used (times from the integer `sample` column at 256 Hz). The trial
sequence is every checkerboard (checker-left, checker-right) in time order; each is answered by
the first button press (press-left or press-right) after it, correct when on the stimulus side
and valid. A checkerboard is a repeat when the previous checkerboard had the same side, a switch
otherwise. The medians of the correct switch and repeat reaction times, and their difference,
are taken over the checkerboards of the chosen sides whose onset lies in the window.

The instruction leaves the response-validity rules to the analyst, so the ground truth is an
ensemble (runner/ensemble.py) of 20 analyses:
- validity of the first press: any latency; 100-1000 ms; 150-1500 ms; 200-1000 ms; at least
  100 ms and before the next stimulus of any kind (face, house or checkerboard);
- trials following an error or a miss kept, or dropped (a common clean-up of sequential effects);
- the first checkerboard after a block boundary (a 'boundary' row: the recording was paused)
  either takes the last checkerboard before the break as its predecessor, or has none.
"""
import numpy as np
import pandas as pd

SFREQ = 256.0
VALIDITY = {  # (shortest, longest) valid RT in ms, and whether the press must come before the next stimulus
    "any": (0.0, np.inf, False),
    "100-1000ms": (100.0, 1000.0, False),
    "150-1500ms": (150.0, 1500.0, False),
    "200-1000ms": (200.0, 1000.0, False),
    "100ms-next_stimulus": (100.0, np.inf, True),
}


def run(inputs: list[str], params: dict) -> dict:
    events = pd.read_csv(inputs[-1], sep="\t", encoding="utf-8-sig")
    kind = events["trial_type"].astype(str)
    samples = events["sample"].to_numpy(dtype=int)
    checker = kind.isin(["checker-left", "checker-right"]).to_numpy()
    stimuli = np.sort(samples[kind.str.startswith(("checker-", "face-", "house-")).to_numpy()])
    press = kind.isin(["press-left", "press-right"]).to_numpy()
    order = np.argsort(samples[press], kind="stable")
    press_samples, press_sides = samples[press][order], kind[press].to_numpy()[order]
    boundaries = np.sort(samples[(kind == "boundary").to_numpy()])
    order = np.argsort(samples[checker], kind="stable")
    stim_samples, stim_types = samples[checker][order], kind[checker].to_numpy()[order]
    low, high = params["window_s"]
    chosen = np.isin(stim_types, params["trial_types"]) & (stim_samples / SFREQ >= low) & (stim_samples / SFREQ <= high)
    switch, repeat, cost = {}, {}, {}
    for rule, (shortest, longest, before_next) in VALIDITY.items():
        rts, correct = _responses(stim_samples, stim_types, press_samples, press_sides, stimuli,
                                  shortest, longest, before_next)
        for after_error in ("keep", "drop"):
            for across in ("across_breaks", "within_blocks"):
                has_prev = np.r_[False, np.ones(stim_samples.size - 1, dtype=bool)]
                if across == "within_blocks":  # a boundary between two checkerboards cuts the sequence
                    block = np.searchsorted(boundaries, stim_samples, side="right")
                    has_prev[1:] &= block[1:] == block[:-1]
                same = np.r_[False, stim_types[1:] == stim_types[:-1]]
                use = chosen & correct & has_prev
                if after_error == "drop":
                    use[1:] &= correct[:-1]
                key = f"{rule}+{after_error}_after_error+{across}"
                sw, rp = float(np.median(rts[use & ~same])), float(np.median(rts[use & same]))
                switch[key], repeat[key], cost[key] = round(sw, 1), round(rp, 1), round(sw - rp, 1)
    return {"median_rt_switch_ms": switch, "median_rt_repeat_ms": repeat, "switch_cost_ms": cost}


def _responses(stim_samples, stim_types, press_samples, press_sides, stimuli, shortest, longest, before_next):
    """Per checkerboard: the RT (ms) of the first press after it, and whether that press is a correct response."""
    rts = np.full(stim_samples.size, np.nan)
    correct = np.zeros(stim_samples.size, dtype=bool)
    for i, (onset, kind) in enumerate(zip(stim_samples, stim_types)):
        k = int(np.searchsorted(press_samples, onset, side="right"))
        if k == press_samples.size:
            continue
        rts[i] = (press_samples[k] - onset) / SFREQ * 1000.0
        valid = shortest <= rts[i] <= longest
        if before_next:
            later = stimuli[stimuli > onset]
            valid = valid and not (later.size and press_samples[k] >= later[0])
        correct[i] = valid and press_sides[k] == kind.replace("checker-", "press-")
    return rts, correct
