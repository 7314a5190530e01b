"""A new backend is one registration away from the whole conformance suite, and the suite is
not vacuous: a backend with one isolation flaw fails it.

`toy` reuses the local backend's machinery under another name with its own state dir; it is
registered in ONE place (the `toy` fixture) and runs every check of runner.sandbox.conformance
unchanged. The broken backends are the same machinery with one flaw each.
"""
from __future__ import annotations

import os

import pytest

from runner.sandbox import BACKENDS, backend_names, conformance, get_backend, sandbox_choices, spawn
from runner.sandbox.base import SandboxSpec
from runner.sandbox.layout import state_dir
from runner.sandbox.local import LocalBackend, LocalSandbox

pytestmark = pytest.mark.integration


class ToyBackend(LocalBackend):
    """The local machinery, registered as another backend with state of its own."""

    name = "toy"

    def __init__(self) -> None:
        super().__init__(state_dir=state_dir("toy"))


@pytest.fixture(scope="module")
def toy():
    BACKENDS.register("toy", ToyBackend)
    try:
        yield "toy"
    finally:
        BACKENDS.unregister("toy")
    assert "toy" not in backend_names()


@pytest.fixture(scope="module")
def context(toy, tmp_path_factory):
    with conformance.Context(lambda: get_backend(toy), tmp_path_factory.mktemp("toy")) as ctx:
        yield ctx


def test_a_registered_backend_is_offered_as_a_sandbox_choice(toy):
    assert toy in backend_names() and toy in sandbox_choices()


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda c: c.name)
def test_toy_backend_passes_every_conformance_check(context, check):
    assert context.backend.name == "toy" and context.backend.state_dir == state_dir("toy")
    check(context)


# --- broken backends: one flaw each, and the check that must catch it ----------------------


def shares_the_host_network(argv: list[str]) -> list[str]:
    """The sandbox (bwrap's command line) without a network namespace of its own."""
    return [a for a in argv if a != "--unshare-net"]


def keeps_root(argv: list[str]) -> list[str]:
    """The kernel's reaper with a privilege drop that does nothing: the kernel keeps the root
    controller's uid 0 and capabilities."""
    i = argv.index(spawn.REAPER)
    flawed = spawn.REAPER.replace("def drop_privileges(uid):\n", "def drop_privileges(uid):\n    return\n")
    assert flawed != spawn.REAPER
    return [*argv[:i], flawed, *argv[i + 1:]]


# flaw -> (which command line it edits, the edit, the check that must fail, what its failure
# message shows). Only a root controller has a root to keep.
FLAWS = {
    "shares_the_host_network": ("holder", shares_the_host_network, "no_network_outside_loopback_or_dns",
                                "CONNECTED"),
    **({"keeps_root": ("kernel", keeps_root, "kernel_runs_unprivileged_without_capabilities", "uid 0 0 0")}
       if os.geteuid() == 0 else {}),
}


def broken_backend(where, flaw):
    class BrokenSandbox(LocalSandbox):
        def _holder_argv(self) -> list[str]:
            argv = super()._holder_argv()
            return flaw(argv) if where == "holder" else argv

        def _kernel_argv(self) -> list[str]:
            argv = super()._kernel_argv()
            return flaw(argv) if where == "kernel" else argv

    class BrokenBackend(LocalBackend):
        name = f"broken-{flaw.__name__}"
        fork_kernels = where != "kernel"  # the flawed reaper is a cold kernel's (its command line)

        def _new_sandbox(self, spec: SandboxSpec) -> LocalSandbox:
            return BrokenSandbox(spec, self.state_dir, self.kernel_command)

    return BrokenBackend()


@pytest.mark.parametrize("name", FLAWS)
def test_a_backend_with_a_flaw_fails_the_check_that_covers_it(name, tmp_path):
    where, flaw, check_name, evidence = FLAWS[name]
    with conformance.Context(lambda: broken_backend(where, flaw), tmp_path) as ctx:
        with pytest.raises(AssertionError, match=evidence):
            conformance.by_name(check_name)(ctx)
        assert ctx.box.execute("print('the sandbox itself works')").status == "ok"
