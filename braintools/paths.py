"""Where the toolset may read and write: inputs under /input, outputs under /workspace/file_check.

Inside the sandbox these are the real mount points. `use_roots` moves them for running tool
plans in-process on the host (the plan checker): the same rules then hold under other folders.
Paths are resolved (symlinks followed) before the check, so `..` and links cannot leave a root.
"""
from __future__ import annotations

import os
from pathlib import Path

from braintools.errors import ToolError

_ROOTS = {
    "input": Path(os.environ.get("BRAINTOOLS_INPUT_ROOT", "/input")),
    "output": Path(os.environ.get("BRAINTOOLS_OUTPUT_ROOT", "/workspace/file_check")),
}
MAX_PATH_CHARS = 1024


def use_roots(input_root: Path, output_root: Path) -> None:
    """Read inputs from `input_root` and write artifacts to `output_root` (host-side plan runs)."""
    _ROOTS["input"] = Path(input_root)
    _ROOTS["output"] = Path(output_root)


def input_root() -> Path:
    """The folder every readable input lies under."""
    return _ROOTS["input"]


def output_root() -> Path:
    """The folder every written artifact lies under."""
    return _ROOTS["output"]


def input_path(path: str, argument: str = "path") -> Path:
    """An existing file under the input root; `/input/x` and `x` name the same file."""
    resolved = _inside(_ROOTS["input"], path, argument, ("/input/",))
    if not resolved.is_file():
        raise ToolError("bad_argument", f"{argument}: no input file {path!r}", argument=argument)
    return resolved


def output_path(path: str, argument: str = "path") -> Path:
    """A writable file path under the output root (its folder is created)."""
    resolved = _inside(_ROOTS["output"], path, argument, ("/workspace/file_check/", "file_check/"))
    if resolved == _ROOTS["output"].resolve():
        raise ToolError("bad_argument", f"{argument}: {path!r} names the folder, not a file", argument=argument)
    resolved.parent.mkdir(parents=True, exist_ok=True)
    return resolved


def _inside(root: Path, path: str, argument: str, prefixes: tuple[str, ...]) -> Path:
    if not isinstance(path, str) or not path.strip() or len(path) > MAX_PATH_CHARS or "\x00" in path:
        raise ToolError("bad_argument", f"{argument}: expected a file path", argument=argument)
    text = path.strip()
    for prefix in prefixes:
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    base = root.resolve()
    resolved = (base / text).resolve()
    if not resolved.is_relative_to(base):
        raise ToolError("forbidden_path", f"{argument}: {path!r} lies outside {prefixes[0].rstrip('/')}", argument=argument)
    return resolved
