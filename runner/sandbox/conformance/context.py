"""The backend under test and its sandboxes, shared by the checks; and the check list itself.

Shared sandboxes start on first use and keep the suite fast: `box` for checks that leave the
kernel as they found it, `rough` for checks that kill or restart it (each checks the next
cell works), `slow` for cells that need a long timeout. Lifecycle checks start their own.
"""
from __future__ import annotations

import os
import re
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.core.transcript import Observation
from runner.sandbox.base import Backend, Limits, Sandbox, SandboxSpec

SECRET_VAR = "EEGBENCH_API_KEY"
SECRET = "secret-123"  # set on the controller before `box` starts: must not reach the kernel

BOX_LIMITS = {"memory_mb": 1024, "pids": 128, "exec_timeout_s": 3, "grace_s": 2, "output_budget_chars": 2000}
ROUGH_LIMITS = {"memory_mb": 512, "pids": 128, "exec_timeout_s": 3, "grace_s": 1}
# Starting pip, walking / or building 50 MB of output takes seconds on a busy machine.
SLOW_LIMITS = {"exec_timeout_s": 120, "output_budget_chars": 2000}


def run(box: Sandbox, code: str) -> Observation:
    """Execute a (dedented) cell."""
    return box.execute(textwrap.dedent(code))


@contextmanager
def raises(kind: type[BaseException], pattern: str) -> Iterator[None]:
    """Like pytest.raises(kind, match=pattern): the block must raise `kind` matching `pattern`."""
    try:
        yield
    except kind as exc:
        assert re.search(pattern, str(exc)), f"{kind.__name__} {str(exc)!r} does not match {pattern!r}"
        return
    raise AssertionError(f"no {kind.__name__} raised (expected one matching {pattern!r})")


def make_spec(tmp: Path, name: str, **limits: Any) -> SandboxSpec:
    """A spec with one input (rec/a.edf) and a data-root file that is not an input."""
    data = tmp / f"{name}-data"
    (data / "rec").mkdir(parents=True)
    (data / "rec" / "a.edf").write_bytes(b"EDF-BYTES-" + name.encode())
    (data / "not_an_input.txt").write_text("must stay invisible")
    return SandboxSpec(
        run_id="test", case_id=f"case-{name}", data_root=data, inputs=("rec/a.edf",),
        workspace=tmp / f"{name}-ws", limits=Limits(**limits),
    )


class Context:
    """One backend under test: its shared sandboxes, fresh directories, and their teardown."""

    def __init__(self, factory: Callable[[], Backend], workdir: Path) -> None:
        self.factory = factory
        self.workdir = Path(workdir)
        self._backend: Backend | None = None
        self._shared: dict[str, Sandbox] = {}
        self._secret_before: str | None = None

    @property
    def backend(self) -> Backend:
        """The backend under test (built once); it must be available here."""
        if self._backend is None:
            backend = self.factory()
            ok, why = backend.available()
            assert ok, f"backend {backend.name} is not available here: {why}"
            self._backend = backend
        return self._backend

    def fresh_backend(self) -> Backend:
        """Another instance of the backend, for checks that replace its kernel command."""
        return self.factory()

    def mktemp(self, name: str) -> Path:
        """A new empty directory under the work dir."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.workdir))

    def spec(self, name: str, **limits: Any) -> SandboxSpec:
        """make_spec in a fresh directory."""
        return make_spec(self.mktemp(name), name, **limits)

    def start(self, name: str, **limits: Any) -> Sandbox:
        """A new sandbox of the backend under test; the caller closes it."""
        return self.backend.start(self.spec(name, **limits))

    @property
    def box(self) -> Sandbox:
        """Shared sandbox for checks that leave the kernel as they found it."""
        if "box" not in self._shared:
            self._secret_before = os.environ.get(SECRET_VAR)
            os.environ[SECRET_VAR] = SECRET  # set before start: must not reach the kernel
            self._shared["box"] = self.start("box", **BOX_LIMITS)
        return self._shared["box"]

    @property
    def rough(self) -> Sandbox:
        """Shared sandbox for checks that kill or restart the kernel."""
        if "rough" not in self._shared:
            self._shared["rough"] = self.start("rough", **ROUGH_LIMITS)
        return self._shared["rough"]

    @property
    def slow(self) -> Sandbox:
        """Shared sandbox with a long timeout."""
        if "slow" not in self._shared:
            self._shared["slow"] = self.start("slow", **SLOW_LIMITS)
        return self._shared["slow"]

    def close(self) -> None:
        """Close the shared sandboxes and restore the controller's environment."""
        while self._shared:
            self._shared.popitem()[1].close()
        if self._secret_before is None:
            os.environ.pop(SECRET_VAR, None)
        else:
            os.environ[SECRET_VAR] = self._secret_before

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Check:
    """One conformance check: raises AssertionError (or anything) when the backend fails it."""

    name: str
    run: Callable[[Context], None]

    def __call__(self, ctx: Context) -> None:
        """Run the check against the context's backend."""
        self.run(ctx)


REGISTERED: list[Check] = []


def register(name: str, fn: Callable[[Context], None]) -> Check:
    """Add a check to the suite under `name` (variants of one function get one name each)."""
    made = Check(name, fn)
    REGISTERED.append(made)
    return made


def check(fn: Callable[[Context], None]) -> Callable[[Context], None]:
    """Register `fn` as a check named after it (order of definition is the order of the suite)."""
    register(fn.__name__, fn)
    return fn
