"""Settings: each default written once, shared by the types that need it."""
import pytest
from pydantic import ValidationError

from runner.core.settings import ControlLimits, ExecutionLimits, ResourceLimits, SandboxLimits, sandbox_limits
from runner.sandbox.base import Limits


def test_the_sandbox_and_the_controls_share_the_execution_defaults():
    assert Limits is SandboxLimits
    for name in ExecutionLimits.model_fields:
        assert getattr(SandboxLimits(), name) == getattr(ControlLimits(), name) == getattr(ExecutionLimits(), name)
    for name in ResourceLimits.model_fields:
        assert getattr(SandboxLimits(), name) == getattr(ResourceLimits(), name)


def test_a_run_s_sandbox_limits_come_from_its_resources_and_controls():
    limits = sandbox_limits(ResourceLimits(memory_mb=512, pids=32, cpus=0.5),
                            ControlLimits(exec_timeout_s=9, grace_s=1, output_budget_chars=300, max_rounds=4))
    assert limits == SandboxLimits(memory_mb=512, pids=32, cpus=0.5, exec_timeout_s=9, grace_s=1,
                                   output_budget_chars=300)


@pytest.mark.parametrize(("kind", "field", "value"), [
    (ResourceLimits, "memory_mb", 64), (ResourceLimits, "cpus", 0), (ControlLimits, "max_rounds", 0),
    (ControlLimits, "exec_timeout_s", -1), (ControlLimits, "tool_calling", "sometimes"),
])
def test_out_of_range_values_name_the_field(kind, field, value):
    with pytest.raises(ValidationError, match=field):
        kind(**{field: value})
