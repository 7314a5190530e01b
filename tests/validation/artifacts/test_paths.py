"""Artifact path safety: what retain_artifacts keeps from a hostile workspace, and how a
reported path maps (or refuses to map) onto the retained copy."""
import hashlib
import os
from pathlib import Path

import pytest

from runner.run import artifacts
from validation.artifacts.check import file_status_check
from validation.artifacts.paths import resolve_artifact
from validation.context import ScoringContext

EXISTS = {"check": "file_exists"}
PAYLOAD = b"\x93NUMPY-not-really but bytes we can recognise 0123456789"


@pytest.fixture
def ws(tmp_path):
    """A workspace as the sandbox leaves it, with one good artifact x.npy."""
    workspace = tmp_path / "ws"
    (workspace / "file_check").mkdir(parents=True)
    (workspace / "file_check" / "x.npy").write_bytes(PAYLOAD)
    return workspace


def retain(workspace: Path, tmp_path: Path) -> ScoringContext:
    dest = tmp_path / "audit" / "artifacts"
    manifest = [e.as_manifest() for e in artifacts.retain_artifacts(workspace, dest)]
    return ScoringContext(artifacts_dir=dest, manifest=manifest)


def all_retained_bytes(ctx: ScoringContext) -> list[bytes]:
    return [p.read_bytes() for p in ctx.artifacts_dir.rglob("*") if p.is_file() and not p.is_symlink()] \
        if ctx.artifacts_dir.exists() else []


def score_of(reported, ctx, metric_id="m1"):
    return file_status_check(reported, EXISTS, ctx.for_metric(metric_id))


# --- retain_artifacts --------------------------------------------------------------------

def test_retain_copies_regular_files_with_independent_sha256(ws, tmp_path):
    (ws / "file_check" / "sub" / "deep").mkdir(parents=True)
    nested = b"nested artifact"
    (ws / "file_check" / "sub" / "deep" / "y.csv").write_bytes(nested)
    (ws / "outside.npy").write_bytes(b"not in file_check")
    ctx = retain(ws, tmp_path)
    by_path = {e["path"]: e for e in ctx.manifest}
    assert set(by_path) == {"x.npy", "sub/deep/y.csv"}  # directories and outside files not listed
    assert by_path["x.npy"] == {"path": "x.npy", "bytes": len(PAYLOAD),
                                "sha256": hashlib.sha256(PAYLOAD).hexdigest()}
    assert by_path["sub/deep/y.csv"]["sha256"] == hashlib.sha256(nested).hexdigest()
    assert (ctx.artifacts_dir / "x.npy").read_bytes() == PAYLOAD
    assert (ctx.artifacts_dir / "sub" / "deep" / "y.csv").read_bytes() == nested
    assert not (ctx.artifacts_dir / "outside.npy").exists()


def test_retain_without_file_check_folder_keeps_nothing(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "x.npy").write_bytes(PAYLOAD)
    ctx = retain(workspace, tmp_path)
    assert ctx.manifest == []
    outcome = score_of("file_check/x.npy", ctx)
    assert outcome.score == 0.0 and ctx.violations == []


# --- reported path forms -----------------------------------------------------------------

@pytest.mark.parametrize("reported", [
    "/workspace/file_check/x.npy",
    "file_check/x.npy",
    "./file_check/x.npy",
    "`/workspace/file_check/x.npy`",
    "`file_check/x.npy`",
    "'file_check/x.npy'",
    '"/workspace/file_check/x.npy"',
    "  /workspace/file_check/x.npy \n",
    "file_check/sub/../x.npy",  # climbs, but stays inside file_check
    "file_check\\x.npy",  # a Windows-minded model
    "/workspace/file_check/x.npy/",
])
def test_reported_forms_resolve_to_the_retained_copy(ws, tmp_path, reported):
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact(reported, ctx)
    assert resolved.path == ctx.artifacts_dir / "x.npy"
    assert resolved.relative == "x.npy"
    assert resolved.path.read_bytes() == PAYLOAD
    outcome = score_of(reported, ctx)
    assert outcome.score == 1.0
    assert ctx.violations == []


def test_double_slash_after_workspace_resolves(ws, tmp_path):
    """`/workspace//file_check/x.npy` is the same file as /workspace/file_check/x.npy (POSIX
    collapses repeated slashes; f"{ws}/{name}" with ws="/workspace/" produces it)."""
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact("/workspace//file_check/x.npy", ctx)
    assert resolved.path == ctx.artifacts_dir / "x.npy"


def test_nested_artifact_resolves(ws, tmp_path):
    (ws / "file_check" / "sub").mkdir()
    (ws / "file_check" / "sub" / "z.bin").write_bytes(b"zz")
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact("/workspace/file_check/sub/z.bin", ctx)
    assert resolved.relative == "sub/z.bin"
    assert resolved.path.read_bytes() == b"zz"


