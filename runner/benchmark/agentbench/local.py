"""`eegbench truth --dataset NAME --root PATH`: instances from a user's local copy of a dataset.

The adapter reads the copy in its native layout and returns the cases of one task family.
Each case's files are staged in the data root under local/<dataset>/<opaque name><suffix>:
a hard link to the user's file (a copy when it lies on another filesystem), or the derived
bytes (a trimmed EDF) written there. Not a symlink: the sandbox binds the file a symlink points
to, and the bind's source path (e.g. bonn/S/S001.txt, which names the class) would be readable
inside the sandbox in /proc/self/mountinfo. The instances are then made by the ordinary truth pipeline
(a task spec in memory, reference_scripts/eab_answer.py, provenance with input sha256s) and
written to <local instances dir>/<dataset>/ (default instances/local/, gitignored), replacing
what an earlier build of the same dataset left there.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from runner.benchmark import truth
from runner.benchmark.agentbench.adapters import get_adapter
from runner.benchmark.agentbench.adapters.base import DatasetTask, LocalCase
from runner.benchmark.agentbench.specs import PARSER_PROMPT, SCRIPT, SUBSET
from runner.core.fileio import write_atomic
from validation.errors import UserError
from validation.instance import TaskKind, dump_instance

STAGE_DIR = "local"


def build_local(dataset: str, root: Path, project_root: Path, data_root: Path,
                out_dir: Path) -> list[Path]:
    """Stage the dataset's cases and write its instance files; returns their paths."""
    adapter = get_adapter(dataset)
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"--root {root} is not a directory")
    task = adapter.build(root)
    spec = task_spec(task, [stage_case(task.dataset, case, Path(data_root)) for case in task.cases])
    folder = Path(out_dir) / dataset
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for binding in spec.bindings:
        instance = truth.build_instance(spec, binding, project_root, data_root)
        path = folder / f"{instance.case_id}.json"
        text = dump_instance(instance)
        if not path.is_file() or path.read_text() != text:
            write_atomic(path, text)
        written.append(path)
    for stale in set(folder.glob("*.json")) - set(written):
        stale.unlink()
    return written


def stage_case(dataset: str, case: LocalCase, data_root: Path) -> truth.Binding:
    """Put the case's files in the data root; the binding names them data-root-relative."""
    relative: list[str] = []
    for source, suffix in case.files:
        rel = f"{STAGE_DIR}/{dataset}/{case.name}{suffix}"
        target = data_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if suffix in case.content:
            content = case.content[suffix]()
            if target.is_symlink() or not target.is_file() or target.read_bytes() != content:
                target.unlink(missing_ok=True)
                write_atomic(target, content)
        elif not _same_file(target, source):
            target.unlink(missing_ok=True)
            _link_or_copy(Path(source), target)
        relative.append(rel)
    return truth.Binding(case=case.name, data_path=relative, params=case.params)


def _same_file(target: Path, source: Path) -> bool:
    if target.is_symlink() or not target.is_file():
        return False
    a, b = target.stat(), Path(source).stat()
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) or (
        a.st_size == b.st_size and a.st_mtime_ns >= b.st_mtime_ns)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another filesystem (or no hard links there): copy
        tmp = target.with_name(f".{target.name}.partial")
        shutil.copyfile(source, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)


def task_spec(task: DatasetTask, bindings: list[truth.Binding]) -> truth.TaskSpec:
    """An in-memory task spec for the truth pipeline: one answer unit of the family's type."""
    return truth.TaskSpec(
        task_id=task.task_id, bench_subset=SUBSET, difficulty=task.difficulty,
        difficulty_reason=task.difficulty_reason, kind=_kind(task.family), original_dataset=task.original_dataset,
        script=SCRIPT, instruction=task.instruction, parser_prompt=PARSER_PROMPT,
        metrics=[truth.TaskMetric(metric_id="answer", type=_unit(task.family), target_key="answer",
                                  weight=1.0, params=task.metric_params)],
        bindings=bindings)


def _kind(family: str) -> TaskKind:
    # EEGAgentBench's long-horizon tasks: events over whole recordings (T5), a night's stages (T6).
    return "long_horizon" if family in ("T5", "T6") else "recipe"


def _unit(family: str) -> str:
    return {"T5": "interval_events_check", "T6": "hypnogram_check"}.get(family, "label_check")
