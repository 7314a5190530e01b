"""The kernel-side compile cache hook, in fresh interpreters on the host: the environment's
functions are saved by a writable build and loaded by a read-only kernel; nothing else changes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.sandbox import kernel_jit

ENV_MODULE = '''
from numba import jit, njit

@jit("f8(f8)", nopython=True)
def eager(x):
    return x + 1.0

@njit
def lazy(x):
    return x * 2
'''

MODEL_MODULE = '''
from numba import njit

@njit
def mine(x):
    return x - 1
'''

# Runs in a fresh interpreter: install the hook, import both modules, call, report numba's
# own counters (and which cache class each dispatcher got).
PROBE = '''
import json, sys
sys.path[:0] = [{env!r}, {elsewhere!r}]
import kernel_jit
kernel_jit.install({cache!r}, {env!r}, {writable!r})
import envmod, modelmod
envmod.eager(1.0); envmod.lazy({arg}); modelmod.mine(3)
def counts(d):
    return [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()), type(d._cache).__name__]
print(json.dumps({{"eager": counts(envmod.eager), "lazy": counts(envmod.lazy), "mine": counts(modelmod.mine)}}))
'''


def _probe(tmp_path: Path, cache: Path, writable: bool, arg: str = "3") -> dict[str, list]:
    env, elsewhere = tmp_path / "site-packages", tmp_path / "model"
    for folder, name, text in ((env, "envmod", ENV_MODULE), (elsewhere, "modelmod", MODEL_MODULE)):
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.py").write_text(text)
    hook = Path(kernel_jit.__file__).parent
    code = PROBE.format(env=str(env), elsewhere=str(elsewhere), cache=str(cache), writable=writable, arg=arg)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(hook), "PYTHONDONTWRITEBYTECODE": "1"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_a_build_saves_the_environments_functions_and_a_kernel_loads_them(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    built = _probe(tmp_path, cache, writable=True)
    assert built["eager"][:2] == [0, 1] and built["lazy"][:2] == [0, 1]
    saved = _files(cache)
    assert any(name.startswith("envmod/envmod.eager") and name.endswith(".nbi") for name in saved)
    assert any(name.startswith("envmod/envmod.lazy") and name.endswith(".nbi") for name in saved)

    for path in [cache, *cache.rglob("*")]:  # as in the sandbox: nobody may write
        path.chmod(0o555 if path.is_dir() else 0o444)
    loaded = _probe(tmp_path, cache, writable=False)
    assert loaded["eager"][:2] == [1, 0]
    assert loaded["lazy"][:2] == [1, 0]


def test_a_kernel_compiles_what_the_cache_lacks_and_writes_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    _probe(tmp_path, cache, writable=True)
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*")}
    cache.chmod(0o555)
    # A float argument: a signature the build never compiled.
    result = _probe(tmp_path, cache, writable=False, arg="3.5")
    assert result["lazy"][:2] == [0, 1]
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*")} == before


def test_the_models_own_numba_code_is_left_alone(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    result = _probe(tmp_path, cache, writable=True)
    assert result["mine"][2] == "NullCache"
    assert result["eager"][2] == "PrebuiltCache"
    assert not any("modelmod" in name for name in _files(cache))


def test_an_empty_or_missing_cache_only_compiles(tmp_path: Path) -> None:
    result = _probe(tmp_path, tmp_path / "absent", writable=False)
    assert result["eager"][:2] == [0, 1]
    assert not (tmp_path / "absent").exists()


def test_without_the_variable_nothing_is_patched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kernel_jit.JIT_CACHE_ENV, raising=False)
    finders = list(sys.meta_path)
    kernel_jit.install_from_env()
    assert sys.meta_path == finders


def test_the_kernel_program_carries_the_hook() -> None:
    from runner.sandbox import bootstrap

    program = bootstrap.kernel_argv("/opt/venv/bin/python", "/kernel/c.json", 8000)[2]
    compile(program, "<kernel>", "exec")
    assert "def install_from_env" in program
    # installed before the kernel starts, so before anything the model runs imports numba
    preload = f'_preload(os.environ.pop("{bootstrap.PRELOAD_ENV}"'
    # the hook is installed before the preloaded modules import numba, and both before the kernel
    assert program.index("\ninstall_from_env()\n") < program.index(preload)
    assert program.index(preload) < program.rindex("\n_launch()\n")
