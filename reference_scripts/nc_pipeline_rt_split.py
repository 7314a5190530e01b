"""Reference for nc_pipeline_rt_split: behaviour and ERP of one subject, fast vs slow responses.

pylossless face/house/checkerboard data (128 channels, 256 Hz, BIDS events). The pipeline:
1. behaviour: every checkerboard of one side is paired with the first button press after it;
   a correct response is a press on the same side within the deadline (their count and mean
   reaction time are reported); the correct trials are ordered by reaction time (ties: earlier
   stimulus first) and split into a fast and a slow half of floor(n/2) trials each (the middle
   trial of an odd count belongs to neither);
2. preparation: bad channels (population SD over the whole file more than 8 times the median
   SD of the 128 channels) are left out, the others re-referenced to their average;
3. epochs -0.2..0.5 s around each stimulus (samples -51..128), baseline epoch start..0 s,
   peak-to-peak rejection over every good channel;
4. per half, the channel-cluster mean of the average over a latency window;
5. the single-trial cluster window means of the two halves compared by a two-sided test at
   alpha 0.05. The test is the agent's choice, so the verdict is a method ensemble (Welch t,
   Student t, Mann-Whitney U, permutation of the mean difference): a binding whose tests
   disagree makes no instance.

The EDF is decoded with NumPy (16-bit samples times the header's calibration, as MNE does; equal
to mne.io.read_raw_edf to 1e-12 uV), so only the stretch and channels needed become floats.
"""
import numpy as np
import pandas as pd
from scipy import stats

SFREQ = 256.0
START, STOP = -51, 128  # epoch samples around the onset: round(-0.2 * 256), round(0.5 * 256)
BAD_FACTOR = 8.0
ALPHA = 0.05
N_PERMUTATIONS = 5000


def run(inputs: list[str], params: dict) -> dict:
    events = pd.read_csv(inputs[1], sep="\t", encoding="utf-8-sig")
    trials = _correct_trials(events, params["side"], params["deadline_ms"])
    rts = np.array([rt for _, rt in trials])
    half = len(trials) // 2
    fast = np.array([s for s, _ in trials[:half]], dtype=int)
    slow = np.array([s for s, _ in trials[len(trials) - half:]], dtype=int)

    edf = _Edf(inputs[0])
    good = edf.good_channels(BAD_FACTOR)
    cluster = params["channels"]
    ep_fast = edf.epochs(fast, good, cluster, params["reject_uv"])
    ep_slow = edf.epochs(slow, good, cluster, params["reject_uv"])
    mask = _window(params["window_ms"])
    trial_fast = ep_fast[:, :, mask].mean(axis=(1, 2))
    trial_slow = ep_slow[:, :, mask].mean(axis=(1, 2))
    amp_fast = float(ep_fast.mean(axis=0).mean(axis=0)[mask].mean())
    amp_slow = float(ep_slow.mean(axis=0).mean(axis=0)[mask].mean())
    return {
        "n_correct": int(len(trials)),
        "mean_rt_ms": _round(float(np.mean(rts)), 1),
        "n_kept_fast": int(len(ep_fast)),
        "n_kept_slow": int(len(ep_slow)),
        "amplitude_fast_uv": _round(amp_fast, 2),
        "amplitude_slow_uv": _round(amp_slow, 2),
        "difference_uv": _round(amp_slow - amp_fast, 2),
        "significant": _verdicts(trial_slow, trial_fast),
    }


def _round(value: float, decimals: int) -> float:
    """Python's round, without a negative zero."""
    return round(float(value), decimals) + 0.0

def _correct_trials(events: pd.DataFrame, side: str, deadline_ms: float) -> list[tuple[int, float]]:
    """(stimulus sample, RT ms) of the correct responses, fastest first (ties: earlier stimulus)."""
    ordered = events.sort_values("sample", kind="stable")
    presses = ordered[ordered["trial_type"].isin(["press-left", "press-right"])]
    press_samples = presses["sample"].to_numpy(dtype=int)
    press_types = presses["trial_type"].to_numpy()
    stimuli = ordered.loc[ordered["trial_type"] == f"checker-{side}", "sample"].to_numpy(dtype=int)
    correct = []
    for onset in stimuli:
        k = int(np.searchsorted(press_samples, onset, side="right"))  # first press strictly after
        if k == len(press_samples):
            continue
        rt = (press_samples[k] - onset) / SFREQ * 1000.0
        if press_types[k] == f"press-{side}" and rt <= deadline_ms:
            correct.append((int(onset), rt))
    if len(correct) < 4:
        raise ValueError("nc_pipeline_rt_split: too few correct responses")
    return sorted(correct, key=lambda pair: (pair[1], pair[0]))


def _window(window_ms: list[float]) -> np.ndarray:
    t_ms = np.arange(START, STOP + 1) / SFREQ * 1000.0
    mask = (t_ms >= window_ms[0]) & (t_ms <= window_ms[1])
    if not mask.any():
        raise ValueError("nc_pipeline_rt_split: empty window")
    return mask


def _verdicts(a: np.ndarray, b: np.ndarray) -> dict:
    """'yes'/'no' (two-sided p < alpha) of each defensible two-sample test."""
    p_values = {
        "welch_t": stats.ttest_ind(a, b, equal_var=False).pvalue,
        "student_t": stats.ttest_ind(a, b, equal_var=True).pvalue,
        "mann_whitney_u": stats.mannwhitneyu(a, b, alternative="two-sided").pvalue,
        "permutation_mean": _permutation_p(a, b),
    }
    return {name: "yes" if float(p) < ALPHA else "no" for name, p in p_values.items()}


def _permutation_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided permutation p of the difference of means (seeded random relabellings)."""
    rng = np.random.default_rng(0)
    shuffled = rng.permuted(np.tile(np.concatenate([a, b]), (N_PERMUTATIONS, 1)), axis=1)
    diffs = np.abs(shuffled[:, :len(a)].mean(axis=1) - shuffled[:, len(a):].mean(axis=1))
    hits = int((diffs >= abs(a.mean() - b.mean()) - 1e-12).sum())
    return (hits + 1) / (N_PERMUTATIONS + 1)


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
            raise ValueError("nc_pipeline_rt_split: unexpected EDF layout")
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
            raise ValueError("nc_pipeline_rt_split: a cluster channel is bad")
        out = x[keep][:, wanted, :]
        return out - out[:, :, :-START + 1].mean(axis=2, keepdims=True)
