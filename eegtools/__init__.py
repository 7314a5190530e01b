"""eegtools: ten deterministic EEG analysis tools (EEGAgentBench §3.2).

Usable directly (hybrid mode: `import eegtools` inside the sandbox kernel) or through the
registry (tools mode: the controller validates the model's JSON arguments and calls them).

    import eegtools
    eegtools.get_recording_info("/input/eegmmidb/S001R02.edf")
    eegtools.compute_band_power("/input/eegmmidb/S001R02.edf", channels=["O1", "O2"], bands=["alpha"])
    eegtools.compute_windowed_features(path, channels=["C3"], window_s=30, features=["rms_uv", "delta_relative"])

Every tool takes `record` (a file path: EDF, BDF, FIF, SET, or .npy with a JSON sidecar giving
"sfreq") and keyword arguments; `channels` (default: all EEG channels; names match ignoring
case, dots and spaces), `start_s`/`end_s` (seconds). Results are JSON-serialisable dicts;
amplitudes in µV. A refused call raises `ToolError` with `.code` one of unknown_channel,
out_of_range, unsupported, bad_argument, budget_exceeded. An output budget (default 8,000
tokens, about 4 characters each; pass `budget_tokens=None` to lift it) refuses over-large
calls before computing. Recordings are cached in memory (LRU, keyed by path, mtime and size).

The tools: get_recording_info, get_channel_list, compute_noise_metrics, compute_power_spectrum,
compute_band_power, compute_time_features, compute_windowed_features, detect_transients,
compute_asymmetry, compute_channel_correlation. `help(eegtools.<tool>)` documents each.

`schemas()` gives their function-calling schemas, generated from each tool's signature and
numpydoc docstring (eegtools.schema); `schemas_sha256()` identifies that text for run records.
"""
from eegtools.budget import DEFAULT_BUDGET_TOKENS, estimate_tokens
from eegtools.errors import ERROR_CODES, ToolError
from eegtools.recording import Recording, cache_info, clear_cache, load_recording
from eegtools.registry import TOOLS, call_tool, schemas, schemas_sha256
from eegtools.tools import (
    BandName,
    RecordLike,
    ToolResult,
    WindowFeature,
    compute_asymmetry,
    compute_band_power,
    compute_channel_correlation,
    compute_noise_metrics,
    compute_power_spectrum,
    compute_time_features,
    compute_windowed_features,
    detect_transients,
    get_channel_list,
    get_recording_info,
)

__all__ = [
    "BandName", "DEFAULT_BUDGET_TOKENS", "ERROR_CODES", "RecordLike", "Recording", "TOOLS", "ToolError",
    "ToolResult", "WindowFeature", "cache_info", "call_tool", "clear_cache", "compute_asymmetry",
    "compute_band_power", "compute_channel_correlation", "compute_noise_metrics", "compute_power_spectrum",
    "compute_time_features", "compute_windowed_features", "detect_transients", "estimate_tokens",
    "get_channel_list", "get_recording_info", "load_recording", "schemas", "schemas_sha256",
]
