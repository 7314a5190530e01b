"""`eegbench eval`'s checks of the names and limits a run asks for, made before the run directory exists."""
import io
import os

import pytest
from rich.console import Console

from runner.benchmark import catalog
from runner.commands.eval_checks import check_registered
from runner.commands.evaluate import check_sandbox_limits, evaluate, installation_verdict, unwritable
from runner.core.config import RunConfig
from runner.core.paths import Environment, Paths
from runner.core.settings import ResourceLimits
from runner.run.records import ResultRecord
from runner.sandbox import layout, workspace
from runner.sandbox.local import LocalBackend
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


@pytest.mark.parametrize("field", ["paradigm", "sandbox", "executor"])
def test_a_name_nothing_registered_stops_the_run_before_its_directory_exists(field, tmp_path):
    bad = config(**{field: "nope"}).model_copy(update={"run_id": "bad-name"})
    with pytest.raises(UserError, match=f"^run bad-name: {field} 'nope' is not one of .*"):
        check_registered(bad)
    variables = {"EEGBENCH_RUNS": str(tmp_path / "runs")}
    env = Environment(paths=Paths.from_environ(variables), variables=variables)
    with pytest.raises(UserError, match=f"{field} 'nope'"):
        evaluate(bad, env=env, console=Console(file=io.StringIO()))
    assert not (tmp_path / "runs").exists()
    check_registered(config(paradigm="brainagent", sandbox="auto", executor="ray"))  # every real name passes


def test_workspace_bound_below_ext4s_minimum_names_the_option():
    with pytest.raises(ValueError, match="(?s)workspace_mb.*at least 16"):
        ResourceLimits(workspace_mb=8)


class UserDocker(LocalBackend):
    """A backend that cannot bound a workspace without root (Docker's loop-mounted ext4)."""

    name = "docker"
    tmpfs_workspace = False


def test_a_user_asking_docker_for_a_bounded_workspace_is_told_what_to_do(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    bounded = RunConfig(run_id="r", model="oracle", resources=ResourceLimits(workspace_mb=2048))
    with pytest.raises(UserError, match="^--workspace-mb 2048: on the docker backend .* root controller; "
                                        "use --sandbox local .* or pass --workspace-mb 0"):
        check_sandbox_limits(bounded, UserDocker())


def test_a_scratch_dir_someone_else_owns_stops_the_run_naming_it(monkeypatch, tmp_path):
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    owner = os.geteuid()
    monkeypatch.setattr(layout.os, "geteuid", lambda: owner + 4242)  # we are someone else
    monkeypatch.setattr(workspace, "SCRATCH_ROOT", layout.user_dir() / "work")
    layout.user_dir().mkdir(mode=0o700)  # made by its real owner
    with pytest.raises(UserError, match=f"{layout.user_dir()} is owned by uid {owner}, .*: remove it .*TMPDIR"):
        check_sandbox_limits(config(jobs=1), RlimitsOnly())


def result(case_id: str, score: float) -> ResultRecord:
    return ResultRecord(case_id=case_id, task_id=case_id.rsplit("-", 1)[0], bench_subset="s", status="solution",
                        score=score, rounds=1, prompt_tokens=0, completion_tokens=0, duration_s=0.0)


def test_the_installation_check_leaves_out_files_a_paradigm_cannot_write():
    instances = catalog.select(catalog.load_all(), ["fa_pipeline_plux_qc-01", "fa_alpha_relpower-01"])
    assert unwritable(instances, "tools") == {"fa_pipeline_plux_qc-01"}  # it asks for a CSV
    assert unwritable(instances, "codeact") == set()
    results = [result("fa_pipeline_plux_qc-01", 80.0), result("fa_alpha_relpower-01", 100.0)]
    assert "install works" in installation_verdict(results, unwritable(instances, "tools"))
    assert "1 of 2 instances did not score 100" in installation_verdict(results, unwritable(instances, "codeact"))
    broken = [result("fa_pipeline_plux_qc-01", 80.0), result("fa_alpha_relpower-01", 50.0)]
    assert "fa_alpha_relpower-01): the install is broken" in installation_verdict(broken, unwritable(instances, "tools"))
