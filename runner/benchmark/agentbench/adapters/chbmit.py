"""T5 seizure intervals from CHB-MIT (Shoeb 2009, PhysioNet).

Native layout: <root>/chbNN/chbNN-summary.txt and <root>/chbNN/chbNN_MM.edf. The summary lists
every file with "Number of Seizures in File: n" followed by n start/end lines, written either
"Seizure Start Time: 417 seconds" or "Seizure 1 Start Time: 2670 seconds". Records listed but
absent from the copy are skipped. Balance as in the paper: every seizure-positive record and
as many seizure-free ones (seeded sample). The subject of a record is its case folder (chbNN),
the unit of the paper's subject-level Event-F1 aggregation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from runner.benchmark.agentbench.adapters.base import AdapterError, DatasetTask, LocalCase, opaque_names, pick
from runner.benchmark.agentbench.edf import EdfError, read_header

INSTRUCTION = (
    "Seizure detection (EEGAgentBench T5). /input/local/chbmit/{record}.edf is continuous scalp "
    "EEG from a long-term paediatric epilepsy-monitoring session (bipolar montage, "
    "{duration_s} s).\n\nSearch the entire recording for electrographic seizures. Report each "
    "seizure as an [onset, offset] interval in seconds from the start of the recording. If there "
    "is no seizure, return an empty list. End with JSON: "
    "{{\"answer\": [[onset_s, offset_s], ...]}} or {{\"answer\": []}}"
)
_FILE = re.compile(r"^File Name:\s*(\S+)", re.I)
_COUNT = re.compile(r"^Number of Seizures in File:\s*(\d+)", re.I)
_TIME = re.compile(r"^Seizure(?:\s+\d+)?\s+(Start|End)\s+Time:\s*([\d.]+)\s*seconds?", re.I)


@dataclass(frozen=True)
class SummaryRecord:
    """One file entry of a summary: the EDF's name and its (start_s, end_s) seizures."""

    file_name: str
    seizures: tuple[tuple[float, float], ...]


def parse_summary(text: str, source: str = "summary") -> list[SummaryRecord]:
    """Records of a chbNN-summary.txt in file order; errors name the line."""
    records: list[SummaryRecord] = []
    name: str | None = None
    expected = 0
    starts: list[float] = []
    ends: list[float] = []

    def close(lineno: int) -> None:
        if name is None:
            return
        if len(starts) != expected or len(ends) != expected:
            raise AdapterError(f"{source}:{lineno}: {name} announces {expected} seizure(s) but "
                               f"lists {len(starts)} start and {len(ends)} end time(s)")
        records.append(SummaryRecord(name, tuple(zip(starts, ends))))

    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if match := _FILE.match(line):
            close(lineno)
            name, expected, starts, ends = match.group(1), 0, [], []
        elif match := _COUNT.match(line):
            expected = int(match.group(1))
        elif match := _TIME.match(line):
            if name is None:
                raise AdapterError(f"{source}:{lineno}: seizure time before any File Name")
            (starts if match.group(1).lower() == "start" else ends).append(float(match.group(2)))
    close(len(text.splitlines()) + 1)
    for record in records:
        for start, end in record.seizures:
            if not end > start:
                raise AdapterError(f"{source}: {record.file_name}: seizure end {end} <= start {start}")
    return records


def build(root: Path) -> DatasetTask:
    """T5 cases: every seizure-positive record present and as many seizure-free ones."""
    root = Path(root)
    summaries = sorted(root.glob("chb*/chb*-summary.txt"))
    if not summaries:
        raise AdapterError(f"{root}: no chbNN/chbNN-summary.txt (CHB-MIT layout expected)")
    entries: list[tuple[str, SummaryRecord, Path]] = []
    for summary in summaries:
        subject = summary.parent.name
        for record in parse_summary(summary.read_text(errors="replace"), str(summary)):
            edf = summary.parent / record.file_name
            if edf.is_file():
                entries.append((subject, record, edf))
    if not entries:
        raise AdapterError(f"{root}: none of the EDF files named in the summaries is present")
    positive = [e for e in entries if e[1].seizures]
    free = [e for e in entries if not e[1].seizures]
    chosen = positive + pick(free, len(positive), "chbmit-free")
    names = opaque_names([e[1].file_name for e in chosen], "s", "chbmit")
    cases: list[LocalCase] = []
    for subject, record, edf in sorted(chosen, key=lambda e: names[e[1].file_name]):
        try:
            duration = read_header(edf).duration_s
        except EdfError as exc:
            raise AdapterError(str(exc)) from exc
        cases.append(LocalCase(
            name=names[record.file_name], files=[(edf, ".edf")],
            params={"answer": [[s, e] for s, e in record.seizures], "record": names[record.file_name],
                    "source": f"{subject}/{record.file_name}", "subject": subject,
                    "duration_s": duration}))
    return DatasetTask(
        dataset="chbmit", task_id="eab_t5_chbmit", family="T5", difficulty="hard",
        difficulty_reason="zero or more seizures to find and delimit in up to 4 h of multichannel EEG",
        original_dataset="CHB-MIT Scalp EEG Database (PhysioNet)", instruction=INSTRUCTION,
        metric_params={"family": "T5", "binding_params": ["duration_s", "subject"]}, cases=cases)
