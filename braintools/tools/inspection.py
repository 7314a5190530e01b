"""Data inspection: what a file holds, a recording's channels and annotations, event and label tables."""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from braintools import paths, readers, refs
from braintools.data import Table
from braintools.errors import ToolError
from braintools.registry import New, result, tool


@tool("inspection")
def inspect_file(path: str) -> dict[str, object]:
    """Describe any input file without loading its signals: arrays and shapes, table columns, JSON keys.

    Parameters
    ----------
    path : str
        The input file, e.g. "/input/plux/recording.h5".
    """
    return {"file": readers.describe_file(paths.input_path(path))}


@tool("inspection")
def recording_info(recording: str) -> dict[str, object]:
    """Everything about a loaded recording: channel names and types, rate, length, annotations, stored facts.

    Parameters
    ----------
    recording : str
        Id of a recording (from load_recording).
    """
    rec = refs.recording(recording)
    labels = rec.annotations["description"].value_counts().head(30).to_dict() if len(rec.annotations) else {}
    return {"info": {**rec.describe(), "channels": [{"name": n, "type": t} for n, t in zip(rec.ch_names, rec.ch_types)],
                     "annotation_labels": labels, **rec.extra}}


@tool("inspection")
def read_annotations(recording: str) -> dict[str, object]:
    """The recording's annotations as an events table (onset_s from the recording's start, duration_s, label).

    Parameters
    ----------
    %(recording)s
    """
    rec = refs.recording(recording)
    frame = rec.annotations.rename(columns={"description": "label"}).reset_index(drop=True)
    return {"events": New("events", "evt", Table(frame, "events"))}


@tool("inspection")
def read_table(path: str, separator: Literal["auto", ",", "tab", ";", "whitespace"] = "auto",
               header: bool = True, column_names: list[str] | None = None,
               kind: Literal["table", "events", "hypnogram"] = "table") -> dict[str, object]:
    """Read a CSV/TSV/text table (events, labels, a hypnogram column) into a table.

    Parameters
    ----------
    path : str
        The input file.
    separator : str, optional
        Column separator; "auto" sniffs it.
    header : bool, optional
        Whether the first line names the columns.
    column_names : list of str, optional
        Names for the columns (when there is no header, or to rename them in order).
    kind : str, optional
        What the table holds; events tables should have an onset column.
    """
    file = paths.input_path(path)
    sep = {"auto": None, "tab": "\t", "whitespace": r"\s+"}.get(separator, separator)
    frame = pd.read_csv(file, sep=sep, engine="python", header=0 if header else None, encoding="utf-8-sig")
    if column_names:
        if len(column_names) > frame.shape[1]:
            raise ToolError("bad_argument", f"column_names: {len(column_names)} names for {frame.shape[1]} columns", argument="column_names")
        frame.columns = list(column_names) + [str(c) for c in frame.columns[len(column_names):]]
    frame.columns = [str(c) for c in frame.columns]
    if kind == "hypnogram":
        return {"table": New("labels", "lab", Table(frame, kind))}
    return {"table": New("events", "evt", Table(frame, kind))}


@tool("inspection")
def find_stim_events(recording: str, stim_channel: str, shortest_event: int = 1,
                     consecutive: bool = False, min_duration_s: float = 0.0) -> dict[str, object]:
    """Events from a stimulus (trigger) channel, as mne.find_events finds them (onset at the rising edge).

    Parameters
    ----------
    recording : str
        Id of a recording read by MNE (FIF, EDF, ...).
    stim_channel : str
        Name of the trigger channel, e.g. "STI 014".
    shortest_event : int, optional
        Minimum number of samples an event must last (mne.find_events).
    consecutive : bool, optional
        Whether a change between two non-zero values starts a new event (mne.find_events).
    min_duration_s : float, optional
        Minimum duration of an event in seconds (mne.find_events).
    """
    import mne

    rec = refs.recording(recording)
    if rec.raw is None:
        raise ToolError("unsupported", "recording: find_stim_events needs a file MNE reads", argument="recording")
    refs.channel_indices(rec.ch_names, [stim_channel], "stim_channel")
    events = mne.find_events(rec.raw, stim_channel=stim_channel, shortest_event=shortest_event, consecutive=consecutive,
                             min_duration=min_duration_s, verbose="ERROR")
    samples = events[:, 0] - rec.raw.first_samp
    frame = pd.DataFrame({"onset_s": samples / rec.sfreq, "sample": samples, "duration_s": 0.0,
                          "label": [str(v) for v in events[:, 2]], "value": events[:, 2]})
    return {"events": New("events", "evt", Table(frame, "events"))}


