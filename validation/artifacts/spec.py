"""One reading of a file_status_check's params, whichever of the two spellings it uses.

eegbench task files write `{"check": "eeg_file_match", "file_name": ..., "fields": {name:
{weight, tolerance}}, "ground_truth": {name: value}}` (the reference script computes the
values). BrainBench's case files write `{"match_mode": ..., "validator_config": {name:
{weight, value, tolerance}, "file_name": {"value": ...}, "vlm_prompt": {weight, value}}}`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from validation.errors import MetricConfigError
from validation.unit import ground_truth, has_ground_truth

CHECKS = ("eeg_file_match", "image_file_match", "table_file_match", "file_exists")


@dataclass(frozen=True)
class FieldCheck:
    """One field an artifact check compares: its weight, expected value and tolerance."""
    name: str
    weight: float
    expected: Any
    tolerance: float | None  # None: the field's default


@dataclass(frozen=True)
class ArtifactSpec:
    """An artifact check read from either spelling of file_status_check's params."""
    check: str
    file_name: str | None
    fields: tuple[FieldCheck, ...]
    vlm_prompt: str | None = None
    options: Mapping[str, Any] | None = None  # check-specific extras (e.g. duration_column)


def artifact_spec(params: Mapping[str, Any]) -> ArtifactSpec:
    """Read a file_status_check's params (eegbench's or BrainBench's spelling)."""
    if "validator_config" in params or "match_mode" in params:
        return _brainbench(params)
    return _eegbench(params)


def _eegbench(params: Mapping[str, Any]) -> ArtifactSpec:
    check = params.get("check", "file_exists")
    _known(check)
    fields_cfg = params.get("fields") or {}
    raw_truth = ground_truth(params) if has_ground_truth(params) else None
    truth: Mapping[str, Any] = raw_truth if isinstance(raw_truth, Mapping) else {}
    if not isinstance(fields_cfg, Mapping):
        raise MetricConfigError("params.fields must be an object of {field: {weight, tolerance}}")
    fields = []
    for name, cfg in fields_cfg.items():
        if name not in truth:
            raise MetricConfigError(f"field {name!r} has no value in params.gt_value")
        fields.append(_field(name, cfg, truth[name]))
    return ArtifactSpec(check, _name(params.get("file_name")), tuple(fields),
                        vlm_prompt=params.get("vlm_prompt"), options=params)


def _brainbench(params: Mapping[str, Any]) -> ArtifactSpec:
    check = str(params.get("match_mode") or "file_exists").lower()
    _known(check)
    config = params.get("validator_config") or {}
    if not isinstance(config, Mapping):
        raise MetricConfigError("params.validator_config must be an object")
    name_cfg = config.get("file_name")
    file_name = name_cfg.get("value") if isinstance(name_cfg, Mapping) else name_cfg
    vlm = config.get("vlm_prompt")
    vlm_prompt = vlm.get("value") if isinstance(vlm, Mapping) and _number(vlm.get("weight", 0), "vlm_prompt.weight") > 0 else None
    fields = tuple(
        _field(name, cfg, cfg.get("value"))
        for name, cfg in config.items()
        if name not in ("file_name", "vlm_prompt") and isinstance(cfg, Mapping)
        and _number(cfg.get("weight", 0) or 0, f"{name}.weight") > 0
    )
    return ArtifactSpec(check, _name(file_name), fields, vlm_prompt=vlm_prompt, options=params)


def _field(name: str, cfg: Any, expected: Any) -> FieldCheck:
    if not isinstance(cfg, Mapping):
        raise MetricConfigError(f"field {name!r}: expected {{weight, tolerance}}, got {cfg!r}")
    try:
        weight = float(cfg.get("weight", 1.0))
        tolerance = None if cfg.get("tolerance") is None else float(cfg["tolerance"])
    except (TypeError, ValueError):
        raise MetricConfigError(f"field {name!r}: weight and tolerance must be numbers") from None
    if weight < 0 or (tolerance is not None and tolerance < 0):
        raise MetricConfigError(f"field {name!r}: weight and tolerance must not be negative")
    return FieldCheck(name, weight, expected, tolerance)


def _number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MetricConfigError(f"validator_config.{what} must be a number, got {value!r}") from None


def _known(check: Any) -> None:
    if check not in CHECKS:
        raise MetricConfigError(f"unknown file check {check!r}; expected one of {CHECKS}")


def _name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise MetricConfigError(f"file_name must be a non-empty string, got {value!r}")
    return value.strip()
