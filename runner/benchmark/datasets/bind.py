"""`eegbench truth --dataset NAME --root PATH`: the task library bound to a local dataset.

The dataset's reader lists its recordings (runner/benchmark/datasets/readers); every task whose spec
declares `"local"` gets up to `max_bindings` of the recordings that meet its needs, each with
params its binder chooses (runner/benchmark/datasets/binders.py). Inputs are staged in the data root
under local/<dataset>/ with opaque names (a hard link to the user's file, or derived bytes),
as the EEGAgentBench adapters stage theirs (runner/benchmark/agentbench/local.py): neither the staged
name nor the sandbox's mountinfo tells the source. The reference scripts then run as for the
committed set (spawned workers, pinned threads, the result cache), and the instances go to
<local instances>/<dataset>/<task_id>/, replacing an earlier build's for the same tasks.
Everything not bound is reported with the reason: tasks without a local declaration,
recordings that miss a need, binders that found the recording unfit, ensemble rejections.
"""
from __future__ import annotations

import functools
import hashlib
import random
import string
from collections.abc import Callable
from pathlib import Path

from runner.benchmark import truth
from runner.benchmark.agentbench.adapters.base import LocalCase, opaque_names, pick
from runner.benchmark.agentbench.local import stage_case
from runner.benchmark.datasets.base import Recording
from runner.benchmark.datasets.binders import BINDERS, Proposal, Unfit, unfit_reason
from runner.benchmark.datasets.readers import get_reader
from validation.errors import UserError

DEFAULT_MAX_BINDINGS = 8


def bind_dataset(dataset: str, root: Path, project_root: Path, data_root: Path, out_dir: Path,
                 tasks: list[str] | None = None, max_bindings: int = DEFAULT_MAX_BINDINGS, jobs: int = 1,
                 progress: bool = True, cache_dir: Path | None = None) -> truth.Built:
    """Bind the selected tasks (all by default) to the dataset at `root`; write their instances."""
    if max_bindings < 1:
        raise UserError(f"--max-bindings must be at least 1, got {max_bindings}")
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"--root {root} is not a directory")
    recordings = get_reader(dataset).recordings(root)
    names = opaque_names([r.key for r in recordings], "r", dataset)
    result = truth.Built()
    items: list[tuple[truth.TaskSpec, truth.Binding]] = []
    keys: list[str] = []  # the recording of each item
    specs = truth.load_tasks(Path(project_root), tasks)
    for spec in specs:
        if spec.local is None:
            result.skipped.append(truth.Skipped(spec.task_id, None, "no local binding declared: its instruction "
                                                "describes its packaged recording"))
            continue
        local_spec = _local_spec(spec, dataset)
        for recording, proposal in _proposals(spec, recordings, max_bindings, result.skipped):
            case = _case(f"{dataset}_{names[recording.key]}", recording, proposal)
            items.append((local_spec, stage_case(dataset, case, Path(data_root))))
            keys.append(recording.key)
    instances, rejected = truth.build_many(items, Path(project_root), Path(data_root), jobs=jobs,
                                           progress=progress, cache_dir=cache_dir)
    sources = {spec.case_id(binding): key for (spec, binding), key in zip(items, keys)}
    result.skipped += [truth.Skipped(case_id.rsplit("-", 1)[0], sources[case_id], why) for case_id, why in rejected.items()]
    result.written = truth.write_task_folders(instances, Path(out_dir) / dataset, [s.task_id for s in specs if s.local])
    return result


def _local_spec(spec: truth.TaskSpec, dataset: str) -> truth.TaskSpec:
    """The spec its local instances are built from: the local instruction, the local dataset."""
    assert spec.local is not None
    return spec.model_copy(update={
        "instruction": spec.local.instruction or spec.instruction,
        "original_dataset": f"local copy of {getattr(get_reader(dataset), 'TITLE', dataset)}",
        "bindings": [], "blind_validation": None,
    })


def _proposals(spec: truth.TaskSpec, recordings: list[Recording], max_bindings: int,
               skipped: list[truth.Skipped]) -> list[tuple[Recording, Proposal]]:
    """Up to max_bindings (recording, params) for the task, the others reported as skipped."""
    assert spec.local is not None
    binder = BINDERS.get(spec.local.binder)
    if binder is None:
        raise UserError(f"{spec.task_id}: local.binder {spec.local.binder!r} is not one of {sorted(BINDERS)}")
    placeholders = {name.split("[")[0].split(".")[0] for _, name, _, _ in
                    string.Formatter().parse(spec.local.instruction or spec.instruction) if name}
    fitting: list[tuple[Recording, Proposal]] = []
    for recording in recordings:
        why = unfit_reason(recording, spec.local.needs)
        if why is None:
            try:
                proposal = binder(recording, dict(spec.local.options), _rng(spec.task_id, recording))
            except Unfit as exc:
                why = str(exc)
        if why is not None:
            skipped.append(truth.Skipped(spec.task_id, recording.key, why))
            continue
        missing = placeholders - set(proposal.params)
        if missing:
            raise UserError(f"{spec.task_id}: binder {spec.local.binder} leaves instruction placeholder(s) "
                            f"{sorted(missing)} unset; give them in local.options.fixed")
        fitting.append((recording, proposal))
    chosen = pick(fitting, max_bindings, f"{spec.task_id}/{len(recordings)}")
    for recording, _ in fitting:
        if all(recording is not r for r, _ in chosen):
            skipped.append(truth.Skipped(spec.task_id, recording.key, f"fits, beyond --max-bindings {max_bindings}"))
    return chosen


def _rng(task_id: str, recording: Recording) -> random.Random:
    digest = hashlib.sha256(f"{task_id}|{recording.dataset}|{recording.key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _case(name: str, recording: Recording, proposal: Proposal) -> LocalCase:
    """The binding's files: the derived inputs, or the recording (and its events file)."""
    if proposal.derived:
        derived = _derived(proposal)
        return LocalCase(name=name, params=proposal.params, files=[(recording.signal, suffix) for suffix in derived],
                         content=derived)
    files = [(recording.signal, recording.suffix)]
    if recording.events_tsv is not None:
        files.append((recording.events_tsv, "_events.tsv"))
    content = {recording.suffix: recording.content} if recording.content is not None else {}
    return LocalCase(name=name, params=proposal.params, files=files, content=content)


def _derived(proposal: Proposal) -> dict[str, Callable[[], bytes]]:
    """Derived inputs keyed by a staged suffix carrying their digest: two tasks deriving
    different bytes from one recording never overwrite each other's file."""
    staged: dict[str, Callable[[], bytes]] = {}
    for suffix, make in proposal.derived.items():
        data = make()
        staged[f"_{hashlib.sha256(data).hexdigest()[:10]}{suffix}"] = functools.partial(bytes, data)
    return staged
