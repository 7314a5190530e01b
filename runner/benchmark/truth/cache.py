"""The result cache: each script result under <project>/.cache/truth/, keyed by everything it
may depend on."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from runner.core.fileio import write_atomic
from validation.instance import (
    Reference,
)

CACHE_DIR = Path(".cache/truth")
CACHE_FORMAT = 1  # bump when the meaning of a cached entry changes

def default_cache_dir(project_root: Path) -> Path:
    """The project's script-result cache (.cache/truth/)."""
    return Path(project_root) / CACHE_DIR


def cache_key(reference: Reference) -> str:
    """sha256 over what a script result depends on: input and script sha256s, parameters
    (canonical JSON), library versions, and the Python version running the script."""
    material = {
        "format": CACHE_FORMAT,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "reference": reference.model_dump(mode="json", exclude_none=True),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def read_cache(cache_dir: Path, reference: Reference) -> dict[str, Any] | None:
    """The cached script result for this provenance, or None (absent or unreadable entry)."""
    path = Path(cache_dir) / f"{cache_key(reference)}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None  # a broken entry is a miss; the fresh result overwrites it
    result = entry.get("result") if isinstance(entry, dict) else None
    return result if isinstance(result, dict) else None


def write_cache(cache_dir: Path, reference: Reference, result: dict[str, Any]) -> None:
    """Store one script result under its provenance key."""
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    entry = {"script": reference.script, "params": reference.params, "result": result}
    write_atomic(cache_dir / f"{cache_key(reference)}.json",
                 json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")
