"""The instance set in the layout of BrainBench's own runner: `eegbench instances --export brainbench DIR`.

That runner loads cases only from `caseK/caseK_NN.json` folders, weighs each instance's score by
its numeric `meta_info.difficult`, and reads each answer key only from `params.gt_value`. So:

    DIR/case<K>/case<K>_<NN>.json   one folder per task (K from 1, tasks in subset then id order),
                                    its instances numbered from 01 in case-id order
    DIR/index.tsv                   which task and case each file holds (not JSON: a runner
                                    that loads every *.json under DIR must not take it for a case)

Each file is the instance as eegbench saved it (reference block included, so `eegbench eval
--cases DIR` runs it too), with `difficult` as the level's number, the answer key under
`gt_value`, and data paths relative to the data root the export is given.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path
from typing import Any

from runner.core.fileio import write_atomic
from validation.errors import UserError
from validation.instance import DIFFICULTY_LEVELS, Instance, dump_instance
from validation.unit import GT_KEY, TRUTH_KEYS

INDEX = "index.tsv"
INDEX_COLUMNS = ("file", "task_id", "bench_subset", "case_id")


def export(instances: Iterable[Instance], dest: Path, data_root: Path, target_root: Path) -> dict[str, Any]:
    """Write the instances under `dest` (which must be empty or new); data paths, relative to
    `data_root` in eegbench, are rewritten relative to `target_root`. Returns the index."""
    chosen = sorted(instances, key=lambda i: (i.meta_info.bench_subset, i.task_id, i.case_id))
    if not chosen:
        raise UserError("instances --export: no instance selected")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UserError(f"instances --export: {dest} exists and is not an empty directory")
    files: list[tuple[Path, str]] = []
    index: dict[str, Any] = {"layout": "brainbench", "data_root": str(target_root), "folders": {}}
    for k, (task_id, group) in enumerate(groupby(chosen, key=lambda i: i.task_id), start=1):
        cases = list(group)
        folder = f"case{k}"
        index["folders"][folder] = {"task_id": task_id, "bench_subset": cases[0].meta_info.bench_subset, "cases": {}}
        for n, instance in enumerate(cases, start=1):
            name = f"{folder}_{n:02d}.json"
            files.append((dest / folder / name, case_file(instance, data_root, target_root)))
            index["folders"][folder]["cases"][name] = instance.case_id
    for path, text in files:  # every file checked before the first is written
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    write_atomic(dest / INDEX, index_text(index))
    return index


def index_text(index: dict[str, Any]) -> str:
    """The index as tab-separated lines, one per case file, under a header."""
    lines = ["\t".join(INDEX_COLUMNS)]
    for folder, entry in index["folders"].items():
        lines += [f"{folder}/{name}\t{entry['task_id']}\t{entry['bench_subset']}\t{case}"
                  for name, case in entry["cases"].items()]
    return "\n".join(lines) + "\n"


def case_file(instance: Instance, data_root: Path, target_root: Path) -> str:
    """One instance as BrainBench's runner reads it (see the module docstring)."""
    data = json.loads(dump_instance(instance))
    meta = data["meta_info"]
    if instance.meta_info.difficulty is not None:
        meta["difficult"] = DIFFICULTY_LEVELS[instance.meta_info.difficulty]
    for metric in data["eval_config"]["metrics"]:
        params = metric["params"]
        for key in TRUTH_KEYS:
            if key != GT_KEY and key in params:
                params.setdefault(GT_KEY, params.pop(key))
    agent_input = data["agent_input"]
    for field in ("data_path", "label_path"):
        if agent_input.get(field) is not None:
            agent_input[field] = _moved(instance.case_id, field, agent_input[field], data_root, target_root)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _moved(case_id: str, field: str, value: str | list[str], data_root: Path, target_root: Path) -> str | list[str]:
    paths = [value] if isinstance(value, str) else value
    moved = [_relative(case_id, field, p, data_root, target_root) for p in paths]
    return moved[0] if isinstance(value, str) else moved


def _relative(case_id: str, field: str, path: str, data_root: Path, target_root: Path) -> str:
    absolute = Path(os.path.abspath(data_root / path))
    try:
        return absolute.relative_to(os.path.abspath(target_root)).as_posix()
    except ValueError:
        raise UserError(f"{case_id}: agent_input.{field} {path!r} is at {absolute}, which is not under "
                        f"--data-root {target_root}") from None
