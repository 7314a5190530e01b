"""Reference for nc_auditory_n100_channels: channels with the most negative N100 window mean.

MNE sample excerpt: 60 EEG channels minus the known-bad EEG 053, average reference, events
from STI 014, epochs -0.2..0.5 s, baseline epoch start..0 s, no filtering or rejection; the
evoked response pools every epoch of the given event ids.
"""
import mne
import numpy as np

BAD_CHANNELS = ["EEG 053"]
TMIN, TMAX = -0.2, 0.5


def run(inputs: list[str], params: dict) -> dict:
    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_fif(inputs[0], preload=True, verbose="ERROR")
    events = mne.find_events(raw, stim_channel="STI 014", verbose="ERROR")
    eeg_names = [n for n, t in zip(raw.ch_names, raw.get_channel_types()) if t == "eeg"]
    raw.pick([n for n in eeg_names if n not in BAD_CHANNELS])
    raw.set_eeg_reference("average", projection=False, verbose="ERROR")
    wanted = [int(i) for i in params["event_ids"]]
    chosen = events[np.isin(events[:, 2], wanted)]
    if len(chosen) == 0:
        raise ValueError(f"nc_auditory_n100_channels: no events with ids {wanted}")
    epochs = mne.Epochs(
        raw, chosen, event_id=None, tmin=TMIN, tmax=TMAX, baseline=(None, 0),
        reject=None, flat=None, proj=False, preload=True, verbose="ERROR",
    )
    evoked = epochs.average()
    times_ms = evoked.times * 1000.0
    low, high = params["window_ms"]
    inside = (times_ms >= low) & (times_ms <= high)
    means = evoked.data[:, inside].mean(axis=1)
    # Stable sort: equal means (never seen in practice) keep channel order.
    order = np.argsort(means, kind="stable")[: int(params["k"])]
    return {"most_negative_channels": sorted(evoked.ch_names[i] for i in order)}
