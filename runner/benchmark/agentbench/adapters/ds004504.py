"""T4 dementia cohort (AD / FTD / HC) from OpenNeuro ds004504 (Miltiadous et al. 2023).

Native layout (BIDS): <root>/participants.tsv with participant_id, Gender, Age, Group
(A = Alzheimer's disease, F = frontotemporal dementia, C = healthy control), and
<root>/sub-XXX/eeg/sub-XXX_task-eyesclosed_eeg.set (EEGLAB; a sibling .fdt data file, when
present, is staged under the same opaque stem, where mne finds it). Balance as in the paper:
the smallest group's size from each group (seeded sample; the paper has 23 each).
"""
from __future__ import annotations

import csv
from pathlib import Path

from runner.benchmark.agentbench.adapters.base import AdapterError, DatasetTask, LocalCase, opaque_names, pick

GROUPS = {"A": "AD", "F": "FTD", "C": "HC"}
LABELS = ["AD", "FTD", "HC"]
INSTRUCTION = (
    "Dementia cohort classification (EEGAgentBench T4). /input/local/ds004504/{record}.set is an "
    "eyes-closed resting-state EEG (EEGLAB format, 19-channel 10-20 system, reference A1-A2) of "
    "a {age}-year-old participant (sex {sex}).\n\nBased on this EEG and the research context, "
    "identify the participant's cohort: Alzheimer's disease (AD), frontotemporal dementia (FTD) "
    "or healthy control (HC). This is a research cohort label, not a clinical diagnosis. List "
    "the supporting EEG findings. End with JSON: {{\"answer\": \"AD\" | \"FTD\" | \"HC\"}}"
)


def read_participants(root: Path) -> list[dict[str, str]]:
    """The rows of participants.tsv; AdapterError when it or a needed column is missing."""
    path = Path(root) / "participants.tsv"
    if not path.is_file():
        raise AdapterError(f"{root}: no participants.tsv (BIDS layout expected)")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for column in ("participant_id", "Group"):
        if rows and column not in rows[0]:
            raise AdapterError(f"{path}: no column {column!r} (has {sorted(rows[0])})")
    return rows


def eeg_file(root: Path, participant: str) -> Path | None:
    """The participant's eyes-closed .set recording, or None when the copy lacks it."""
    folder = Path(root) / participant / "eeg"
    found = sorted(folder.glob(f"{participant}_task-eyesclosed_eeg.set")) if folder.is_dir() else []
    return found[0] if found else None


def build(root: Path) -> DatasetTask:
    """T4 cases: the smallest group's size sampled from each of AD, FTD and HC."""
    root = Path(root)
    by_group: dict[str, list[tuple[dict[str, str], Path]]] = {g: [] for g in GROUPS}
    for row in read_participants(root):
        group = (row.get("Group") or "").strip()
        path = eeg_file(root, row["participant_id"].strip())
        if group in GROUPS and path is not None:
            by_group[group].append((row, path))
    k = min(len(rows) for rows in by_group.values())
    if k == 0:
        raise AdapterError(f"{root}: need at least one recording of each group A, F, C "
                           f"(found {', '.join(f'{g} {len(r)}' for g, r in by_group.items())})")
    chosen = [item for g in GROUPS for item in pick(by_group[g], k, f"ds004504-{g}")]
    names = opaque_names([row["participant_id"] for row, _ in chosen], "d", "ds004504")
    cases: list[LocalCase] = []
    for row, path in sorted(chosen, key=lambda item: names[item[0]["participant_id"]]):
        pid = row["participant_id"].strip()
        fdt = path.with_suffix(".fdt")
        cases.append(LocalCase(
            name=names[pid], files=[(path, ".set")] + ([(fdt, ".fdt")] if fdt.is_file() else []),
            params={"answer": GROUPS[row["Group"].strip()], "record": names[pid], "source": pid,
                    "age": (row.get("Age") or "unknown").strip(),
                    "sex": (row.get("Gender") or "unknown").strip()}))
    return DatasetTask(
        dataset="ds004504", task_id="eab_t4_ds004504", family="T4", difficulty="hard",
        difficulty_reason="cohort differences are subtle spectral slowing over 5-21 min, 19 channels",
        original_dataset="OpenNeuro ds004504 (AD/FTD/HC resting-state EEG)",
        instruction=INSTRUCTION, metric_params={"family": "T4", "labels": LABELS}, cases=cases)
