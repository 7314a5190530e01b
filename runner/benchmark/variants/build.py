"""`eegbench truth --variants K --seed S`: leak-resistant variants of the committed instances.

For every binding of a task that declares `"variants"` (runner/benchmark/variants/rules.py), variant j
(1..K) applies one of the task's safe transformations to the binding's inputs and params
(runner/benchmark/variants/transforms.py): the transformations are taken in turn from a start the seed
picks per case, so K at least the number of safe ones covers them all. The ground truth is
then recomputed by the same reference script, as for the committed set. Transformed inputs
are staged in the data root under variants/, named by a digest of their bytes (opaque and
shared by identical derivations); inputs a transformation leaves alone keep their path.

A variant's case id is <task_id>-<case>_v<j>; its meta_info records `variant_of` (the
original case id) and `variant` (what the transformation did, e.g. the permutation, the
offset or the SNR), which the report pairs with the original's score. Instances go to
<local instances>/variants/<task_id>/, replacing an earlier build's for the same tasks.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from runner.benchmark import truth
from runner.benchmark.variants.rules import VariantRules
from runner.benchmark.variants.transforms import VariantError, apply
from runner.core.fileio import write_atomic
from validation.errors import UserError
from validation.instance import Instance

FOLDER = "variants"


def build_variants(project_root: Path, data_root: Path, out_dir: Path, count: int, seed: int,
                   tasks: list[str] | None = None, jobs: int = 1, progress: bool = True,
                   cache_dir: Path | None = None) -> truth.Built:
    """K variants of every binding of the selected tasks that declare variants."""
    if count < 1:
        raise UserError(f"--variants must be at least 1, got {count}")
    result = truth.Built()
    items: list[tuple[truth.TaskSpec, truth.Binding]] = []
    records: dict[str, tuple[str, dict[str, object]]] = {}
    specs = truth.load_tasks(Path(project_root), tasks)
    for spec in specs:
        if spec.variants is None:
            result.skipped.append(truth.Skipped(spec.task_id, None, "declares no variants"))
            continue
        for binding in spec.bindings:
            for index in range(1, count + 1):
                made = _variant(spec, spec.variants, binding, index, seed, Path(data_root))
                if isinstance(made, truth.Skipped):
                    result.skipped.append(made)
                    continue
                variant, record = made
                items.append((spec, variant))
                records[spec.case_id(variant)] = (spec.case_id(binding), record)
    instances, rejected = truth.build_many(items, Path(project_root), Path(data_root), jobs=jobs,
                                           progress=progress, cache_dir=cache_dir)
    result.skipped += [truth.Skipped(case_id.rsplit("-", 1)[0], case_id, why)
                       for case_id, why in rejected.items()]
    marked = [_marked(instance, *records[instance.meta_info.case_id]) for instance in instances]
    result.written = truth.write_task_folders(marked, Path(out_dir) / FOLDER, [s.task_id for s in specs if s.variants])
    return result


def transform_for(rules: VariantRules, case_id: str, index: int, seed: int) -> str:
    """The safe transformation of variant `index`: the safe ones in turn from a seeded start."""
    start = _digest(f"{seed}|{case_id}") % len(rules.safe)
    return rules.safe[(start + index - 1) % len(rules.safe)]


def _variant(spec: truth.TaskSpec, rules: VariantRules, binding: truth.Binding, index: int, seed: int,
             data_root: Path) -> tuple[truth.Binding, dict[str, object]] | truth.Skipped:
    case_id = spec.case_id(binding)
    name = transform_for(rules, case_id, index, seed)
    paths = binding.input_paths()
    inputs = {rel: (data_root / rel).read_bytes() for rel in paths}
    rng = np.random.default_rng([seed, index, _digest(case_id)])
    try:
        derived = apply(name, inputs, dict(binding.params), rules, rng)
    except VariantError as exc:
        return truth.Skipped(spec.task_id, f"{case_id}_v{index}", str(exc))
    staged = {rel: rel if derived.inputs[rel] == inputs[rel] else _stage(rel, derived.inputs[rel], data_root)
              for rel in paths}
    variant = binding.model_copy(update={
        "case": f"{binding.case}_v{index}", "params": derived.params,
        "data_path": _renamed(binding.data_path, staged), "label_path": _renamed(binding.label_path, staged)})
    return variant, {"transform": name, "seed": seed, "index": index, **derived.record}


def _stage(rel: str, data: bytes, data_root: Path) -> str:
    """The transformed bytes under variants/<digest><suffix>; written once."""
    name = Path(rel).name
    suffix = "_events.tsv" if name.endswith("_events.tsv") else Path(name).suffix
    target = f"{FOLDER}/{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    path = data_root / target
    if not path.is_file() or path.stat().st_size != len(data):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    return target


def _renamed(value: str | list[str] | None, staged: dict[str, str]) -> str | list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return staged[value]
    return [staged[v] for v in value]


def _marked(instance: Instance, original: str, record: dict[str, object]) -> Instance:
    meta = instance.meta_info.model_copy(update={"variant_of": original, "variant": record})
    return instance.model_copy(update={"meta_info": meta})


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
