"""Dataset adapters: a user's local copy of a public dataset, in its native layout, to the
cases of one EEGAgentBench task family. `ADAPTERS` maps the `--dataset` name to its module."""
from __future__ import annotations

from runner.agentbench.adapters import bonn, chbmit, ds004504, sleepedfx

ADAPTERS = {"bonn": bonn, "ds004504": ds004504, "chbmit": chbmit, "sleepedfx": sleepedfx}
