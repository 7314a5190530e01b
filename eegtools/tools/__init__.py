"""The ten deterministic EEG tools (EEGAgentBench §3.2). No classifiers, no labels.

Every tool takes `record` (a file path or a loaded Recording) and keyword arguments, checks
them, checks the output budget from the arguments alone, and only then computes. Results
are plain JSON-serialisable dicts; amplitudes are in µV, times in seconds from the start.
Refusals raise ToolError (see eegtools.errors).

Each tool's signature and numpydoc docstring are the single source of its function-calling
schema (eegtools.schema): annotations give the JSON types (``Literal`` for enumerations,
``Annotated[..., Minimum(x)]`` for bounds), the ``Parameters`` section the descriptions, and
the signature the defaults. A parameter with a default is typed ``..., optional`` in its
docstring and does not repeat the value there.

The tools, one module per family: metadata.py (1-2), quality.py (3), spectra.py (4-5),
time_features.py (6-7), transients.py (8), cross_channel.py (9-10); _common.py holds the
types their signatures use and the helpers they share.
"""
from __future__ import annotations

from eegtools.tools._common import (
    CHUNK_SAMPLES,
    DEFAULT_WINDOW_FEATURES,
    SPECTRAL_FEATURES,
    TIME_FEATURES,
    UV,
    WINDOW_FEATURES,
    Band,
    BandName,
    CorrelationMethod,
    Count,
    FloatArray,
    NonNegative,
    RecordLike,
    ToolResult,
    Transient,
    WindowFeature,
)
from eegtools.tools.cross_channel import compute_asymmetry, compute_channel_correlation, homologous_pairs
from eegtools.tools.metadata import get_channel_list, get_recording_info, hemisphere
from eegtools.tools.quality import compute_noise_metrics
from eegtools.tools.spectra import compute_band_power, compute_power_spectrum
from eegtools.tools.time_features import compute_time_features, compute_windowed_features
from eegtools.tools.transients import detect_transients

__all__ = [
    "CHUNK_SAMPLES", "DEFAULT_WINDOW_FEATURES", "SPECTRAL_FEATURES", "TIME_FEATURES", "UV", "WINDOW_FEATURES",
    "Band", "BandName", "CorrelationMethod", "Count", "FloatArray", "NonNegative", "RecordLike", "ToolResult",
    "Transient", "WindowFeature", "compute_asymmetry", "compute_band_power", "compute_channel_correlation",
    "compute_noise_metrics", "compute_power_spectrum", "compute_time_features", "compute_windowed_features",
    "detect_transients", "get_channel_list", "get_recording_info", "hemisphere", "homologous_pairs",
]
