"""The metric-unit registry: metric type name -> `Unit` (`UNITS`, one extensions.Registry).

Everything that needs the list of metric types reads it here, when it needs it: an instance's
metric `type` is validated against `UNITS`, scoring and the baselines `get()` the unit,
truth generation reads a unit's reference types and params rules, the ensembles and reports
read its other behaviour. Adding a metric type is one module defining a `Unit` and one
`UNITS.register(unit.name, unit)`.

The built-in units (BrainBench's and EEGAgentBench's) are registered by
validation.builtin_units, which validation.instance imports: a metric type to look up comes
from a MetricSpec, so whoever has one has the built-in units registered. Code that asks for a
unit by name without loading an instance imports validation.builtin_units itself.

A leaf module: it imports the Unit type, the errors and the registry type, nothing that
imports it back.
"""
from __future__ import annotations

from extensions.registry import Registry
from validation.errors import MetricConfigError
from validation.unit import Unit


def _unknown_type(name: str, known: tuple[str, ...]) -> Exception:
    expected = f"expected one of {known}" if known else "no unit is registered (import validation.builtin_units)"
    return MetricConfigError(f"unknown metric type {name!r}; {expected}")


UNITS: Registry[Unit] = Registry("metric type", unknown=_unknown_type)