@pytest.mark.parametrize("reported", [None, "", "   ", "``", 42, 3.5, b"file_check/x.npy",
                                      ["file_check/x.npy"], {"path": "file_check/x.npy"}])
def test_no_usable_report_scores_zero_without_violation(ws, tmp_path, reported):
    ctx = retain(ws, tmp_path)
    assert resolve_artifact(reported, ctx).path is None
    outcome = score_of(reported, ctx)
    assert outcome.score == 0.0 and outcome.scored
    assert ctx.violations == []


# --- hostile reported paths -----------------------------------------------------------------

@pytest.mark.parametrize("reported", [
    "/etc/passwd",
    "/input/eegmmidb/S001R02.edf",
    "/workspacex/file_check/x.npy",  # prefix trick: not /workspace/
    "/tmp/file_check/x.npy",
    "../etc/passwd",
    "..",
    "file_check/../../etc/passwd",
    "/workspace/../etc/passwd",
    "/workspace/file_check/../../input/x.edf",
    "`../../../etc/shadow`",
    "file_check/x\x00.npy",
    "file_check/" + "a" * 2000,
])
def test_hostile_reported_paths_score_zero_and_are_recorded(ws, tmp_path, reported):
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact(reported, ctx)
    assert resolved.path is None and resolved.violation
    outcome = file_status_check(reported, EXISTS, ctx.for_metric("artifact_metric"))
    assert outcome.score == 0.0 and outcome.scored
    assert len(ctx.violations) == 1
    assert ctx.violations[0].startswith("artifact_metric: ")


@pytest.mark.parametrize("reported", [
    "/workspace/results.npy",
    "results.npy",
    "file_checkx/x.npy",
    "/workspace/file_check",
    "file_check/../x.npy",
    "/workspace/scratch/file_check/x.npy",
])
def test_inside_workspace_outside_file_check_is_missing_not_a_violation(ws, tmp_path, reported):
    (ws / "results.npy").write_bytes(PAYLOAD)
    (ws / "x.npy").write_bytes(PAYLOAD)
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact(reported, ctx)
    assert resolved.path is None and not resolved.violation
    assert score_of(reported, ctx).score == 0.0
    assert ctx.violations == []


def test_unknown_file_in_file_check_is_missing_not_a_violation(ws, tmp_path):
    ctx = retain(ws, tmp_path)
    resolved = resolve_artifact("file_check/never_written.npy", ctx)
    assert resolved.path is None and not resolved.violation
    assert "does not exist" in resolved.problem


# --- symlinks and special files in the workspace ------------------------------------------------

def _assert_refused(ctx, name, reported):
    entry = next(e for e in ctx.manifest if e["path"] == name)
    assert "sha256" not in entry and "skipped" in entry
    assert not os.path.lexists(ctx.artifacts_dir / name)
    resolved = resolve_artifact(reported, ctx)
    assert resolved.path is None and resolved.violation
    before = len(ctx.violations)
    outcome = score_of(reported, ctx, "m_link")
    assert outcome.score == 0.0
    assert len(ctx.violations) == before + 1 and ctx.violations[-1].startswith("m_link: ")
    return entry


def test_symlink_to_etc_passwd_is_recorded_never_copied(ws, tmp_path):
    os.symlink("/etc/passwd", ws / "file_check" / "passwd.txt")
    ctx = retain(ws, tmp_path)
    entry = _assert_refused(ctx, "passwd.txt", "/workspace/file_check/passwd.txt")
    assert entry["link_target"] == "/etc/passwd"
    passwd = Path("/etc/passwd").read_bytes()
    assert passwd not in all_retained_bytes(ctx)
    # the good artifact next to it is still scored
    assert score_of("file_check/x.npy", ctx).score == 1.0


def test_symlink_to_directory_is_not_descended(ws, tmp_path):
    os.symlink("/etc", ws / "file_check" / "etc")
    ctx = retain(ws, tmp_path)
    _assert_refused(ctx, "etc", "file_check/etc")
    assert [e["path"] for e in ctx.manifest if e["path"].startswith("etc/")] == []
    # a path through the linked directory is a violation too
    for reported in ("file_check/etc/passwd", "/workspace/file_check/etc/hostname"):
        resolved = resolve_artifact(reported, ctx)
        assert resolved.path is None and resolved.violation, reported
    assert Path("/etc/passwd").read_bytes() not in all_retained_bytes(ctx)


def test_symlink_to_another_instance_workspace(ws, tmp_path):
    other = tmp_path / "other_ws" / "file_check"
    other.mkdir(parents=True)
    secret = b"another instance's answer"
    (other / "answer.npy").write_bytes(secret)
    os.symlink(other / "answer.npy", ws / "file_check" / "answer.npy")
    ctx = retain(ws, tmp_path)
    entry = _assert_refused(ctx, "answer.npy", "file_check/answer.npy")
    assert entry["link_target"] == str(other / "answer.npy")
    assert secret not in all_retained_bytes(ctx)


