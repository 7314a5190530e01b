"""Which compile cache a backend's kernels get, and when one is not valid (no sandbox here)."""
from __future__ import annotations

import json
import os
import sysconfig
from pathlib import Path

import pytest

from runner.sandbox import jit_cache

LOCAL = {"name": "local", "available": True}
DOCKER = {"name": "docker", "available": True, "image_id": "sha256:aaa"}


def test_the_cache_is_named_for_the_backend_environment_and_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit_cache, "cpu_identity", lambda: "model name: A\nflags: sse avx2")
    local, docker = jit_cache.cache_key(LOCAL), jit_cache.cache_key(DOCKER)
    assert local.startswith("local-") and docker.startswith("docker-")
    assert jit_cache.cache_key(DOCKER) == docker
    assert jit_cache.cache_key({**DOCKER, "image_id": "sha256:bbb"}) != docker  # a new image
    monkeypatch.setattr(jit_cache, "cpu_identity", lambda: "model name: B\nflags: sse")
    assert jit_cache.cache_key(DOCKER) != docker  # another CPU
    assert jit_cache.cache_key(LOCAL) != local


def test_cpu_identity_reads_model_and_flags() -> None:
    identity = jit_cache.cpu_identity()  # Linux: /proc/cpuinfo
    assert identity != "unknown" and ("flags" in identity or "Features" in identity)


def _built(directory: Path, sources: dict[str, list[int]]) -> None:
    directory.mkdir(parents=True)
    (directory / jit_cache.MANIFEST).write_text(json.dumps({"backend": "local", "sources": sources}))


def test_ready_wants_a_finished_build(tmp_path: Path) -> None:
    assert jit_cache.ready(tmp_path / "none", local=True) == "not built"
    (tmp_path / "half").mkdir()
    assert jit_cache.ready(tmp_path / "half", local=True) == "not built"  # no manifest: died mid-build
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / jit_cache.MANIFEST).write_text("{")
    assert "unreadable manifest" in (jit_cache.ready(tmp_path / "bad", local=True) or "")


def test_a_reinstalled_source_makes_the_local_cache_stale(tmp_path: Path) -> None:
    purelib = Path(sysconfig.get_paths()["purelib"])
    source = purelib / "antropy" / "entropy.py"
    st = source.stat()
    _built(tmp_path / "fresh", {"antropy/entropy.py": [st.st_mtime_ns, st.st_size]})
    assert jit_cache.ready(tmp_path / "fresh", local=True) is None
    _built(tmp_path / "stale", {"antropy/entropy.py": [st.st_mtime_ns - 1, st.st_size]})
    assert jit_cache.ready(tmp_path / "stale", local=True) == "antropy/entropy.py changed since the build"
    _built(tmp_path / "gone", {"nowhere/x.py": [1, 1]})
    assert jit_cache.ready(tmp_path / "gone", local=True) == "nowhere/x.py is gone"
    # An image's sources are not the host's: its key (the image id) is what makes it valid.
    assert jit_cache.ready(tmp_path / "stale", local=False) is None


class _Backend:
    name = "local"

    def describe(self) -> dict[str, object]:
        return LOCAL


def test_a_run_without_a_cache_is_told_why_and_how_to_build_it(tmp_path: Path) -> None:
    mount, why = jit_cache.resolve(tmp_path, _Backend())  # type: ignore[arg-type]
    assert mount is None
    assert "no compile cache for local" in why and "not built" in why
    assert "eegbench jit-cache --sandbox local" in why


def test_a_run_with_a_cache_mounts_it_read_only(tmp_path: Path) -> None:
    directory = jit_cache.cache_dir(tmp_path, _Backend())  # type: ignore[arg-type]
    _built(directory, {})
    mount, why = jit_cache.resolve(tmp_path, _Backend())  # type: ignore[arg-type]
    assert mount is not None and mount.host == directory and not mount.writable
    assert str(directory) in why


def test_the_hosts_own_workers_get_the_local_cache_once_it_is_built(tmp_path: Path) -> None:
    assert jit_cache.host_cache(tmp_path) is None
    directory = jit_cache.cache_dir(tmp_path, _Backend())  # type: ignore[arg-type]
    _built(directory, {})
    assert jit_cache.host_cache(tmp_path) == directory


def test_abandoned_builds_are_removed(tmp_path: Path) -> None:
    old, recent = tmp_path / ".local-x.old", tmp_path / ".local-x.new"
    old.mkdir()
    recent.mkdir()
    os.utime(old, (0, 0))
    jit_cache._remove_abandoned(tmp_path)
    assert not old.exists() and recent.exists()
