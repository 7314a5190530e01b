"""A fresh kernel loads the environment's numba code from the compile cache built at setup,
on every backend: antropy's functions (behind yasa.SleepStaging) are cache hits, not
compiles; the cache is read-only inside the sandbox; without it, the same kernel compiles.
Docker is required: a missing daemon or image fails the docker half (`make image`).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.sandbox import get_backend, jit_cache
from runner.sandbox.base import JitCacheMount, Limits, SandboxSpec

# numba's own counters for every antropy dispatcher, after SleepStaging's features ran once.
COUNT = """
import gc, json, numpy as np, antropy as ant
from numba.core.dispatcher import Dispatcher
x = np.random.default_rng(0).standard_normal((6, 3000))
ant.hjorth_params(x, axis=1); ant.num_zerocross(x, axis=1); ant.petrosian_fd(x, axis=1)
np.apply_along_axis(ant.perm_entropy, 1, x, normalize=True); np.apply_along_axis(ant.higuchi_fd, 1, x)
ds = [o for o in gc.get_objects() if isinstance(o, Dispatcher) and o.py_func.__module__.startswith("antropy")]
print(json.dumps({"dispatchers": len(ds), "hits": sum(sum(d.stats.cache_hits.values()) for d in ds),
                  "misses": sum(sum(d.stats.cache_misses.values()) for d in ds)}))
"""
WRITE = """
import os
for path in ("/opt/eegbench-jit/poison.nbi", "/opt/eegbench-jit/antropy/entropy/x"):
    try:
        open(path, "w").close(); print("wrote", path)
    except OSError as exc:
        print("refused", path, exc.errno)
"""
LIMITS = Limits(exec_timeout_s=300)


@pytest.fixture(scope="module", params=[pytest.param("local", id="local"),
                                        pytest.param("docker", id="docker", marks=pytest.mark.docker)])
def built(request, tmp_path_factory) -> tuple[object, Path]:
    backend = get_backend(request.param)
    ok, why = backend.available()
    assert ok, f"backend {request.param} is not available here ({why}); for docker run `make image`"
    cache = tmp_path_factory.mktemp(f"cache-{request.param}")
    directory, was_built = jit_cache.ensure(cache, backend, Path("/nonexistent"))
    assert was_built and jit_cache.ready(directory, jit_cache.is_local(backend.describe())) is None
    return backend, directory


def _counts(backend, tmp: Path, mount: JitCacheMount | None) -> dict[str, int]:
    tmp.mkdir()
    spec = SandboxSpec("jit", tmp.name, Path("/nonexistent"), (), tmp, LIMITS, jit_cache=mount)
    with backend.start(spec) as box:
        observation = box.execute(COUNT)
        assert observation.status == "ok", observation.text
        return json.loads(observation.text.strip().splitlines()[-1])


def test_a_fresh_kernel_loads_antropy_from_the_cache(built, tmp_path: Path) -> None:
    backend, directory = built
    counts = _counts(backend, tmp_path / "cached", JitCacheMount(directory))
    assert counts["dispatchers"] >= 5
    assert counts["misses"] == 0 and counts["hits"] >= 5


def test_without_the_cache_the_kernel_compiles(built, tmp_path: Path) -> None:
    backend, _ = built
    counts = _counts(backend, tmp_path / "bare", None)
    assert counts["hits"] == 0 and counts["misses"] >= 5


def test_the_model_cannot_write_the_cache(built, tmp_path: Path) -> None:
    backend, directory = built
    before = {str(p): p.stat().st_mtime_ns for p in directory.rglob("*")}
    (tmp_path / "w").mkdir()
    spec = SandboxSpec("jit", "w", Path("/nonexistent"), (), tmp_path / "w", LIMITS,
                       jit_cache=JitCacheMount(directory))
    with backend.start(spec) as box:
        text = box.execute(WRITE).text
    assert "wrote" not in text and text.count("refused") == 2, text
    assert {str(p): p.stat().st_mtime_ns for p in directory.rglob("*")} == before