def test_symlink_to_input_recording(ws, tmp_path):
    # dangling here (no /input outside the sandbox) and real inside it: refused either way
    os.symlink("/input/eegmmidb/S001R02.edf", ws / "file_check" / "S001R02.edf")
    real_input = Path(__file__).resolve().parents[3] / "data" / "eegmmidb" / "S001R02.edf"
    os.symlink(real_input, ws / "file_check" / "copy.edf")
    ctx = retain(ws, tmp_path)
    entry = _assert_refused(ctx, "S001R02.edf", "/workspace/file_check/S001R02.edf")
    assert entry["link_target"] == "/input/eegmmidb/S001R02.edf"
    _assert_refused(ctx, "copy.edf", "file_check/copy.edf")
    assert real_input.read_bytes() not in all_retained_bytes(ctx)


def test_symlinked_file_check_folder_is_refused_whole(ws, tmp_path):
    other = tmp_path / "other_ws" / "file_check"
    other.mkdir(parents=True)
    (other / "x.npy").write_bytes(b"someone else's x")
    workspace = tmp_path / "ws2"
    workspace.mkdir()
    os.symlink(other, workspace / "file_check")
    dest = tmp_path / "audit2"
    manifest = [e.as_manifest() for e in artifacts.retain_artifacts(workspace, dest)]
    assert len(manifest) == 1 and manifest[0]["path"] == "" and "sha256" not in manifest[0]
    assert manifest[0]["link_target"] == str(other)
    assert not dest.exists() or list(dest.rglob("*")) == []
    ctx = ScoringContext(artifacts_dir=dest, manifest=manifest)
    resolved = resolve_artifact("/workspace/file_check/x.npy", ctx)
    assert resolved.path is None and resolved.violation
    assert score_of("file_check/x.npy", ctx).score == 0.0
    assert len(ctx.violations) == 1


@pytest.mark.timeout(60)  # reading a FIFO would block forever
def test_fifo_is_recorded_never_opened(ws, tmp_path):
    os.mkfifo(ws / "file_check" / "pipe.npy")
    ctx = retain(ws, tmp_path)
    entry = _assert_refused(ctx, "pipe.npy", "file_check/pipe.npy")
    assert "link_target" not in entry


def test_retained_copy_swapped_for_symlink_is_a_violation(ws, tmp_path):
    ctx = retain(ws, tmp_path)
    copy = ctx.artifacts_dir / "x.npy"
    copy.unlink()
    os.symlink("/etc/passwd", copy)
    resolved = resolve_artifact("file_check/x.npy", ctx)
    assert resolved.path is None and resolved.violation


def test_retained_copy_deleted_is_missing_not_a_violation(ws, tmp_path):
    ctx = retain(ws, tmp_path)
    (ctx.artifacts_dir / "x.npy").unlink()
    resolved = resolve_artifact("file_check/x.npy", ctx)
    assert resolved.path is None and not resolved.violation


def test_no_artifacts_dir_is_missing_not_a_violation(ws, tmp_path):
    ctx = retain(ws, tmp_path)
    ctx.artifacts_dir = None
    resolved = resolve_artifact("file_check/x.npy", ctx)
    assert resolved.path is None and not resolved.violation


# --- size cap ---------------------------------------------------------------------------

def test_file_over_the_size_cap_is_not_retained_and_not_a_violation(tmp_path, monkeypatch):
    monkeypatch.setattr(artifacts, "MAX_ARTIFACT_BYTES", 100)
    workspace = tmp_path / "ws"
    (workspace / "file_check").mkdir(parents=True)
    (workspace / "file_check" / "a.bin").write_bytes(b"a" * 60)
    (workspace / "file_check" / "b.bin").write_bytes(b"b" * 60)  # 120 > 100: skipped
    (workspace / "file_check" / "c.bin").write_bytes(b"c" * 40)  # 100: still fits
    ctx = retain(workspace, tmp_path)
    by_path = {e["path"]: e for e in ctx.manifest}
    assert "sha256" in by_path["a.bin"] and "sha256" in by_path["c.bin"]
    assert "sha256" not in by_path["b.bin"] and by_path["b.bin"]["bytes"] == 60
    assert not (ctx.artifacts_dir / "b.bin").exists()
    resolved = resolve_artifact("file_check/b.bin", ctx)
    assert resolved.path is None and not resolved.violation
    outcome = score_of("file_check/b.bin", ctx)
    assert outcome.score == 0.0 and ctx.violations == []
    assert score_of("file_check/c.bin", ctx).score == 1.0
