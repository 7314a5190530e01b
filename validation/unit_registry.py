"""The metric-unit registry: metric type name -> `Unit`.

Everything that needs the list of metric types reads it here, when it needs it: an instance's
metric `type` is validated against `names()`, scoring and the baselines `get()` the unit,
truth generation reads a unit's reference types and params rules. Adding a metric type is
one `register(unit)`.

The built-in units (BrainBench's and EEGAgentBench's) are registered by
validation.builtin_units, which validation.instance imports: a metric type to look up comes
from a MetricSpec, so whoever has one has the built-in units registered. Code that asks for a
unit by name without loading an instance imports validation.builtin_units itself.

A leaf module: it imports the Unit type and the errors, nothing that imports it back.
"""
from __future__ import annotations

from validation.errors import MetricConfigError
from validation.unit import Unit

_UNITS: dict[str, Unit] = {}


def register(unit: Unit) -> Unit:
    """Add a unit under its name; registering a name twice is a bug and raises ValueError."""
    if unit.name in _UNITS:
        raise ValueError(f"metric unit {unit.name!r} is registered twice")
    _UNITS[unit.name] = unit
    return unit


def unregister(name: str) -> None:
    """Remove a unit (a test that registers a toy unit cleans up with this)."""
    _UNITS.pop(name, None)


def get(name: str) -> Unit:
    """The unit registered under `name`; MetricConfigError names the known types."""
    try:
        return _UNITS[name]
    except KeyError:
        known = f"expected one of {names()}" if _UNITS else "no unit is registered (import validation.builtin_units)"
        raise MetricConfigError(f"unknown metric type {name!r}; {known}") from None


def is_registered(name: str) -> bool:
    """Whether a unit is registered under `name`."""
    return name in _UNITS


def names() -> tuple[str, ...]:
    """The registered metric types, in registration order."""
    return tuple(_UNITS)


def units() -> tuple[Unit, ...]:
    """The registered units, in registration order."""
    return tuple(_UNITS.values())
