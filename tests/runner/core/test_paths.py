"""Paths and Environment: the variables eegbench reads, read once, and where they point."""
import os
from pathlib import Path

import pytest

from runner.core.paths import PROJECT_ROOT, Environment, Paths, check_writable
from validation.errors import UserError


def test_defaults_are_under_the_project():
    paths = Paths.from_environ({})
    assert paths.runs_dir == PROJECT_ROOT / "runs" and paths.data_root == PROJECT_ROOT / "data"
    assert paths.local_instances == PROJECT_ROOT / "instances" / "local"
    assert paths.instances_dir == PROJECT_ROOT / "instances" and paths.cache_dir == PROJECT_ROOT / ".cache"
    assert (PROJECT_ROOT / "pyproject.toml").is_file()


def test_variables_move_runs_data_and_local_instances(tmp_path):
    paths = Paths.from_environ({"EEGBENCH_RUNS": str(tmp_path / "r"), "EEGBENCH_DATA": str(tmp_path / "d"),
                                "EEGBENCH_LOCAL_INSTANCES": str(tmp_path / "l")})
    assert (paths.runs_dir, paths.data_root, paths.local_instances) == (tmp_path / "r", tmp_path / "d", tmp_path / "l")


def test_relative_and_home_paths_are_resolved(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    paths = Paths.from_environ({"EEGBENCH_RUNS": "here", "EEGBENCH_DATA": "~/d"})
    assert paths.runs_dir == tmp_path / "here" and paths.data_root == tmp_path / "home" / "d"


def test_the_environment_is_a_snapshot(monkeypatch):
    monkeypatch.setenv("EEGBENCH_API_KEY", "k1")
    env = Environment.from_os()
    monkeypatch.setenv("EEGBENCH_API_KEY", "k2")
    assert env.get("EEGBENCH_API_KEY") == "k1"
    monkeypatch.setenv("EEGBENCH_BASE_URL", "")
    assert Environment.from_os().get("EEGBENCH_BASE_URL") is None  # empty is unset
    assert Environment(paths=Paths(project_root=Path("/p"))).paths.project_root == Path("/p")


def test_a_directory_that_can_be_made_is_writable(tmp_path):
    check_writable(tmp_path / "runs" / "deeper", "the runs directory", "EEGBENCH_RUNS")


def test_an_unwritable_directory_is_named_with_its_owner_and_the_variable(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode))
    with pytest.raises(UserError, match=f"^the runs directory={locked}/runs: {locked} is not writable by uid "
                                        f"{os.geteuid()} \\(it belongs to uid {os.geteuid()}\\): set EEGBENCH_RUNS"):
        check_writable(locked / "runs", "the runs directory", "EEGBENCH_RUNS")


def test_a_file_in_the_way_is_named(tmp_path):
    (tmp_path / "data").write_text("not a folder")
    with pytest.raises(UserError, match=f"^EEGBENCH_DATA={tmp_path}/data/x: {tmp_path}/data is not a directory$"):
        check_writable(tmp_path / "data" / "x", "EEGBENCH_DATA", "EEGBENCH_DATA")
