"""Retaining what the model left in /workspace/file_check/ before the workspace is removed.

The workspace was written by hostile code: symlinks and special files are recorded, never
followed or read; regular files are copied without following links, with their sha256, up
to MAX_ARTIFACT_BYTES per instance.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from runner.run.records import ArtifactEntry

MAX_ARTIFACT_BYTES = 200 * 1024 * 1024


def retain_artifacts(workspace: Path, dest: Path) -> list[ArtifactEntry]:
    """Copy regular files under workspace/file_check/ to dest, with sha256.

    Symlinks and special files are recorded, never followed: the workspace was written by
    hostile code. Copying stops at MAX_ARTIFACT_BYTES.
    """
    source = workspace / "file_check"
    manifest: list[ArtifactEntry] = []
    if source.is_symlink() or (source.exists() and not source.is_dir()):
        return [_refused_entry(source, "")]
    if not source.is_dir():
        return manifest
    copied = 0
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            manifest.append(_refused_entry(path, rel))
            continue
        size = path.lstat().st_size
        if copied + size > MAX_ARTIFACT_BYTES:
            manifest.append(ArtifactEntry(path=rel, bytes=size, skipped="artifact size cap reached"))
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = _copy_no_follow(path, target)
        copied += size
        manifest.append(ArtifactEntry(path=rel, bytes=size, sha256=digest))
    return manifest


def _refused_entry(path: Path, rel: str) -> ArtifactEntry:
    """A symlink or special file: recorded with where it points, never read."""
    if path.is_symlink():
        return ArtifactEntry(path=rel, skipped="symlink (never followed)", link_target=os.readlink(path))
    return ArtifactEntry(path=rel, skipped="not a regular file (special file)")


def _copy_no_follow(src: Path, dst: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as reader, open(dst, "wb") as writer:
        for chunk in iter(lambda: reader.read(1 << 20), b""):
            digest.update(chunk)
            writer.write(chunk)
    return digest.hexdigest()
