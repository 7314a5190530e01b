"""The backend registry and SANDBOX= choices (no sandbox started, no Docker needed)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from extensions.registry import UnknownName
from runner.sandbox import (
    BACKENDS,
    backend_names,
    choose_backend,
    get_backend,
    sandbox_choices,
)
from runner.sandbox.base import Backend, SandboxError
from validation.errors import InfrastructureError

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def test_builtin_backends_are_registered_in_order():
    assert backend_names() == ("local", "docker")
    assert sandbox_choices() == ("auto", "local", "docker")
    assert [get_backend(n).name for n in backend_names()] == ["local", "docker"]


def test_unknown_backend_is_a_user_error_listing_the_known_ones():
    with pytest.raises(UnknownName, match="unknown sandbox backend 'nope'; known: local, docker"):
        get_backend("nope")
    with pytest.raises(UnknownName):
        choose_backend("nope")


def test_sandbox_error_is_an_infrastructure_error():
    assert issubclass(SandboxError, InfrastructureError) and issubclass(SandboxError, RuntimeError)


def test_a_registered_backend_is_offered_and_chosen_by_name():
    class Toy(Backend):
        name = "toy-registry"

        def available(self):
            return True, "always"

        def start(self, spec):
            raise SandboxError("toy")

        def collect_stale(self):
            return 0

        def kernel_python(self):
            return "/bin/python"

        def own_state(self):
            return set()

    BACKENDS.register("toy-registry", Toy)
    try:
        assert "toy-registry" in sandbox_choices() and "toy-registry" in backend_names()
        backend, why = choose_backend("toy-registry")
        assert isinstance(backend, Toy) and why == "asked for toy-registry: always"
        with pytest.raises(ValueError, match="registered twice"):
            BACKENDS.register("toy-registry", Toy)
    finally:
        BACKENDS.unregister("toy-registry")
    assert "toy-registry" not in sandbox_choices()


def test_the_docker_sdk_loads_only_when_the_docker_backend_is_built():
    code = ("import sys\nfrom runner.sandbox import get_backend\nget_backend('local')\n"
            "assert 'docker' not in sys.modules, 'docker SDK imported'\n"
            "get_backend('docker').available()\nassert 'docker' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_auto_takes_the_local_backend_for_a_user(monkeypatch):
    monkeypatch.setattr("runner.sandbox.os.geteuid", lambda: 1000)
    backend, why = choose_backend("auto")
    assert backend.name == "local" and why.startswith("auto: local (not root: docker is for root)")
