"""A new backend is one registration away from the whole conformance suite, and the suite is
not vacuous: a backend with one isolation flaw fails it.

`toy` reuses the local backend's machinery under another name with its own state dir; it is
registered in ONE place (the `toy` fixture) and runs every check of runner.sandbox.conformance
unchanged. The broken backends are the same machinery with one flaw each.
"""
from __future__ import annotations

import os

import pytest

from runner.sandbox import BACKENDS, backend_names, conformance, sandbox_choices
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
    with conformance.Context(lambda: BACKENDS.get(toy), tmp_path_factory.mktemp("toy")) as ctx:
        yield ctx


def test_a_registered_backend_is_offered_as_a_sandbox_choice(toy):
    assert toy in backend_names() and toy in sandbox_choices()


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda c: c.name)
def test_toy_backend_passes_every_conformance_check(context, check):
    assert context.backend.name == "toy" and str(context.backend.state_dir).endswith("eegbench-toy")
    check(context)


# --- broken backends: one flaw each, and the check that must catch it ----------------------


def shares_the_host_network(argv: list[str]) -> list[str]:
    return [a for a in argv if a != "--unshare-net"]


def keeps_root(argv: list[str]) -> list[str]:
    """Drop the `setpriv ... --` prefix that takes uid 0 and every capability away."""
    start = argv.index("setpriv")
    return argv[:start] + argv[argv.index("--", start) + 1:]


# flaw -> (argv edit, the check that must fail, what its failure message shows)
FLAWS = {
    "shares_the_host_network": (shares_the_host_network, "no_network_outside_loopback_or_dns", "CONNECTED"),
    "keeps_root": (keeps_root, "kernel_runs_unprivileged_without_capabilities", "uid 0 0 0"),
}


def broken_backend(flaw):
    class BrokenSandbox(LocalSandbox):
        def _launch_argv(self) -> list[str]:
            return flaw(super()._launch_argv())

    class BrokenBackend(LocalBackend):
        name = f"broken-{flaw.__name__}"

        def _new_sandbox(self, spec: SandboxSpec) -> LocalSandbox:
            return BrokenSandbox(spec, self.state_dir, self.kernel_command)

    return BrokenBackend()


@pytest.mark.parametrize("name", FLAWS)
def test_a_backend_with_a_flaw_fails_the_check_that_covers_it(name, tmp_path):
    flaw, check_name, evidence = FLAWS[name]
    if flaw is keeps_root and os.geteuid() != 0:
        pytest.skip("only a root controller drops privileges with setpriv")
    with conformance.Context(lambda: broken_backend(flaw), tmp_path) as ctx:
        with pytest.raises(AssertionError, match=evidence):
            conformance.by_name(check_name)(ctx)
        assert ctx.box.execute("print('the sandbox itself works')").status == "ok"
