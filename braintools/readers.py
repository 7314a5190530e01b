"""Reading input files into Recordings: MNE's formats, NumPy arrays, pickles and HDF5.

MNE's readers are lazy (channels are read when a tool picks them); array formats are held
in memory. Voltage channels are returned in microvolts: MNE's volts times 1e6, arrays as
stored unless the caller gives a scale.
"""
from __future__ import annotations

import fnmatch
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from braintools.data import Recording
from braintools.errors import ToolError

MNE_SUFFIXES = (".edf", ".bdf", ".fif", ".fif.gz", ".set", ".vhdr", ".gdf")
ARRAY_SUFFIXES = (".npy", ".pkl", ".pickle", ".h5", ".hdf5")
MNE_VOLTS = ("eeg", "eog", "emg", "ecg", "seeg", "ecog", "dbs", "bio")


def read_mne(path: Path, shown: str) -> Recording:
    """An MNE-readable file, lazily: channel data are read when picked."""
    import mne

    raw = mne.io.read_raw(path, preload=False, verbose="ERROR")
    types = raw.get_channel_types()
    scale = np.array([1e6 if t in MNE_VOLTS else 1.0 for t in types])

    def read(picks: list[int], start: int, stop: int) -> np.ndarray:
        return np.asarray(raw.get_data(picks=picks, start=start, stop=stop) * scale[picks, None])

    ann = raw.annotations
    shift = raw.first_time if ann.orig_time is not None else 0.0  # onsets from the first sample
    frame = pd.DataFrame({"onset_s": np.asarray(ann.onset, float) - shift,
                          "duration_s": np.asarray(ann.duration, float), "description": list(ann.description)})
    extra: dict[str, Any] = {
        "first_samp": int(raw.first_samp),
        "n_projectors": len(raw.info["projs"]),
        "bads": list(raw.info["bads"]),
        "highpass_hz": raw.info["highpass"], "lowpass_hz": raw.info["lowpass"],
        "meas_date": str(raw.info["meas_date"]) if raw.info["meas_date"] else None,
    }
    return Recording(shown, path.suffix.lstrip(".").lower(), float(raw.info["sfreq"]), list(raw.ch_names), types,
                     int(raw.n_times), read, frame, extra, raw)


def read_arrays(path: Path, shown: str, sfreq: float, keys: list[str] | None, ch_names: list[str] | None,
                layout: str, scale: float, ch_type: str) -> Recording:
    """A NumPy, pickle or HDF5 file: `keys` name the arrays (one 2-D array, or one 1-D array per channel).

    HDF5 keys may be glob patterns ("*/raw/channel_*"), each standing for every dataset it matches in
    file order; integer data are cast to float64 before any arithmetic.
    """
    arrays, names = _arrays(path, keys)
    if len(arrays) == 1 and arrays[0].ndim == 2:
        data = arrays[0] if layout == "channels_x_samples" else arrays[0].T
    else:
        data = np.vstack([np.asarray(a, dtype=float).reshape(-1) for a in arrays])
    data = np.asarray(data, dtype=float) * scale
    n_ch = data.shape[0]
    chosen = ch_names or names or [f"ch{i + 1}" for i in range(n_ch)]
    if len(chosen) != n_ch:
        raise ToolError("bad_argument", f"ch_names: {len(chosen)} names for {n_ch} channels", argument="ch_names")

    def read(picks: list[int], start: int, stop: int) -> np.ndarray:
        return data[picks, start:stop].copy()

    empty = pd.DataFrame({"onset_s": [], "duration_s": [], "description": []})
    return Recording(shown, path.suffix.lstrip(".").lower(), float(sfreq), list(chosen), [ch_type] * n_ch,
                     int(data.shape[1]), read, empty, {"arrays": keys or []})


def _arrays(path: Path, keys: list[str] | None) -> tuple[list[np.ndarray], list[str] | None]:
    name = path.name.lower()
    if name.endswith(".npy"):
        return [np.load(path, allow_pickle=False)], _sidecar_names(path)
    if name.endswith((".h5", ".hdf5")):
        return _h5_arrays(path, keys), None
    with path.open("rb") as handle:
        obj = pickle.load(handle)  # noqa: S301  (inputs are the benchmark's own files)
    return _pickle_arrays(obj, keys)


def _h5_arrays(path: Path, keys: list[str] | None) -> list[np.ndarray]:
    import h5py  # type: ignore[import-untyped]

    if not keys:
        raise ToolError("bad_argument", "keys: name the HDF5 datasets to read (see inspect_file)", argument="keys")
    with h5py.File(path, "r") as handle:
        out = []
        for key in _h5_keys(handle, keys, path.name):
            out.append(np.asarray(handle[key][...], dtype=float))  # cast first: integer ADC data wrap on diff
    return out


def _h5_keys(handle: Any, keys: list[str], shown: str) -> list[str]:
    """Dataset paths named by `keys`: exact paths, or glob patterns ("*/raw/channel_*") matching datasets."""
    found: list[str] = []
    handle.visititems(lambda name, obj: found.append(name) if hasattr(obj, "shape") else None)
    out: list[str] = []
    for key in keys:
        if any(c in key for c in "*?["):
            matches = [name for name in found if fnmatch.fnmatchcase(name, key)]
            if not matches:
                raise ToolError("bad_argument", f"keys: no dataset in {shown} matches {key!r}", argument="keys")
            out += matches
        elif key in handle and hasattr(handle[key], "shape"):
            out.append(key)
        else:
            raise ToolError("bad_argument", f"keys: no dataset {key!r} in {shown}", argument="keys")
    return out


