"""`eegbench eval`'s checks of the limits a run asks for, made before the run directory exists."""
import pytest

from runner.config import RunConfig
from runner.evaluate import check_sandbox_limits
from runner.sandbox.local import LocalBackend
from runner.settings import ResourceLimits
from validation.errors import UserError


class RlimitsOnly(LocalBackend):
    """A local backend on a host where the controller cannot write cgroups."""

    def shared_process_budget(self):
        return "limits via rlimits (cgroups not writable: test)"


def config(**fields):
    return RunConfig(run_id="r", model="oracle", resources=ResourceLimits(workspace_mb=0), **fields)


@pytest.mark.parametrize("fields, option", [({"jobs": 2}, "--jobs 2"), ({"warm_pool": True}, "--warm-pool")])
def test_concurrent_sandboxes_sharing_one_process_budget_are_refused(fields, option):
    with pytest.raises(UserError, match=f"^{option}: concurrent sandboxes would share one process budget"):
        check_sandbox_limits(config(**fields), RlimitsOnly())


def test_one_sandbox_at_a_time_may_use_the_rlimit_fallback():
    check_sandbox_limits(config(jobs=1), RlimitsOnly())  # the contract: refused only when concurrent
    with pytest.raises(UserError):
        check_sandbox_limits(config(jobs=3), RlimitsOnly())


def test_workspace_bound_below_ext4s_minimum_names_the_option():
    with pytest.raises(ValueError, match="(?s)workspace_mb.*at least 16"):
        ResourceLimits(workspace_mb=8)
