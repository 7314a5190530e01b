"""T6 five-class sleep staging from Sleep-EDFx (Kemp et al. 2000, PhysioNet), with the paper's
edge-wake trimming (§6.1).

Native layout: <root>/**/<ID>-PSG.edf and <ID'>-Hypnogram.edf (EDF+ annotations "Sleep stage
W/1/2/3/4/R/?" and "Movement time"), paired on the name before its last character
(SC4001E0-PSG.edf with SC4001EC-Hypnogram.edf). Stages 3 and 4 are N3; "?", "Movement time"
and epochs no annotation covers are W (the reference needs a label per epoch). The number of
epochs is floor(PSG duration / 30 s).

Trimming (§6.1): only the contiguous wake runs at the two ends, data and labels together, the
signal cut losslessly along its data records (runner/benchmark/agentbench/edf.py). Target: the wake count
of the largest other stage. Wake already at or below it: no trim. Otherwise edge wake is
removed until the target is met, keeping the rest split evenly between the two ends; when the
interior wake alone reaches the target, both ends are trimmed to a buffer of
EDGE_BUFFER_EPOCHS wake epochs next to the sleep body (the paper says "a small wake buffer"
without its size: this is our choice). Cuts fall on data-record boundaries and only ever trim
less (60 s records: an even number of epochs). Recordings without any sleep are skipped.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path

from runner.benchmark.agentbench.adapters.base import AdapterError, DatasetTask, LocalCase, opaque_names
from runner.benchmark.agentbench.edf import EdfError, EdfHeader, cut_records, read_header
from validation.agentbench.answers import EPOCH_S, STAGES, run_length

EDGE_BUFFER_EPOCHS = 10
ANNOTATION_STAGES = {"sleep stage w": "W", "sleep stage 1": "N1", "sleep stage 2": "N2",
                     "sleep stage 3": "N3", "sleep stage 4": "N3", "sleep stage r": "REM"}
INSTRUCTION = (
    "Sleep staging (EEGAgentBench T6). /input/local/sleepedfx/{record}.edf is a whole-night "
    "polysomnography recording ({duration_s} s, {n_epochs} epochs of 30 s).\n\nScore it in "
    "30-second epochs using AASM 5-class labels (W / N1 / N2 / N3 / REM). Cover all {n_epochs} "
    "epochs with a run-length-encoded hypnogram: rows [start_epoch, end_epoch, stage] with "
    "inclusive 0-based epoch indices. End with JSON: "
    "{{\"answer\": [[0, 120, \"W\"], [121, 140, \"N1\"], ...]}}"
)


def pairs(root: Path) -> list[tuple[Path, Path]]:
    """(PSG, hypnogram) pairs found anywhere under `root`, matched on the recording id."""
    psgs = sorted(Path(root).rglob("*-PSG.edf"))
    hypnograms = {p.name.split("-")[0][:-1]: p for p in sorted(Path(root).rglob("*-Hypnogram.edf"))}
    found = [(psg, hypnograms[psg.name.split("-")[0][:-1]]) for psg in psgs
             if psg.name.split("-")[0][:-1] in hypnograms]
    if not found:
        raise AdapterError(f"{root}: no *-PSG.edf with a matching *-Hypnogram.edf (Sleep-EDFx layout)")
    return found


def epoch_labels(hypnogram: Path, psg: EdfHeader) -> list[str]:
    """One stage per 30 s epoch of the PSG, from the hypnogram's annotations."""
    import mne

    offset = (read_header(hypnogram).start - psg.start).total_seconds()
    annotations = mne.read_annotations(hypnogram)
    n_epochs = int(psg.duration_s // EPOCH_S)
    labels = ["W"] * n_epochs
    for onset, duration, text in zip(annotations.onset, annotations.duration, annotations.description):
        stage = ANNOTATION_STAGES.get(str(text).strip().lower(), "W")
        first = int(round((onset + offset) / EPOCH_S))
        for epoch in range(max(first, 0), min(first + int(round(duration / EPOCH_S)), n_epochs)):
            labels[epoch] = stage
    return labels


def trim_window(labels: list[str], record_s: float, buffer: int = EDGE_BUFFER_EPOCHS) -> tuple[int, int, str]:
    """(first_epoch, stop_epoch, rule) of the kept part; rule is untrimmed, to_target or buffer."""
    n = len(labels)
    lead = next((i for i, s in enumerate(labels) if s != "W"), n)
    trail = next((i for i, s in enumerate(reversed(labels)) if s != "W"), n)
    wake = labels.count("W")
    target = max(labels.count(s) for s in STAGES if s != "W")
    interior = wake - lead - trail
    if wake <= target or lead == n:
        return 0, n, "untrimmed"
    if interior >= target:
        keep_lead, keep_trail, rule = min(buffer, lead), min(buffer, trail), "buffer"
    else:
        keep = target - interior
        keep_trail = min(trail, keep - min(lead, keep // 2))
        keep_lead, rule = min(lead, keep - keep_trail), "to_target"
    first, stop = lead - keep_lead, n - (trail - keep_trail)
    first, stop = _align(first, stop, n, record_s)
    return first, stop, rule if (first, stop) != (0, n) else "untrimmed"


def _align(first: int, stop: int, n: int, record_s: float) -> tuple[int, int]:
    """Cut epochs moved outwards onto data-record boundaries (never cutting into sleep)."""
    if record_s <= 0:
        return 0, n
    if EPOCH_S % record_s == 0:
        return first, stop
    if record_s % EPOCH_S == 0:
        step = int(record_s // EPOCH_S)
        return (first // step) * step, min(n, math.ceil(stop / step) * step)
    return 0, n  # records straddle epochs: no lossless cut on epoch boundaries


def build(root: Path) -> DatasetTask:
    """T6 cases: every PSG with some sleep, edge wake trimmed as in the paper (§6.1)."""
    cases_by_key: dict[str, tuple[EdfHeader, Path, list[str], int, int, str]] = {}
    for psg_path, hyp_path in pairs(root):
        try:
            psg = read_header(psg_path)
        except EdfError as exc:
            raise AdapterError(str(exc)) from exc
        labels = epoch_labels(hyp_path, psg)
        if all(s == "W" for s in labels):
            continue
        first, stop, rule = trim_window(labels, psg.record_duration_s)
        if rule != "untrimmed" and psg.is_edf_plus:
            first, stop, rule = 0, len(labels), "untrimmed"  # cannot cut EDF+ losslessly here
        cases_by_key[psg_path.name] = (psg, hyp_path, labels[first:stop], first, stop, rule)
    if not cases_by_key:
        raise AdapterError(f"{root}: no recording with any sleep epoch")
    names = opaque_names(list(cases_by_key), "p", "sleepedfx")
    cases: list[LocalCase] = []
    for key in sorted(cases_by_key, key=names.__getitem__):
        psg, hyp_path, kept, first, stop, rule = cases_by_key[key]
        content: dict[str, Callable[[], bytes]] = {}
        if rule != "untrimmed":
            per_record = psg.record_duration_s / EPOCH_S
            first_rec, stop_rec = int(round(first / per_record)), int(round(stop / per_record))
            stop_rec = min(stop_rec, psg.n_records)
            content[".edf"] = functools.partial(cut_records, psg, first_rec, stop_rec)
        cases.append(LocalCase(
            name=names[key], files=[(psg.path, ".edf")], content=content,
            params={"answer": run_length(kept), "record": names[key], "source": key,
                    "hypnogram": hyp_path.name, "n_epochs": len(kept),
                    "duration_s": len(kept) * EPOCH_S, "trim": {"rule": rule, "first_epoch": first,
                                                                "stop_epoch": stop}}))
    return DatasetTask(
        dataset="sleepedfx", task_id="eab_t6_sleepedfx", family="T6", difficulty="hard",
        difficulty_reason="a label for every 30 s epoch of a 6-23 h recording",
        original_dataset="Sleep-EDF Expanded (PhysioNet)", instruction=INSTRUCTION,
        metric_params={"family": "T6", "binding_params": ["n_epochs"]}, cases=cases)
