import os
import subprocess
import sys

import pytest

from runner.benchmark import numerics
from runner.core.paths import PROJECT_ROOT

AVX2 = frozenset({"fpu", "sse2", "avx", "avx2", "fma"})


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in numerics.X86_PINS}


def test_x86_with_avx2_gets_the_pins_and_other_machines_none():
    assert numerics.pinned_env("x86_64", AVX2) == numerics.X86_PINS
    assert numerics.pinned_env("x86_64", AVX2 - {"fma"}) == {}  # Haswell's kernels would not run
    assert numerics.pinned_env("aarch64", AVX2) == {}


def test_cpu_flags_come_from_the_flags_line(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\nbugs\t\t: x\n")
    assert numerics.cpu_flags(info) == {"fpu", "avx2", "fma"}
    assert numerics.cpu_flags(tmp_path / "absent") == frozenset()


def _runtime(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], cwd=PROJECT_ROOT,
                          env=_clean_env(), capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not numerics.pinned_env(), reason="needs an x86-64 CPU with AVX2")
def test_importing_runner_first_puts_openblas_and_numpy_on_the_avx2_paths():
    probe = _runtime("import runner, numpy, threadpoolctl\n"
                     "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
                     "arch = {i.get('architecture') for i in threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'}\n"
                     "print(sorted(arch), f['X86_V4'], f['AVX512_SKX'], f['AVX2'])")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split("] ")[1].strip() == "False False True", probe.stdout
    assert probe.stdout.startswith("['Haswell']"), probe.stdout


@pytest.mark.skipif(not numerics.pinned_env(), reason="needs an x86-64 CPU with AVX2")
def test_numpy_loaded_before_runner_is_said():
    late = _runtime("import numpy, runner")
    assert late.returncode != 0 and "numpy was loaded before runner" in late.stderr, late.stderr

