"""The transformations that make a leak-resistant variant of an instance.

Each takes the instance's inputs (relative path -> bytes), its binding params, the task's
`VariantRules` and a numpy Generator, and returns a `Derived`: the transformed inputs (same
keys), the params carried along (channel names renamed, times shifted) and a JSON-typed
record of what was done, for the variant instance. The reference script then recomputes the
ground truth on the derived inputs. Same inputs and same Generator state give the same
bytes; inputs are visited in sorted path order so the draws do not depend on dict order.

Inputs understood: EDF/EDF+ files (``.edf``, edited by `edf_edit`) and BIDS events files
(``*_events.tsv``, whose onset/sample columns follow a time offset). Any other input
(.fif, .h5, .csv, .pkl, .npy, .json, .bdf, other .tsv) makes every transformation raise
`VariantError`, since its recording could not be transformed consistently.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from runner.benchmark.agentbench.edf import EdfError
from runner.benchmark.variants import edf_edit
from runner.benchmark.variants.edf_edit import Edf
from runner.benchmark.variants.rules import TRANSFORMS, VariantRules
from validation.errors import UserError

OFFSET_RANGE_S = (5, 60)  # time_offset: whole seconds prepended, drawn in this range
SHIFT_RANGE_S = 10  # shift_window: whole seconds, drawn from +-1..this
SNR_CHOICES_DB = (10.0, 20.0, 30.0)
# Type prefixes of EDF labels ("EOG EOG1"); rename_channels keeps the type visible.
_KIND_PREFIXES = ("EEG", "EOG", "EMG", "ECG", "EKG", "RESP", "POL")
_UNIT_CHANGES = {"uV": ("mV", 1e-3), "\u00b5V": ("mV", 1e-3), "mV": ("uV", 1e3), "V": ("mV", 1e3)}

Json = dict[str, Any]


class VariantError(UserError):
    """A transformation cannot apply to this instance; the message says which input or param."""


@dataclass(frozen=True)
class Derived:
    """An instance's inputs and params after one transformation, and what was done."""

    inputs: dict[str, bytes]  # same keys as the original inputs, transformed bytes
    params: dict[str, Any]  # binding params carried along
    record: dict[str, Any]  # JSON types only: {"transform": name, ...}


Transform = Callable[[dict[str, bytes], dict[str, Any], VariantRules, np.random.Generator], Derived]


def apply(name: str, inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
          rng: np.random.Generator) -> Derived:
    """Transformation `name` of one instance; VariantError when it is unknown, declared
    unsafe for the task, or cannot apply to these inputs and params."""
    if name not in TRANSFORMS:
        raise VariantError(f"unknown transformation {name!r}; known: {', '.join(TRANSFORMS)}")
    if name in rules.unsafe:
        raise VariantError(f"{name} is declared unsafe for this task: {rules.unsafe[name]}")
    try:
        return TRANSFORM_FUNCTIONS[name](inputs, params, rules, rng)
    except EdfError as exc:
        raise VariantError(f"{name}: {exc}") from exc


# --- the transformations ----------------------------------------------------------------


def permute_channels(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
                     rng: np.random.Generator) -> Derived:
    """Every EDF's ordinary signals in a random order (never the original one; annotation
    signals stay last). Params unchanged: channels are found by name."""
    out, orders = dict(inputs), {}
    for path, edf in _edfs(inputs, "permute_channels"):
        if len(edf.ordinary) < 2:
            raise VariantError(f"permute_channels: {path} has fewer than two signals to permute")
        perm = rng.permutation(len(edf.ordinary))
        if np.array_equal(perm, np.arange(perm.size)):
            perm = np.roll(perm, 1)  # the identity would make no variant
        edf = edf_edit.reorder(edf, [edf.ordinary[i] for i in perm])
        out[path] = edf_edit.to_bytes(edf)
        orders[path] = [edf.signals[i].name for i in edf.ordinary]
    return Derived(out, copy.deepcopy(params), {"transform": "permute_channels", "order": orders})


def rename_channels(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
                    rng: np.random.Generator) -> Derived:
    """Every EDF signal renamed by `renamed` (an equivalent, non-standard spelling) and every
    channel param string naming a signal renamed alike. Events files are unchanged."""
    out, names = dict(inputs), {}
    for path, edf in _edfs(inputs, "rename_channels"):
        mapping = {edf.signals[i].name: renamed(edf.signals[i].name) for i in edf.ordinary}
        clash = set(mapping.values()) & {s.name for s in edf.signals}
        if clash:
            raise VariantError(f"rename_channels: {path}: new names {sorted(clash)} are existing labels")
        out[path] = edf_edit.to_bytes(edf_edit.relabel(edf, mapping))
        names.update(mapping)
    new_params, unmapped = copy.deepcopy(params), list[str]()
    for key in _declared(params, rules.channel_params, "channel_params", "rename_channels"):
        new_params[key] = _map_strings(params[key], names, unmapped)
    record = {"transform": "rename_channels", "names": names, "unmapped_params": sorted(set(unmapped))}
    return Derived(out, new_params, record)


