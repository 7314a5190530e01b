"""Dataset readers: a user's local copy of a public EEG dataset, in its native layout, read as
`Recording`s (runner/benchmark/datasets/base.py). `READERS` maps the dataset name to its module, imported
when it is asked for; each module's `recordings(root)` returns the copy's recordings sorted by
key, its TITLE names the dataset, and its docstring states the layout it reads, the licence
and where to obtain it."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from extensions.registry import Registry
from runner.benchmark.datasets.base import Recording


class Reader(Protocol):
    """What every reader module provides."""

    TITLE: str  # the dataset's name, e.g. "Haaglanden Medisch Centrum sleep staging database"

    def recordings(self, root: Path) -> list[Recording]:
        """The copy's recordings sorted by key; DatasetError naming the path when the layout
        is not the dataset's."""
        ...


READERS: Registry[Callable[[], Reader]] = Registry("dataset reader")


def _module(name: str) -> Callable[[], Reader]:
    return lambda: cast(Reader, importlib.import_module(f"runner.benchmark.datasets.readers.{name}"))


for _name in ("hmc", "isruc", "eegmat", "sleepedfx", "eegmmidb", "ds002718"):
    READERS.register(_name, _module(_name))


def get_reader(name: str) -> Reader:
    """The module of the dataset reader registered as `name`, imported now; UnknownName lists the known ones."""
    return READERS.get(name)()
