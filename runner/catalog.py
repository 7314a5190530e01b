"""The instance set: load instance files and select them with SET=."""
from __future__ import annotations

import hashlib
from pathlib import Path

from validation.instance import Instance, load_instance

PROJECT_ROOT = Path(__file__).resolve().parent.parent
INSTANCES_DIR = PROJECT_ROOT / "instances"


def instance_files(instances_dir: Path = INSTANCES_DIR) -> list[Path]:
    """Instance files, sorted; the task specs under instances/tasks/ are not instances."""
    return sorted(
        p for p in Path(instances_dir).rglob("*.json") if "tasks" not in p.relative_to(instances_dir).parts
    )


def load_all(instances_dir: Path = INSTANCES_DIR) -> list[Instance]:
    instances = [load_instance(p) for p in instance_files(instances_dir)]
    seen: dict[str, int] = {}
    for inst in instances:
        seen[inst.case_id] = seen.get(inst.case_id, 0) + 1
    duplicates = sorted(k for k, n in seen.items() if n > 1)
    if duplicates:
        raise ValueError(f"duplicate case_id in {instances_dir}: {', '.join(duplicates)}")
    return instances


def select(instances: list[Instance], selectors: list[str]) -> list[Instance]:
    """Keep instances matching any selector: a subset name (any case, '_' for spaces),
    a task id, a case id, or a task-id prefix ending in '*'. No selector keeps all."""
    if not selectors:
        return list(instances)
    chosen = [i for i in instances if any(_matches(i, s) for s in selectors)]
    unmatched = [s for s in selectors if not any(_matches(i, s) for i in instances)]
    if unmatched:
        raise ValueError(f"SET: no instance matches {', '.join(unmatched)}")
    return chosen


def parse_selection(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def _matches(instance: Instance, selector: str) -> bool:
    subset = instance.meta_info.bench_subset.lower().replace(" ", "_")
    wanted = selector.lower().replace(" ", "_")
    if selector.endswith("*"):
        return instance.case_id.startswith(selector[:-1])
    return wanted in (subset, instance.task_id.lower(), instance.case_id.lower())


def instance_set_hash(instances: list[Instance]) -> str:
    """Hash of the selected instances' ids and ground truth, recorded in run.json."""
    digest = hashlib.sha256()
    for inst in sorted(instances, key=lambda i: i.case_id):
        digest.update(inst.model_dump_json(exclude_none=True).encode())
    return digest.hexdigest()
