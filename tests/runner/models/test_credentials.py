"""Where an endpoint's key comes from, and what may leave the machine (runner/models/credentials.py)."""
import pickle
from pathlib import Path

import pytest

from runner.core.config import RunConfig
from runner.models import credentials
from runner.models.credentials import endpoint_from_env
from runner.run.bundle import WorkerSpec
from runner.run.executors.ray_actor import endpoint_problem
from validation.errors import UserError

KEY = "sk-test-3f9c1e0a7b"


def test_a_key_comes_from_its_variable_before_its_file(tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(f"{KEY}\n")
    assert credentials.read_key({"EEGBENCH_API_KEY_FILE": str(key_file)}, "EEGBENCH_API_KEY") == KEY
    both = {"EEGBENCH_API_KEY": "sk-direct", "EEGBENCH_API_KEY_FILE": str(key_file)}
    assert credentials.read_key(both, "EEGBENCH_API_KEY") == "sk-direct"
    assert credentials.read_key({}, "EEGBENCH_API_KEY") is None
    # a file for the second name serves when the first is unset
    assert credentials.first_key({"OPENAI_API_KEY_FILE": str(key_file)}, credentials.API_KEY_VARS) == KEY


def test_an_unreadable_or_empty_key_file_is_refused_naming_variable_and_path(tmp_path):
    missing = tmp_path / "absent"
    with pytest.raises(UserError, match=rf"EEGBENCH_API_KEY_FILE={missing}: cannot read the key file"):
        credentials.read_key({"EEGBENCH_API_KEY_FILE": str(missing)}, "EEGBENCH_API_KEY")
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(UserError, match="the key file is empty"):
        endpoint_from_env({"EEGBENCH_BASE_URL": "http://a/v1", "EEGBENCH_API_KEY_FILE": str(empty)})


def test_what_a_remote_worker_receives_holds_urls_and_key_paths_never_a_key(tmp_path):
    env = {"EEGBENCH_BASE_URL": "http://a/v1", "EEGBENCH_API_KEY": KEY, "OPENAI_API_KEY": KEY,
           "EEGBENCH_PARSER_BASE_URL": "http://p/v1", "EEGBENCH_PARSER_API_KEY": KEY,
           "OPENAI_API_KEY_FILE": "/run/secrets/key", "EEGBENCH_DATA": "/data", "HOME": "/root"}
    shared = credentials.shareable(env)
    assert shared == {"EEGBENCH_BASE_URL": "http://a/v1", "EEGBENCH_PARSER_BASE_URL": "http://p/v1",
                      "OPENAI_API_KEY_FILE": "/run/secrets/key"}
    config = RunConfig(run_id="r", model="openai:m")
    spec = WorkerSpec(config=config, run_id="r", data_root=Path("/data"), variables=shared)
    assert KEY.encode() not in pickle.dumps(spec)  # what Ray puts in its object store


def test_a_node_without_the_key_is_named_in_the_preflight(tmp_path):
    spec = WorkerSpec(config=RunConfig(run_id="r", model="openai:m"), run_id="r", data_root=Path("/data"),
                      variables={"EEGBENCH_BASE_URL": "http://a/v1"})
    problem = endpoint_problem(spec, {})
    assert problem is not None and "EEGBENCH_API_KEY" in problem and "before `ray start`" in problem
    assert endpoint_problem(spec, {"OPENAI_API_KEY": KEY}) is None
    oracle = WorkerSpec(config=RunConfig(run_id="r", model="oracle"), run_id="r", data_root=Path("/data"))
    assert endpoint_problem(oracle, {}) is None  # no endpoint, no key needed
