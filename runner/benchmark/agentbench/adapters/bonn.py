"""T3 normal vs epileptic from the Bonn EEG dataset (Andrzejak et al. 2001).

Native layout: <root>/{Z,O,N,F,S}/<letter><nnn>.txt, one single-channel segment per file
(4097 samples in the distributed files, 173.61 Hz, 23.6 s), one sample per line. As in the
paper (§6.1) only the unambiguous subsets are used: Z (healthy, eyes open) and O (healthy,
eyes closed) are normal, S (ictal) is epileptic; N and F (interictal) are left out. Balance:
k = min(|Z|, |O|, |S| // 2) segments from each of Z and O and 2k from S (the paper's
47 + 47 + 94); the choice is a seeded sample.
"""
from __future__ import annotations

from pathlib import Path

from runner.benchmark.agentbench.adapters.base import AdapterError, DatasetTask, LocalCase, opaque_names, pick

SFREQ = 173.61
LABELS = ["normal", "epileptic"]
SUBSETS = {"Z": "normal", "O": "normal", "S": "epileptic"}
INSTRUCTION = (
    "Normal-vs-epileptic screening (EEGAgentBench T3). /input/local/bonn/{record}.txt holds a "
    "single-channel EEG segment, one sample per line ({n_samples} samples at {sfreq} Hz, about "
    "{duration_s} s, microvolts).\n\nClassify this EEG recording as normal or epileptic and list "
    "the supporting findings. End with JSON: {{\"answer\": \"normal\" | \"epileptic\"}}"
)


def segment_files(root: Path, subset: str) -> list[Path]:
    """The subset's .txt segments, sorted; the folder letter matches in any case."""
    folders = [p for p in Path(root).iterdir() if p.is_dir() and p.name.upper() == subset]
    if not folders:
        raise AdapterError(f"{root}: no folder {subset}/ (Bonn layout: Z, O, N, F, S)")
    files = sorted(p for p in folders[0].iterdir() if p.suffix.lower() == ".txt")
    if not files:
        raise AdapterError(f"{folders[0]}: no .txt segments")
    return files


def read_samples(path: Path) -> int:
    """The number of samples in a segment, checked to be one number per non-blank line."""
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    try:
        [float(line) for line in lines]
    except ValueError as exc:
        raise AdapterError(f"{path}: not one number per line ({exc})") from exc
    return len(lines)


def build(root: Path) -> DatasetTask:
    """T3 cases: a balanced seeded sample of Z, O (normal) and S (epileptic) segments."""
    root = Path(root)
    found = {subset: segment_files(root, subset) for subset in SUBSETS}
    k = min(len(found["Z"]), len(found["O"]), len(found["S"]) // 2)
    if k == 0:
        raise AdapterError(f"{root}: need at least one Z, one O and two S segments")
    chosen = {s: pick(found[s], k * (2 if s == "S" else 1), f"bonn-{s}") for s in SUBSETS}
    sources = {f"{s}/{p.name}": (s, p) for s, files in chosen.items() for p in files}
    names = opaque_names(list(sources), "b", "bonn")
    cases: list[LocalCase] = []
    for key, (subset, path) in sorted(sources.items(), key=lambda kv: names[kv[0]]):
        n = read_samples(path)
        cases.append(LocalCase(
            name=names[key], files=[(path, ".txt")],
            params={"answer": SUBSETS[subset], "record": names[key], "source": key,
                    "n_samples": n, "sfreq": SFREQ, "duration_s": round(n / SFREQ, 1)}))
    return DatasetTask(
        dataset="bonn", task_id="eab_t3_bonn", family="T3", difficulty="medium",
        difficulty_reason="one 23.6 s channel; healthy surface EEG vs ictal intracranial EEG",
        original_dataset="Bonn EEG (Andrzejak et al. 2001), subsets Z, O, S",
        instruction=INSTRUCTION, metric_params={"family": "T3", "labels": LABELS}, cases=cases)