def time_offset(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
                rng: np.random.Generator) -> Derived:
    """d seconds (whole data records, drawn in OFFSET_RANGE_S) copied from each EDF's start
    and put before it; time params, EDF+ annotations and events-file onset/sample move later
    by d, so every value computed on the shifted times is unchanged."""
    edfs = dict(_edfs(inputs, "time_offset"))
    choices = _offset_choices(edfs)
    if not choices:
        raise VariantError("time_offset: no whole-second offset in "
                           f"{OFFSET_RANGE_S[0]}-{OFFSET_RANGE_S[1]} s is a whole number of data records "
                           f"of every EDF input ({_durations(edfs)})")
    offset = int(rng.choice(choices))
    out, prepended = dict(inputs), {}
    for path, edf in edfs.items():
        prepended[path] = int(round(offset / edf.record_duration_s))
        out[path] = edf_edit.to_bytes(edf_edit.prepend_records(edf, prepended[path]))
    for path in _events(inputs):
        fs = _matching_edf(path, edfs).sfreq
        out[path] = _shift_events(path, inputs[path], offset, int(round(offset * fs)))
    new_params = _shift_params(params, rules, offset, "time_offset")
    return Derived(out, new_params, {"transform": "time_offset", "offset_s": offset,
                                     "records_prepended": prepended})


def unit_change(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
                rng: np.random.Generator) -> Derived:
    """Every voltage signal declared in another unit (uV -> mV, mV -> uV, V -> mV) with its
    physical range rescaled, so the volts MNE reads are unchanged. Other units stay."""
    out, changes = dict(inputs), {}
    for path, edf in _edfs(inputs, "unit_change"):
        counts: dict[str, int] = {}
        for i in edf.ordinary:
            unit = edf.signals[i].dimension.strip()
            if unit in _UNIT_CHANGES:
                new_unit, factor = _UNIT_CHANGES[unit]
                edf = edf_edit.rescale_unit(edf, i, new_unit, factor)
                counts[f"{unit}->{new_unit}"] = counts.get(f"{unit}->{new_unit}", 0) + 1
        if not counts:
            raise VariantError(f"unit_change: {path} has no signal in uV, mV or V")
        out[path], changes[path] = edf_edit.to_bytes(edf), counts
    return Derived(out, copy.deepcopy(params), {"transform": "unit_change", "units": changes})


def polarity(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
             rng: np.random.Generator) -> Derived:
    """Every ordinary signal negated through its header (physical range negated); EDF+
    annotation signals untouched."""
    out, negated = dict(inputs), {}
    for path, edf in _edfs(inputs, "polarity"):
        for i in edf.ordinary:
            edf = edf_edit.negate(edf, i)
        out[path], negated[path] = edf_edit.to_bytes(edf), len(edf.ordinary)
    return Derived(out, copy.deepcopy(params), {"transform": "polarity", "signals_negated": negated})


def noise(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
          rng: np.random.Generator) -> Derived:
    """Gaussian white noise added to every ordinary signal at one SNR drawn from
    SNR_CHOICES_DB (relative to the signal's own power about its mean), re-encoded with
    clipping. The noise comes from a recorded seed, so the record alone reproduces it."""
    snr_db = float(rng.choice(SNR_CHOICES_DB))
    noise_seed = int(rng.integers(2**32))
    source = np.random.default_rng(noise_seed)
    out, clipped, flat = dict(inputs), {}, []
    for path, edf in _edfs(inputs, "noise"):
        clipped[path] = 0
        for i in edf.ordinary:
            added = _noise_for(path, edf, i, snr_db, source)
            if added is None:
                flat.append(f"{path}:{edf.signals[i].name}")
                continue
            edf, count = edf_edit.add_physical(edf, i, added)
            clipped[path] += count
        out[path] = edf_edit.to_bytes(edf)
    record = {"transform": "noise", "snr_db": snr_db, "noise_seed": noise_seed,
              "clipped_samples": clipped, "flat_signals_skipped": flat}
    return Derived(out, copy.deepcopy(params), record)


