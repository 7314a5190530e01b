"""Where a reported artifact path points, decided without trusting the model.

The model reports a path as it saw it in the sandbox (`/workspace/file_check/x.fif` or
`file_check/x.fif`, relative to /workspace). Only files the run retained from
/workspace/file_check/ can be scored; anything else is a violation or a missing file:
- an absolute path outside /workspace, or a `..` that climbs out of it: violation;
- a path through a symlink, or to a special file (the run recorded it, never copied it):
  violation, whatever it points at (/etc/passwd, /input, another instance);
- a path inside /workspace but outside file_check/: missing (it was never retained).
"""
from __future__ import annotations

import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from validation.context import ARTIFACT_DIR, SANDBOX_WORKSPACE, ScoringContext

MAX_PATH_CHARS = 1024


@dataclass(frozen=True)
class Resolved:
    """A reported path mapped to its retained file, or why there is none."""
    path: Path | None  # the retained file, when there is one
    relative: str = ""  # path under file_check/
    problem: str = ""  # why there is no file
    violation: bool = False


def resolve_artifact(reported: object, context: ScoringContext) -> Resolved:
    """Map a reported sandbox path to the retained copy, or say why it cannot be scored."""
    if not isinstance(reported, str) or not reported.strip():
        return Resolved(None, problem="no artifact path reported")
    text = reported.strip().strip("`'\"").replace("\\", "/")
    if len(text) > MAX_PATH_CHARS or "\x00" in text:
        return Resolved(None, problem="reported path is not a usable path", violation=True)
    relative, problem = _workspace_relative(text)
    if problem:
        return Resolved(None, problem=f"{problem}: {text}", violation=True)
    prefix = ARTIFACT_DIR + "/"
    if not relative.startswith(prefix):
        return Resolved(None, problem=f"{text} is not under {SANDBOX_WORKSPACE}/{prefix} "
                                      "(only that folder is retained)")
    return _retained(relative[len(prefix):], text, context)


def _workspace_relative(text: str) -> tuple[str, str]:
    if text.startswith("/"):
        text = posixpath.normpath(text)  # '/workspace//x', '/workspace/./x'; '..' is judged below
        root = SANDBOX_WORKSPACE + "/"
        if not text.startswith(root):
            return "", f"absolute path outside {SANDBOX_WORKSPACE}"
        text = text[len(root):]
    normal = posixpath.normpath(text)
    if normal == ".." or normal.startswith("../"):
        return "", f"path escapes {SANDBOX_WORKSPACE}"
    return normal, ""


def _retained(inner: str, text: str, context: ScoringContext) -> Resolved:
    entries = {entry["path"]: entry for entry in context.manifest}
    for parent in _parents(inner):
        if parent in entries and "sha256" not in entries[parent]:
            return _refused(parent, entries[parent], text)
    entry = entries.get(inner)
    if entry is None:
        return Resolved(None, relative=inner, problem=f"{text} does not exist in the retained artifacts")
    if "sha256" not in entry:
        return _refused(inner, entry, text)
    if context.artifacts_dir is None:
        return Resolved(None, relative=inner, problem="the run kept no artifacts directory")
    path = context.artifacts_dir / inner
    try:
        mode = path.lstat().st_mode
    except OSError:
        return Resolved(None, relative=inner, problem=f"{text}: retained copy is missing")
    if not stat.S_ISREG(mode):  # the retained copy is ours; anything else was tampered with
        return Resolved(None, relative=inner, problem=f"{text}: retained copy is not a regular file",
                        violation=True)
    return Resolved(path, relative=inner)


def _refused(inner: str, entry: dict[str, Any], text: str) -> Resolved:
    reason = entry.get("skipped", "not retained")
    violation = "size cap" not in reason
    kind = "violation" if violation else "not retained"
    return Resolved(None, relative=inner, problem=f"{text}: {kind}: {reason}", violation=violation)


def _parents(inner: str) -> list[str]:
    parts = inner.split("/")
    return [""] + ["/".join(parts[:i]) for i in range(1, len(parts))]  # "" is file_check/ itself
