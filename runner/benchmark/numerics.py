"""The same floating-point bits from the same inputs on every x86-64 machine.

OpenBLAS picks its compute kernels by CPU (Haswell's on AVX2 machines, SkylakeX's on AVX-512
ones) and numpy sends some loops to AVX-512 code where the CPU has it. The orders of operations
differ, so the last bits do: derived input files, whose sha256 every instance records, and
regenerated ground truth came out different on an AVX-512 machine than on the AVX2 machine that
made the committed ones (`truth --check`: 294 differences in the 13th digit). So on every x86-64
CPU that has AVX2 the controller's processes use those paths, and so do the kernels
(layout.sandbox_env), where the oracle's cells must agree with ground truth to the bit.

The variables are read when numpy and OpenBLAS load, so `pin` runs when the `runner` package is
imported, before anything of ours imports numpy; spawned workers inherit them.
"""
from __future__ import annotations

import os
import platform
import sys
import warnings
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
# Haswell's kernels need AVX2 and FMA; on an older CPU forcing them would end in SIGILL.
NEEDED_FLAGS = frozenset({"avx2", "fma"})
X86_PINS = {
    "OPENBLAS_CORETYPE": "Haswell",
    # numpy >= 2.4's names; disabling X86_V4 disables every AVX-512 group built on it
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The first CPU's feature flags, empty where /proc/cpuinfo is not readable."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def pinned_env(machine: str | None = None, flags: frozenset[str] | None = None) -> dict[str, str]:
    """The variables that make this machine compute as the reference machine did; none off x86-64
    or without AVX2 (results there may differ in the last bits, and `truth --check` says so)."""
    machine = platform.machine() if machine is None else machine
    if machine not in ("x86_64", "AMD64"):
        return {}
    flags = cpu_flags() if flags is None else flags
    return dict(X86_PINS) if NEEDED_FLAGS <= flags else {}


def pin() -> None:
    """Set the pinned variables for this process and its children."""
    wanted = pinned_env()
    changed = {k: v for k, v in wanted.items() if os.environ.get(k) != v}
    if changed and "numpy" in sys.modules:
        warnings.warn(f"numpy was loaded before runner: {', '.join(changed)} apply only to child "
                      "processes, so files derived in this one may differ in the last bits",
                      RuntimeWarning, stacklevel=2)
    os.environ.update(wanted)
