"""Reading tool arguments that name shared_state entries: the object, or a ToolError naming the argument."""
from __future__ import annotations

from braintools.data import Epochs, Recording, Signal, Table
from braintools.errors import ToolError
from braintools.state import STATE


def recording(entry_id: str, argument: str = "recording") -> Recording:
    """The Recording registered as `entry_id`."""
    return STATE.get(entry_id, argument, (Recording,)).value  # type: ignore[no-any-return]


def signal(entry_id: str, argument: str = "source") -> Signal:
    """The Signal registered as `entry_id`."""
    return STATE.get(entry_id, argument, (Signal,)).value  # type: ignore[no-any-return]


def epochs(entry_id: str, argument: str = "epochs") -> Epochs:
    """The Epochs registered as `entry_id`."""
    return STATE.get(entry_id, argument, (Epochs,)).value  # type: ignore[no-any-return]


def table(entry_id: str, argument: str = "table") -> Table:
    """The Table (events, hypnogram, features) registered as `entry_id`."""
    return STATE.get(entry_id, argument, (Table,)).value  # type: ignore[no-any-return]


def result_value(entry_id: str, argument: str = "result") -> object:
    """The JSON value of the analysis result `entry_id`."""
    entry = STATE.get(entry_id, argument)
    if entry.branch != "results":
        raise ToolError("wrong_kind", f"{argument}: {entry_id} is a {entry.kind}, not an analysis result", argument=argument)
    return entry.value


def named_values(result_id: str, feature: str | None, argument: str = "result_id") -> dict[str, float]:
    """The numbers of a per-name result ({name: value} or {name: {feature: value}}), by name."""
    value = result_value(result_id, argument)
    if not isinstance(value, dict) or not value:
        raise ToolError("wrong_kind", f"{argument}: {result_id} is not a per-name result", argument=argument)
    out: dict[str, float] = {}
    for name, record in value.items():
        item = record.get(feature) if isinstance(record, dict) and feature is not None else record
        if isinstance(record, dict) and feature is None:
            raise ToolError("bad_argument", f"feature: {result_id} holds records; name one of {list(record)[:10]}", argument="feature")
        if not isinstance(item, (int, float)) or isinstance(item, bool):
            raise ToolError("bad_argument", f"feature: {name}'s {feature!r} is not a number", argument="feature")
        out[str(name)] = float(item)
    return out


def channel_indices(names: list[str], wanted: list[str] | None, argument: str = "channels") -> list[int]:
    """Indices of `wanted` in `names` (exact names first, then ignoring case, dots and spaces); all when None."""
    if wanted is None:
        return list(range(len(names)))
    folded = {_fold(n): i for i, n in reversed(list(enumerate(names)))}
    out = []
    for name in wanted:
        if name in names:
            out.append(names.index(name))
        elif _fold(name) in folded:
            out.append(folded[_fold(name)])
        else:
            shown = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
            raise ToolError("unknown_channel", f"{argument}: no channel {name!r}; channels: {shown}", argument=argument)
    return out


def _fold(name: str) -> str:
    return name.replace(".", "").replace(" ", "").lower()
