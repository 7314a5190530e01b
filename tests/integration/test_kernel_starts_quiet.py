"""A model's first cell sees only what its own code printed: importing the EEG stack in a fresh
kernel says nothing (no tqdm "IProgress not found" warning, no font cache or numba notes), on
every backend; tqdm still reports progress as console text, and the model's own warnings still
reach it. Docker is required: a missing daemon or image fails the docker half (`make image`).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from runner.core.transcript import Observation
from runner.sandbox import get_backend
from runner.sandbox.base import Limits, Sandbox, SandboxSpec
from runner.sandbox.cell import NO_OUTPUT

NEEDS_DOCKER = {"docker"}
# What a model's first cell typically imports; tqdm.auto is what yasa and mne's bars load.
IMPORTS = "import numpy, scipy, pandas, matplotlib, mne, yasa\nimport tqdm.auto\n"
# Imports take seconds, and several times that on a busy 2-core machine.
LIMITS = Limits(exec_timeout_s=300)


@dataclass
class Fresh:
    box: Sandbox
    first: Observation  # the observation of IMPORTS, the kernel's first cell


def backend_param(name: str):
    return pytest.param(name, marks=[pytest.mark.docker] if name in NEEDS_DOCKER else [], id=name)


@pytest.fixture(scope="module", params=[backend_param(n) for n in ("local", "docker")])
def fresh(request, tmp_path_factory) -> Iterator[Fresh]:
    backend = get_backend(request.param)
    ok, why = backend.available()
    assert ok, f"backend {request.param} is not available here ({why}); for docker run `make image`"
    tmp = tmp_path_factory.mktemp(f"quiet-{request.param}")
    (tmp / "data").mkdir()
    spec = SandboxSpec("quiet", f"quiet-{request.param}", tmp / "data", (), tmp / "ws", LIMITS)
    with backend.start(spec) as box:
        yield Fresh(box, box.execute(IMPORTS))


def test_importing_the_eeg_stack_in_a_fresh_kernel_prints_nothing(fresh):
    # Every field the model is shown: stdout, stderr, warnings and display data all land in
    # text, so a silent success is exactly the no-output message.
    first = fresh.first
    assert first.text == NO_OUTPUT, f"the first cell's observation carries noise: {first.text!r}"
    assert first.status == "ok"
    assert (first.error_name, first.error_value) == (None, None)
    assert first.restarted is False and first.truncated_chars == 0


def test_tqdm_progress_reaches_the_model_as_a_few_console_lines(fresh):
    # ~2 s of loop: at tqdm's stock 0.1 s redraw interval that is ~20 redraws of the bar.
    obs = fresh.box.execute("import time\nfrom tqdm.auto import tqdm\nfor _ in tqdm(range(100)):\n    time.sleep(0.02)\n")
    assert obs.status == "ok", obs.text
    redraws = obs.text.split("\r")[1:]
    assert redraws and redraws[-1].startswith("100%|") and "100/100" in redraws[-1], obs.text
    assert len(redraws) <= 3, f"{len(redraws)} redraws of one bar fill the observation: {obs.text!r}"


def test_the_models_own_warnings_still_reach_it(fresh):
    obs = fresh.box.execute("import warnings\nwarnings.warn('IProgress is mine to report')\n")
    assert obs.status == "ok" and "UserWarning: IProgress is mine to report" in obs.text, obs.text
