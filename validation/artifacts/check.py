"""The file_status_check unit: a safe path, the right name, then the check's fields.

Order of verdicts (each a score of 0 with its reason, except the last):
no or unsafe path (recorded as a violation) -> file missing -> wrong file_name -> file
unreadable as its kind -> weighted field score (or 1 for a valid file with no fields).
An image with a VLM prompt needs an image judge: without one the unit is unscored and
flagged, never a silent 0 or 1.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from validation.artifacts.fields import score_fields
from validation.artifacts.image import image_format, same_format
from validation.artifacts.isolation import READER, MeasureError
from validation.artifacts.paths import resolve_artifact
from validation.artifacts.spec import ArtifactSpec, artifact_spec
from validation.context import ScoringContext
from validation.unit import Unit, UnitOutcome, fail, ground_truth, has_ground_truth, result, unscored


def file_status_check(predicted: Any, params: Mapping[str, Any],
                      context: ScoringContext | None = None) -> UnitOutcome:
    """Score the artifact at the reported path against the check in params."""
    spec = artifact_spec(params)  # MetricConfigError for a broken instance, before any file
    context = context or ScoringContext()
    resolved = resolve_artifact(predicted, context)
    if resolved.path is None:
        if resolved.violation:
            context.record_violation(resolved.problem)
        return fail(resolved.problem)
    if spec.file_name and not _name_matches(resolved.relative, spec.file_name):
        return fail(f"file is {resolved.relative!r}, the task asked for {spec.file_name!r}")
    if resolved.path.stat().st_size == 0:
        return fail(f"{resolved.relative} is empty")
    if spec.check == "image_file_match":
        return _image(resolved.path, resolved.relative, spec, context)
    if spec.check == "file_exists":
        return result(1.0, f"{resolved.relative} exists")
    return _fields(resolved.path, resolved.relative, spec)


def _name_matches(relative: str, file_name: str) -> bool:
    """A name with a folder must match the path under file_check/; a bare name the basename."""
    wanted = PurePosixPath(file_name.replace("\\", "/"))
    if len(wanted.parts) == 1:
        return PurePosixPath(relative).name == wanted.name
    if wanted.parts[0] == "file_check":
        wanted = PurePosixPath(*wanted.parts[1:])
    return PurePosixPath(relative) == wanted


def _fields(path: Path, relative: str, spec: ArtifactSpec) -> UnitOutcome:
    names = [check.name for check in spec.fields]
    try:
        found = READER.measure(path, spec.check, names, spec.options or {})
    except MeasureError as exc:
        return fail(f"{relative}: {exc}")
    if "error" in found:
        return fail(f"{relative}: {found['error']}")
    score, records = score_fields(spec.fields, _lookup(found))
    failed = [r["field"] for r in records if not r["ok"]]
    detail = f"{relative}: " + (f"fields not matching: {', '.join(failed)}" if failed else "all fields match")
    outcome = result(score, detail)
    return outcome.model_copy(update={"evidence": {"file": relative, "fields": records}})


def _lookup(found: dict[str, Any]) -> Callable[[str], Any]:
    def measure(name: str) -> Any:
        if name in found["failed"]:
            raise MeasureError(found["failed"][name])
        return found["values"][name]  # KeyError: not measurable for this file type
    return measure


def _image(path: Path, relative: str, spec: ArtifactSpec, context: ScoringContext) -> UnitOutcome:
    found = image_format(path)
    if found is None:
        return fail(f"{relative} is not a recognised image (png, jpeg, gif, svg, pdf)")
    name, media = found
    expected = _expected_format(spec)
    if expected and not same_format(name, expected):
        return fail(f"{relative} is a {name} image, the task asked for {expected}")
    if not spec.vlm_prompt:
        return result(1.0, f"{relative}: valid {name} image")
    if context.image_judge is None:
        return unscored("image_file_match (VLM judge)").model_copy(
            update={"detail": f"{relative}: valid {name} image; its content needs a VLM judge and none is configured"})
    verdict = context.image_judge(spec.vlm_prompt, path.read_bytes(), media)
    context.record_judge(verdict)
    if verdict.score is None:
        return unscored("image_file_match (VLM judge)").model_copy(
            update={"detail": f"VLM judge gave no usable verdict: {verdict.error}"})
    return result(verdict.score, f"VLM judge: {verdict.rationale[:300]}")


def _expected_format(spec: ArtifactSpec) -> str | None:
    options = spec.options or {}
    truth = ground_truth(options) if has_ground_truth(options) else None
    found = truth.get("format") if isinstance(truth, Mapping) else None
    return found if isinstance(found, str) else None


FILE_STATUS_CHECK = Unit(name="file_status_check", score=file_status_check, deterministic=False,
                         ground_truth_types=(dict,), family="artifact")
