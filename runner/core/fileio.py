"""Small file and console helpers shared by the data cache, truth generation and runs."""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether an error means the file system is full or over quota."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def write_atomic(path: Path, content: str | bytes, mode: int = 0o644) -> None:
    """Write via a temporary file in the same directory and rename: readers (and a crash)
    see either the old file or the complete new one. `mode` matters because sandboxes read
    some of these files as another uid, and mkstemp creates 0600 files."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks (recordings are tens of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_json(path: Path, data: Any) -> None:
    """Write JSON-ready data atomically as stable text (sorted keys, indented, UTF-8)."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@contextlib.contextmanager
def progress_bar(enabled: bool, *columns: str | ProgressColumn) -> Iterator[Progress | None]:
    """A rich Progress with the given columns, or None when progress display is off."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    with Progress(*columns) as bar:
        yield bar
