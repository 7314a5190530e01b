"""Tools 1-2: a recording's metadata and its channel list."""
from __future__ import annotations

import re

from eegtools.budget import DEFAULT_BUDGET_TOKENS, check_budget
from eegtools.tools._common import RecordLike, ToolResult, _longest, _name, _open, _sig

# --- 1-2: metadata ----------------------------------------------------------------------


def get_recording_info(record: RecordLike, *, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS) -> ToolResult:
    """Sampling rate, duration, sample and channel counts, channel types, annotations.

    Parameters
    ----------
    %(record)s
    budget_tokens : int or None, optional
        Accepted for a uniform interface; this result is small and never refused.

    Returns
    -------
    dict
        ``record`` (file name), ``sampling_rate_hz``, ``duration_s``, ``n_samples``,
        ``n_channels``, ``channel_types`` ({type: count}), ``meas_date`` (ISO 8601 or None),
        ``n_annotations``.

    Raises
    ------
    ToolError
        ``bad_argument`` when the file cannot be read, ``unsupported`` when its format is not.
    """
    rec = _open(record)
    types: dict[str, int] = {}
    for t in rec.ch_types:
        types[t] = types.get(t, 0) + 1
    return {
        "record": _name(rec),
        "sampling_rate_hz": rec.sfreq,
        "duration_s": _sig(rec.duration_s, 8),
        "n_samples": rec.n_samples,
        "n_channels": len(rec.ch_names),
        "channel_types": types,
        "meas_date": rec.meas_date,
        "n_annotations": rec.n_annotations,
    }


DIGITS = re.compile(r"\d+")


_ELECTRODE = re.compile(r"^(fp|af|f|ft|fc|t|tp|c|cp|p|po|o|a|m|i|n)(\d+|z)$", re.IGNORECASE)


def hemisphere(name: str) -> str:
    """10-20 convention: odd numbers left, even right, 'z' midline. The last word counts
    ("EEG F3" -> F3); a bipolar derivation's electrodes must agree; else "unknown"."""
    words = name.strip(" .").split()
    if not words:
        return "unknown"
    sides = set()
    for part in words[-1].split("-"):
        match = _ELECTRODE.match(part.strip("."))
        if match is None:
            return "unknown"
        label = match.group(2)
        sides.add("midline" if label.lower() == "z" else ("left" if int(label) % 2 else "right"))
    return sides.pop() if len(sides) == 1 else "unknown"


def get_channel_list(record: RecordLike, *, budget_tokens: int | None = DEFAULT_BUDGET_TOKENS) -> ToolResult:
    """Channel names, types (as the file declares them) and hemisphere by the 10-20 rule.

    Parameters
    ----------
    %(record)s
    %(budget_tokens)s

    Returns
    -------
    dict
        ``record``, ``n_channels``, ``channels``: [{``name``, ``type``, ``hemisphere``}] with
        hemisphere one of left, right, midline, unknown.

    Raises
    ------
    ToolError
        ``budget_exceeded`` for a channel list over the budget; ``bad_argument`` or
        ``unsupported`` when the file cannot be read.
    """
    rec = _open(record)
    sample = {"name": _longest(rec, list(range(len(rec.ch_names)))), "type": "misc", "hemisphere": "midline"}
    check_budget("get_channel_list", len(rec.ch_names), sample, budget_tokens, f"{len(rec.ch_names)} channels")
    return {
        "record": _name(rec),
        "n_channels": len(rec.ch_names),
        "channels": [
            {"name": n, "type": t, "hemisphere": hemisphere(n)} for n, t in zip(rec.ch_names, rec.ch_types)
        ],
    }