@tool("inspection")
def check_request(recording: str, channels: list[str] | None = None, start_s: float | None = None,
                  end_s: float | None = None, window_s: list[float] | None = None) -> dict[str, object]:
    """Whether a requested analysis is possible: do the channels exist (exact names), is the window inside the data?

    The window must satisfy 0 <= start < end <= duration (samples / rate). "reason" is "ok",
    "unknown_channel" or "window_out_of_range" (channels are checked first). "usable" is the
    nearest request the data allow (existing channels, the window clipped to the recording,
    the whole recording when nothing of it is inside), so a pipeline can run on either way.

    Parameters
    ----------
    %(recording)s
    channels : list of str, optional
        Channel names the request names.
    start_s : float, optional
        Window start in seconds.
    end_s : float, optional
        Window end in seconds.
    %(window_s)s
    """
    rec = refs.recording(recording)
    if window_s is not None:
        if len(window_s) != 2:
            raise ToolError("bad_argument", "window_s: expected [start_s, end_s]", argument="window_s")
        start_s, end_s = window_s
    missing = [c for c in channels or [] if c not in rec.ch_names]
    problems = [f"unknown channel {c!r}" for c in missing]
    bad_window = start_s is not None and end_s is not None and (start_s < 0 or end_s > rec.duration_s or end_s <= start_s)
    if bad_window:
        problems.append(f"window {start_s}-{end_s} s is outside the recording (0-{rec.duration_s:g} s) or empty")
    reason = "unknown_channel" if missing else "window_out_of_range" if bad_window else "ok"
    return {"check": result("request_check", {"feasible": not problems, "reason": reason, "problems": problems,
                                              "missing_channels": missing, "duration_s": rec.duration_s,
                                              "usable": _usable(rec.ch_names, rec.duration_s, channels, start_s, end_s)})}


def _usable(names: list[str], duration: float, channels: list[str] | None, start_s: float | None,
            end_s: float | None) -> dict[str, object]:
    kept = [c for c in channels or names if c in names] or names[:1]
    start = min(max(start_s if start_s is not None else 0.0, 0.0), duration)
    end = min(max(end_s if end_s is not None else duration, 0.0), duration)
    if end <= start:
        start, end = 0.0, duration
    return {"channels": kept, "start_s": start, "end_s": end}


@tool("inspection")
def table_values(table: str, column: str, where_column: str | None = None, equals: str | None = None,
                 max_values: int = 500) -> dict[str, object]:
    """One column of a table (optionally only the rows where another column equals a value).

    Parameters
    ----------
    table : str
        Id of a table (events, hypnogram, features).
    column : str
        The column to return.
    where_column : str, optional
        Keep only rows where this column ...
    equals : str, optional
        ... equals this value (compared as text).
    max_values : int, optional
        At most this many values are returned.
    """
    frame = refs.table(table).frame
    for name in (column, where_column):
        if name is not None and name not in frame.columns:
            raise ToolError("bad_argument", f"no column {name!r}; columns: {list(frame.columns)}", argument="column")
    if where_column is not None:
        frame = frame[frame[where_column].astype(str) == str(equals)]
    values = frame[column].tolist()
    return {"values": result("column", values[:max_values], n_rows=len(values), truncated=len(values) > max_values,
                             unique=len(set(map(str, values))) if values else 0,
                             **({"sum": float(np.nansum(pd.to_numeric(frame[column], errors="coerce")))} if len(values) else {}))}