def _pickle_arrays(obj: Any, keys: list[str] | None) -> tuple[list[np.ndarray], list[str] | None]:
    if isinstance(obj, (list, tuple)):
        arrays = [np.asarray(o) for o in obj if isinstance(o, np.ndarray)]
        names = next((list(o) for o in obj if isinstance(o, list) and all(isinstance(x, str) for x in o)), None)
        if keys:
            arrays = [np.asarray(obj[int(k)]) for k in keys]
        if len(arrays) != 1 and not keys:
            raise ToolError("bad_argument", "keys: the pickle holds several arrays; give their indices", argument="keys")
        return arrays, names
    if isinstance(obj, dict):
        if not keys:
            raise ToolError("bad_argument", f"keys: the pickle is a dict; name its array keys (one of {list(obj)[:10]})", argument="keys")
        missing = [k for k in keys if k not in obj]
        if missing:
            raise ToolError("bad_argument", f"keys: {missing} not in the pickle (keys: {list(obj)[:10]})", argument="keys")
        names = obj.get("ch_names") if isinstance(obj.get("ch_names"), list) else None
        return [np.asarray(obj[k]) for k in keys], names
    if isinstance(obj, np.ndarray):
        return [obj], None
    raise ToolError("unsupported", f"pickle holds a {type(obj).__name__}, not arrays", argument="path")


def _sidecar_names(path: Path) -> list[str] | None:
    for side in (path.with_suffix(path.suffix + ".json"), path.with_suffix(".json")):
        if side.is_file():
            try:
                names = json.loads(side.read_text()).get("ch_names")
            except (ValueError, AttributeError):
                return None
            return list(names) if isinstance(names, list) else None
    return None


def describe_file(path: Path) -> dict[str, Any]:
    """What a file holds, without reading its data: arrays and their shapes, table columns, JSON keys."""
    name = path.name.lower()
    probes: dict[str, Callable[[Path], dict[str, Any]]] = {
        ".npy": _probe_npy, ".h5": _probe_h5, ".hdf5": _probe_h5, ".pkl": _probe_pickle, ".pickle": _probe_pickle,
        ".json": _probe_json, ".csv": _probe_table, ".tsv": _probe_table, ".txt": _probe_text,
    }
    for suffix, probe in probes.items():
        if name.endswith(suffix):
            return {"size_bytes": path.stat().st_size, **probe(path)}
    if name.endswith(MNE_SUFFIXES):
        return {"size_bytes": path.stat().st_size, "format": "mne", "hint": "use load_recording"}
    return {"size_bytes": path.stat().st_size, "format": "unknown"}


def _probe_npy(path: Path) -> dict[str, Any]:
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return {"format": "npy", "shape": list(array.shape), "dtype": str(array.dtype), "sidecar_ch_names": _sidecar_names(path)}


def _probe_h5(path: Path) -> dict[str, Any]:
    import h5py

    found: list[dict[str, Any]] = []
    attrs: dict[str, Any] = {}
    with h5py.File(path, "r") as handle:
        def visit(name: str, obj: Any) -> None:
            if len(found) < 60 and hasattr(obj, "shape"):
                found.append({"key": name, "shape": list(obj.shape), "dtype": str(obj.dtype),
                              **{k: str(v)[:80] for k, v in list(obj.attrs.items())[:4]}})
        handle.visititems(visit)
        for group in handle.values():
            attrs = {k: str(v)[:200] for k, v in list(group.attrs.items())[:30]}
            break
    return {"format": "hdf5", "datasets": found, "top_group_attributes": attrs}


def _probe_pickle(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        obj = pickle.load(handle)  # noqa: S301
    return {"format": "pickle", "structure": _structure(obj)}


def _structure(obj: Any, depth: int = 0) -> Any:
    if isinstance(obj, np.ndarray):
        return f"ndarray{list(obj.shape)} {obj.dtype}"
    if depth > 2:
        return type(obj).__name__
    if isinstance(obj, dict):
        return {str(k): _structure(v, depth + 1) for k, v in list(obj.items())[:30]}
    if isinstance(obj, (list, tuple)):
        if obj and all(isinstance(x, (str, int, float)) for x in obj):
            return list(obj)[:40]
        return [_structure(v, depth + 1) for v in list(obj)[:10]]
    return repr(obj)[:300]


def _probe_json(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    return {"format": "json", "content": _structure(value) if not isinstance(value, dict) else
            {k: (v if len(json.dumps(v, default=str)) < 300 else _structure(v)) for k, v in list(value.items())[:40]}}


def _probe_table(path: Path) -> dict[str, Any]:
    frame = pd.read_csv(path, sep=None, engine="python", nrows=200)
    return {"format": "table", "columns": [str(c) for c in frame.columns], "first_rows": frame.head(5).astype(object).where(frame.head(5).notna(), None).to_dict(orient="records")}


def _probe_text(path: Path) -> dict[str, Any]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return {"format": "text", "n_lines": len(lines), "first_lines": [line[:200] for line in lines[:15]]}