def shift_window(inputs: dict[str, bytes], params: dict[str, Any], rules: VariantRules,
                 rng: np.random.Generator) -> Derived:
    """Inputs unchanged; every time param moved by one whole-second delta drawn from
    +-1..SHIFT_RANGE_S among those keeping all times (and start + a length param) inside the
    shortest EDF input. The answer changes: the reference recomputes it on the new window."""
    if not rules.time_params:
        raise VariantError("shift_window: the task declares no time_params to shift")
    duration = min(edf.duration_s for _, edf in _edfs(inputs, "shift_window"))
    times = [t for key in _declared(params, rules.time_params, "time_params", "shift_window")
             for t in _numbers(params[key], key)]
    extent = max([float(params[k]) for k in rules.length_params if _is_number(params.get(k))], default=0.0)
    deltas = [d for d in range(-SHIFT_RANGE_S, SHIFT_RANGE_S + 1)
              if d and all(0 <= t + d and t + d + extent <= duration for t in times)]
    if not deltas:
        raise VariantError(f"shift_window: no shift of 1-{SHIFT_RANGE_S} s keeps the times {times}"
                           f"{f' (plus length {extent:g} s)' if extent else ''} inside the {duration:g}-s "
                           "recording")
    delta = int(rng.choice(deltas))
    new_params = _shift_params(params, rules, delta, "shift_window")
    return Derived(dict(inputs), new_params, {"transform": "shift_window", "shift_s": delta})


TRANSFORM_FUNCTIONS: dict[str, Transform] = {
    "permute_channels": permute_channels, "rename_channels": rename_channels,
    "time_offset": time_offset, "unit_change": unit_change, "polarity": polarity,
    "noise": noise, "shift_window": shift_window}


def renamed(label: str) -> str:
    """An equivalent but non-standard spelling of an EDF label, from its core name (padding
    dots, a type prefix and a -REF suffix stripped): 'O1..' -> 'EEG O1-Ref',
    'EEG F3' -> 'F3-REF', 'EOG EOG1' -> 'EOG-EOG1'. The first candidate that fits EDF's 16
    characters and differs from the label wins; VariantError when none does."""
    core = label.strip().rstrip(".").strip()
    kind = None
    head, _, rest = core.partition(" ")
    if head.upper() in _KIND_PREFIXES and rest.strip():
        kind, core = head, rest.strip()
    if core.upper().endswith("-REF"):
        core = core[:-4]
    if kind is None:
        candidates = [f"EEG {core}-Ref", f"{core}-Ref", f"EEG {core}"]
    elif kind.upper() == "EEG":
        candidates = [f"{core}-REF", f"{core}-Ref", core]
    else:
        candidates = [f"{kind}-{core}", f"{kind}_{core}"]
    for candidate in candidates:
        if len(candidate) <= 16 and candidate != label.strip():
            return candidate
    raise VariantError(f"rename_channels: no equivalent name within 16 characters for {label!r}")


# --- inputs -------------------------------------------------------------------------------


