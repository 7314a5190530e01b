"""What run.json records about the environment a run happened in."""
from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = ("numpy", "scipy", "mne", "yasa", "pandas", "ipykernel", "jupyter_client", "openai", "eegbench")


def library_versions() -> dict[str, str]:
    """Installed version of each library in LIBRARIES ("not installed" when absent)."""
    versions: dict[str, str] = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_revision(root: Path) -> str:
    """HEAD of the checkout at `root`, suffixed -dirty for tracked changes; "unknown" without git."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if rev.returncode != 0:
        return "unknown"
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def describe(root: Path) -> dict[str, Any]:
    """run.json's environment entry: git revision, Python, platform and library versions."""
    return {
        "git_revision": git_revision(root),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": library_versions(),
    }
