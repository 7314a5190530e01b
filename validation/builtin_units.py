"""The built-in metric units, registered once when this module is first imported.

BrainBench's vocabulary (the four deterministic units, the artifact check, the three judge
units) then EEGAgentBench's; this order is the order of `UNITS.names()`, which error
messages list. validation.instance imports this module, so any instance that loads is
validated against these units.
"""
from __future__ import annotations

from validation.agentbench.units import AGENTBENCH_UNITS
from validation.artifacts.check import FILE_STATUS_CHECK
from validation.judge import JUDGE_UNITS
from validation.unit import Unit
from validation.unit_registry import UNITS
from validation.units import DETERMINISTIC_UNITS

BUILTIN_UNITS: tuple[Unit, ...] = (*DETERMINISTIC_UNITS, FILE_STATUS_CHECK, *JUDGE_UNITS, *AGENTBENCH_UNITS)

for _unit in BUILTIN_UNITS:
    UNITS.register(_unit.name, _unit)
