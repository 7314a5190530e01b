"""SET=lite: a fixed, published subset of the default benchmark for runs that must be cheap.

The rule: every task of the default set keeps round(TARGET x its share of the set's instances)
of them, at least MIN_PER_TASK (and at most all it has); within a task the instances kept are
the first in the order of sha256("<SEED>:<case id>"). Subset, difficulty and task kind are
properties of a task, so allocating to each task in proportion to its size keeps their shares
those of the whole set, up to the rounding and the per-task minimum.

The chosen case ids are published in instances/manifests/lite.json (with the rule's
parameters), so the subset does not move when the rule's code is read differently;
`eegbench instances --lite` rewrites the file from the current instance set, and a test fails
when the file is not what the rule gives.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

from validation.errors import UserError
from validation.instance import Instance

SEED = 20261207
TARGET = 200
MIN_PER_TASK = 2
LITE_PATH = Path("instances/manifests/lite.json")


def choose(instances: list[Instance]) -> list[str]:
    """The case ids the rule keeps of `instances` (the default set), sorted."""
    by_task: dict[str, list[Instance]] = defaultdict(list)
    for instance in instances:
        by_task[instance.task_id].append(instance)
    kept: list[str] = []
    for task in by_task.values():
        share = round(TARGET * len(task) / len(instances))
        count = min(len(task), max(MIN_PER_TASK, share))
        kept += sorted((i.case_id for i in task), key=_draw)[:count]
    return sorted(kept)


def _draw(case_id: str) -> str:
    return hashlib.sha256(f"{SEED}:{case_id}".encode()).hexdigest()


def manifest_text(instances: list[Instance]) -> str:
    """lite.json for the default set `instances`: the rule's parameters and the case ids."""
    chosen = choose(instances)
    subsets: dict[str, int] = defaultdict(int)
    wanted = set(chosen)
    for instance in instances:
        subsets[instance.meta_info.bench_subset] += instance.case_id in wanted
    return json.dumps({"rule": {"seed": SEED, "target": TARGET, "min_per_task": MIN_PER_TASK},
                       "instances": len(chosen), "tasks": len({i.task_id for i in instances}),
                       "by_subset": dict(sorted(subsets.items())), "case_ids": chosen}, indent=2) + "\n"


def read(project_root: Path) -> list[str]:
    """The published lite case ids; UserError when the file is missing or unreadable."""
    path = Path(project_root) / LITE_PATH
    try:
        case_ids = json.loads(path.read_text(encoding="utf-8"))["case_ids"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"SET=lite: cannot read {path} ({exc}); `eegbench instances --lite` writes it") from None
    if not isinstance(case_ids, list) or not all(isinstance(c, str) for c in case_ids):
        raise UserError(f"SET=lite: {path}: case_ids must be a list of case ids")
    return case_ids
