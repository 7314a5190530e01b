"""The output budget refuses an over-large call before computing and names the row count."""
import json

import numpy as np
import pytest

import eegtools as T
from eegtools import ToolError, estimate_tokens, features
from eegtools.tools import cross_channel, spectra, time_features, transients
from tests.eegtools.conftest import synthetic

FS = 100.0


@pytest.fixture
def long_rec():
    rng = np.random.default_rng(0)
    return synthetic({f"C{i}": rng.normal(0, 10, int(3600 * FS)) for i in range(4)}, FS)


def test_refusal_happens_before_any_computation(long_rec, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("computed despite the budget")

    for family in (spectra, time_features, transients, cross_channel):  # each reads samples through _uv
        monkeypatch.setattr(family, "_uv", boom)
    monkeypatch.setattr(features, "welch_psd", boom)
    monkeypatch.setattr(features, "windows", boom)
    with pytest.raises(ToolError) as err:
        T.compute_windowed_features(long_rec, window_s=10, features=["rms_uv", "alpha_relative"])
    assert err.value.code == "budget_exceeded"
    assert "4 channels x 360 windows = 1440 rows" in err.value.message and "8000-token" in err.value.message
    for tool, kwargs in ((T.compute_power_spectrum, {"fmax": 45, "segment_s": 60}),
                         (T.compute_channel_correlation, {}), (T.detect_transients, {"max_candidates": 5000})):
        with pytest.raises(ToolError) as err:
            tool(long_rec, budget_tokens=50, **kwargs)
        assert err.value.code == "budget_exceeded", tool.__name__


def test_estimate_tracks_the_real_output_size(long_rec):
    out = T.compute_windowed_features(long_rec, channels=["C0"], window_s=30, features=["rms_uv", "delta_relative", "sigma_power"])
    actual_tokens = len(json.dumps(out, separators=(",", ":"))) / 4
    estimate = estimate_tokens(out["n_windows"], [-1234.5678, "C0", -1234.5678, -1234.5678, -1234.5678])
    assert 0.5 * estimate <= actual_tokens <= estimate


def test_budget_can_be_raised_or_lifted(long_rec):
    kwargs = {"channels": ["C0"], "window_s": 2, "features": ["rms_uv"]}
    with pytest.raises(ToolError):
        T.compute_windowed_features(long_rec, **kwargs)
    assert T.compute_windowed_features(long_rec, budget_tokens=None, **kwargs)["n_windows"] == 1800
    assert T.compute_windowed_features(long_rec, budget_tokens=40_000, **kwargs)["n_windows"] == 1800
