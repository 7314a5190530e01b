"""Sleep-EDF Expanded (PhysioNet sleep-edfx 1.0.0; Kemp et al. 2000): 153 day-night recordings
of the sleep-cassette study (SC*) and 44 nights of the sleep-telemetry study (ST*).

Licence: Open Data Commons Attribution License v1.0 (ODC-By 1.0). Obtain it from
https://physionet.org/content/sleep-edfx/1.0.0/.

Native layout: <root>/sleep-cassette/SC4001E0-PSG.edf with SC4001EC-Hypnogram.edf and
<root>/sleep-telemetry/ST7011J0-PSG.edf with ST7011JP-Hypnogram.edf, paired on the name
before its last character (the pairing of runner/benchmark/agentbench/adapters/sleepedfx.py, reused).
The PSGs hold 'EEG Fpz-Cz', 'EEG Pz-Oz', 'EOG horizontal' at 100 Hz and, in cassette files,
'Resp oro-nasal', 'EMG submental', 'Temp rectal', 'Event marker' at 1 Hz (telemetry files:
'EMG submental' at 100 Hz, 'Event marker' at 1 Hz). The hypnograms are annotation-only EDF+
("Sleep stage W/1/2/3/4/R/?", "Movement time").

Choices: `sfreq` is the EEG channels' rate (100 Hz); the slower channels are named in the
description. Stages come from the T6 adapter's `epoch_labels`, unchanged, so both agree: one
per whole 30-s epoch of the PSG, stages 3 and 4 are N3, and "Sleep stage ?", "Movement time"
and uncovered epochs are "W" there (that adapter's reference needs a label per epoch), never
"?". A PSG whose hypnogram is missing is an error naming it rather than skipped. `subject` is
the id without night and scorer letters ("SC400" for SC4001E0: study SC4, subject 00).
"""
from __future__ import annotations

from pathlib import Path

from runner.benchmark.agentbench.adapters.base import AdapterError
from runner.benchmark.agentbench.adapters.sleepedfx import epoch_labels, pairs
from runner.benchmark.agentbench.edf import EdfError
from runner.benchmark.datasets.base import DatasetError, Recording
from runner.benchmark.datasets.readers.common import describe, kind_by_prefix, name_examples, read_edf

DATASET = "sleepedfx"
TITLE = "Sleep-EDF Expanded"
STUDIES = {"SC": "Sleep-EDF Expanded, sleep-cassette study", "ST": "Sleep-EDF Expanded, sleep-telemetry study"}
LAYOUT = ("Sleep-EDF Expanded layout: sleep-cassette/SC4001E0-PSG.edf with SC4001EC-Hypnogram.edf, "
          "sleep-telemetry/ST7011J0-PSG.edf with ST7011JP-Hypnogram.edf")


def recordings(root: Path) -> list[Recording]:
    """Every *-PSG.edf under `root` with its hypnogram's stages, sorted by key."""
    root = Path(root)
    try:
        found = pairs(root)
    except AdapterError as exc:
        raise DatasetError(f"{exc}; expected the {LAYOUT}") from exc
    paired = {psg for psg, _ in found}
    unpaired = [psg for psg in sorted(root.rglob("*-PSG.edf")) if psg not in paired]
    if unpaired:
        stem = unpaired[0].name.split("-")[0][:-1]
        raise DatasetError(f"{unpaired[0]}: no {stem}?-Hypnogram.edf for it under {root} ({LAYOUT})")
    return sorted((read(psg, hypnogram) for psg, hypnogram in found), key=lambda recording: recording.key)


def read(psg: Path, hypnogram: Path) -> Recording:
    """One PSG and its hypnogram."""
    signals = read_edf(psg, kind_by_prefix)
    try:
        stages = epoch_labels(hypnogram, signals.header)
    except (EdfError, OSError, ValueError, RuntimeError) as exc:
        raise DatasetError(f"{hypnogram}: not a readable Sleep-EDF hypnogram: {exc}") from exc
    key = psg.name.removesuffix("-PSG.edf")
    source = STUDIES.get(key[:2], "Sleep-EDF Expanded")
    return Recording(
        dataset=DATASET, key=key, subject=key[:5], signal=psg, suffix=".edf", channels=signals.channels,
        sfreq=signals.sfreq, duration_s=signals.duration_s,
        description=describe("an EDF file of polysomnography", source, key, signals.channels, signals.sfreq,
                             signals.duration_s, name_examples(signals.channels), signals.other_rates()),
        stages=tuple(stages), companions=(hypnogram,))
