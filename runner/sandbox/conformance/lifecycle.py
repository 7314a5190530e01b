"""Lifecycle: close leaves nothing behind; a start that fails does so quickly, with the
kernel's output, and leaves nothing behind either."""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from runner.sandbox import kernel
from runner.sandbox.base import Backend, SandboxError
from runner.sandbox.conformance.context import Context, check, raises, run


@check
def close_leaves_nothing_behind_but_the_workspace(ctx: Context) -> None:
    """close() kills every process (a detached child too) and removes all host state."""
    sandbox = ctx.start("close")
    run(sandbox, "import subprocess\nchild = subprocess.Popen(['sleep', '600'])\n"
                 "open('/workspace/file_check/out.txt', 'w').write('kept')")
    pids = sandbox.host_pids()
    assert len(pids) >= 3 and sandbox.leftovers(), (pids, sandbox.leftovers())
    sandbox.close()
    left = sandbox.leftovers() + [f"pid {p}" for p in pids if Path(f"/proc/{p}").exists()]  # not even a zombie
    assert left == [], left
    assert (Path(sandbox.spec.workspace) / "file_check" / "out.txt").read_text() == "kept"
    sandbox.close()  # idempotent
    assert sandbox.execute("print(1)").status == "infra_error"


@check
def missing_input_is_an_infrastructure_error(ctx: Context) -> None:
    """An input that does not exist fails start() naming the case and the file; nothing is left."""
    spec = replace(ctx.spec("missing"), inputs=("rec/absent.edf",))
    before = ctx.backend.own_state()
    with raises(SandboxError, "case-missing.*absent.edf"):
        ctx.backend.start(spec)
    assert ctx.backend.own_state() == before


def _with_kernel(backend: Backend, code: str) -> Backend:
    """The backend, its kernel replaced by `python -c code` (on this instance only)."""
    python = backend.kernel_python()
    setattr(backend, "kernel_command", lambda conn, limits: [python, "-c", code])
    return backend


@contextmanager
def _ready_timeout(seconds: float) -> Iterator[None]:
    saved = kernel.READY_TIMEOUT_S
    kernel.READY_TIMEOUT_S = seconds
    try:
        yield
    finally:
        kernel.READY_TIMEOUT_S = saved


@check
def kernel_that_never_answers_fails_start_with_its_output(ctx: Context) -> None:
    """A kernel that hangs fails start() after the ready timeout, with its output; torn down."""
    backend = _with_kernel(ctx.fresh_backend(),
                           "import sys, time; print('hang-marker', file=sys.stderr, flush=True); time.sleep(60)")
    before = backend.own_state()
    started = time.monotonic()
    with _ready_timeout(2.0), raises(SandboxError, "(?s)did not answer within 2 s.*hang-marker"):
        backend.start(ctx.spec("hang"))
    assert time.monotonic() - started < 30  # bounded by the ready timeout, not 60 s
    assert backend.own_state() == before  # torn down


@check
def kernel_that_crashes_fails_start_at_once(ctx: Context) -> None:
    """A kernel that exits fails start() at once (not after the timeout), with its output."""
    backend = _with_kernel(ctx.fresh_backend(), "import sys; sys.exit('crash-marker')")
    started = time.monotonic()
    with raises(SandboxError, "(?s)exited before answering.*crash-marker"):
        backend.start(ctx.spec("crash"))
    assert time.monotonic() - started < 20  # at once, not after the ready timeout
