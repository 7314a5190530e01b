"""Dataset adapters: a user's local copy of a public dataset, in its native layout, to the
cases of one EEGAgentBench task family. `ADAPTERS` maps the `--dataset` name to its module,
imported when it is asked for."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from extensions.registry import Registry
from runner.benchmark.agentbench.adapters.base import DatasetTask


class Adapter(Protocol):
    """What every adapter module provides: `build(root)` reads the copy at `root`."""

    def build(self, root: Path) -> DatasetTask:
        """The task family's cases; AdapterError when the layout is not the expected one."""
        ...


ADAPTERS: Registry[Callable[[], Adapter]] = Registry("dataset")


def _module(name: str) -> Callable[[], Adapter]:
    return lambda: cast(Adapter, importlib.import_module(f"runner.benchmark.agentbench.adapters.{name}"))


for _name in ("bonn", "ds004504", "chbmit", "sleepedfx"):
    ADAPTERS.register(_name, _module(_name))


def get_adapter(name: str) -> Adapter:
    """The module of the dataset registered as `name`, imported now; UnknownName lists the known ones."""
    return ADAPTERS.get(name)()
