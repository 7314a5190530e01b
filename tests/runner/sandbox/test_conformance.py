"""The sandbox contract, held to every registered backend: runner.sandbox.conformance's checks
(hostile cells, limits, timeouts, teardown) run for real against each name in BACKENDS.

A backend registered in runner/sandbox/__init__.py is picked up here without editing this file.
Docker is not optional: when the daemon does not answer or the image is not built, the docker
half FAILS (run `make image`). Backend-specific checks (cgroup files, rlimit fallback,
container settings, stale collection) live in test_local.py and test_docker.py.
"""
from __future__ import annotations

import pytest

from runner.sandbox import BACKENDS, conformance, get_backend

pytestmark = pytest.mark.integration
NEEDS_DOCKER = {"docker"}


def backend_param(name: str):
    return pytest.param(name, marks=[pytest.mark.docker] if name in NEEDS_DOCKER else [], id=name)


@pytest.fixture(scope="module", params=[backend_param(n) for n in BACKENDS.names()])
def context(request, tmp_path_factory):
    name = request.param
    with conformance.Context(lambda: get_backend(name), tmp_path_factory.mktemp(f"conformance-{name}")) as ctx:
        yield ctx


@pytest.mark.parametrize("check", conformance.CHECKS, ids=lambda c: c.name)
def test_backend_conforms(context, check):
    check(context)
