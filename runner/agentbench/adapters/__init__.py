"""Dataset adapters: a user's local copy of a public dataset, in its native layout, to the
cases of one EEGAgentBench task family. `ADAPTERS` maps the `--dataset` name to its module."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from runner.agentbench.adapters import bonn, chbmit, ds004504, sleepedfx
from runner.agentbench.adapters.base import DatasetTask


class Adapter(Protocol):
    """What every adapter module provides: `build(root)` reads the copy at `root`."""

    def build(self, root: Path) -> DatasetTask:
        """The task family's cases; AdapterError when the layout is not the expected one."""
        ...


ADAPTERS: dict[str, Adapter] = {"bonn": bonn, "ds004504": ds004504, "chbmit": chbmit, "sleepedfx": sleepedfx}