def _kind(path: str) -> str:
    """'edf', 'events' or 'other' by file name."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(".edf"):
        return "edf"
    if name.endswith("_events.tsv"):
        return "events"
    return "other"


def _edfs(inputs: dict[str, bytes], transform: str) -> Iterator[tuple[str, Edf]]:
    """The parsed EDF inputs in sorted path order; VariantError when an input is of a format
    the transformations do not know, or there is no EDF."""
    unknown = sorted(p for p in inputs if _kind(p) == "other")
    if unknown:
        raise VariantError(f"{transform}: cannot transform input {unknown[0]} (only EDF/EDF+ .edf "
                           "recordings and BIDS *_events.tsv files are handled)")
    paths = sorted(p for p in inputs if _kind(p) == "edf")
    if not paths:
        raise VariantError(f"{transform}: no EDF input among {sorted(inputs)}")
    for path in paths:
        yield path, edf_edit.parse(inputs[path], path)


def _events(inputs: dict[str, bytes]) -> list[str]:
    return sorted(p for p in inputs if _kind(p) == "events")


def _matching_edf(events_path: str, edfs: dict[str, Edf]) -> Edf:
    """The EDF an events file belongs to: the only EDF, or the one sharing its BIDS entities
    ('sub-s01_task-faceO_events.tsv' <-> 'sub-s01_task-faceO_eeg.edf')."""
    if len(edfs) == 1:
        return next(iter(edfs.values()))
    stem = events_path[: -len("_events.tsv")]
    matches = [edf for path, edf in edfs.items() if path.rpartition("_")[0] == stem]
    if len(matches) != 1:
        raise VariantError(f"time_offset: cannot tell which EDF input {events_path} belongs to "
                           f"(its sampling rate converts the sample column)")
    return matches[0]


def _shift_events(path: str, data: bytes, offset_s: int, offset_samples: int) -> bytes:
    """A BIDS events.tsv with onset + offset_s and sample + offset_samples; every other byte
    (BOM, columns, line ends, 'n/a') kept."""
    lines = data.decode("utf-8").splitlines(keepends=True)
    if not lines:
        raise VariantError(f"time_offset: {path} is empty")
    columns = [c.strip().lstrip("\ufeff") for c in lines[0].rstrip("\r\n").split("\t")]
    if "onset" not in columns:
        raise VariantError(f"time_offset: {path} has no onset column")
    shifts = {columns.index("onset"): offset_s}
    if "sample" in columns:
        shifts[columns.index("sample")] = offset_samples
    body = [lines[0]] + [_shift_row(path, line, shifts) for line in lines[1:]]
    return "".join(body).encode("utf-8")


def _shift_row(path: str, line: str, shifts: dict[int, int]) -> str:
    text = line.rstrip("\r\n")
    if not text.strip():
        return line
    cells = text.split("\t")
    for column, by in shifts.items():
        if column < len(cells) and cells[column].strip() != "n/a":
            cells[column] = _decimal_add(cells[column], by, path)
    return "\t".join(cells) + line[len(text):]


def _decimal_add(text: str, by: int, where: str) -> str:
    """`text` + `by` in decimal arithmetic, so '0.48828125' + 12 is '12.48828125' exactly."""
    try:
        return f"{Decimal(text.strip()) + by:f}"
    except ArithmeticError as exc:
        raise VariantError(f"time_offset: {where}: {text!r} is not a number") from exc


def _offset_choices(edfs: dict[str, Edf]) -> list[int]:
    """Whole seconds in OFFSET_RANGE_S that are whole records of, and no longer than, every EDF."""
    choices = []
    for seconds in range(OFFSET_RANGE_S[0], OFFSET_RANGE_S[1] + 1):
        fits = all(abs(seconds / e.record_duration_s - round(seconds / e.record_duration_s)) < 1e-9
                   and seconds <= e.duration_s for e in edfs.values())
        if fits:
            choices.append(seconds)
    return choices


def _durations(edfs: dict[str, Edf]) -> str:
    return ", ".join(f"{p}: {e.n_records} records of {e.record_duration_s:g} s" for p, e in edfs.items())


def _noise_for(path: str, edf: Edf, index: int, snr_db: float,
               source: np.random.Generator) -> edf_edit.Floats | None:
    """White noise for signal `index` at `snr_db`, None for a flat signal. Re-encoding adds
    its own rounding error (variance step^2/12 once the noise spans several steps), so the
    drawn noise is that much weaker and the file's measured SNR is the stated one."""
    x = edf.physical(index)
    power = float(np.mean((x - x.mean()) ** 2))
    if power == 0:
        return None
    rounding = edf.gain(index) ** 2 / 12
    target = power / 10 ** (snr_db / 10)
    if target <= rounding:
        raise VariantError(f"noise: {path}: signal {edf.signals[index].name!r} is too close to its "
                           f"quantisation step for an SNR of {snr_db:g} dB")
    drawn: edf_edit.Floats = source.standard_normal(x.size) * np.sqrt(target - rounding)
    return drawn


# --- params -------------------------------------------------------------------------------


def _declared(params: dict[str, Any], keys: list[str], field: str, transform: str) -> list[str]:
    """The declared keys, all present in params (a key missing means the declaration and the
    instance disagree, which must not pass silently)."""
    missing = [k for k in keys if k not in params]
    if missing:
        raise VariantError(f"{transform}: variants.{field} names {missing}, absent from the params "
                           f"{sorted(params)}")
    return list(keys)


def _map_strings(value: Any, names: dict[str, str], unmapped: list[str]) -> Any:
    """`value` (a str or nested lists) with every string naming a signal renamed."""
    if isinstance(value, str):
        if value not in names:
            unmapped.append(value)
        return names.get(value, value)
    if isinstance(value, list):
        return [_map_strings(v, names, unmapped) for v in value]
    return value


def _shift_params(params: dict[str, Any], rules: VariantRules, by: int, transform: str) -> dict[str, Any]:
    shifted = copy.deepcopy(params)
    for key in _declared(params, rules.time_params, "time_params", transform):
        shifted[key] = _shift_value(params[key], by, key, transform)
    return shifted


def _shift_value(value: Any, by: int, key: str, transform: str) -> Any:
    """A number (or nested lists of numbers) + `by` seconds; ints stay ints, floats are added
    in decimal so 0.1 + 12 is 12.1; None (an unset optional time) stays None."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_shift_value(v, by, key, transform) for v in value]
    if not _is_number(value):
        raise VariantError(f"{transform}: time param {key!r} holds {value!r}, not seconds")
    if isinstance(value, int):
        return value + by
    return float(Decimal(repr(value)) + by)


def _numbers(value: Any, key: str) -> list[float]:
    """The numbers of a time param (nested lists flattened; None skipped)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v, key)]
    if not _is_number(value):
        raise VariantError(f"shift_window: time param {key!r} holds {value!r}, not seconds")
    return [float(value)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
