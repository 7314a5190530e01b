"""What only the docker backend has, against the real daemon and image: the container's
settings, labels, stale collection and SANDBOX=auto's choice; and, without a daemon, the
image's content tag. The contract both backends share is tested in test_conformance.py.
A missing daemon or image fails the daemon tests (run `make image`)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from runner.sandbox import choose_backend, get_backend, image
from runner.sandbox import docker as docker_backend
from runner.sandbox.base import Limits, SandboxSpec

PROJECT_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def backend():
    b = get_backend("docker")
    ok, why = b.available()
    assert ok, why
    return b


@pytest.fixture(scope="module")
def api():
    client = docker.from_env()
    yield client.api
    client.close()


def spec(tmp: Path, name: str, **limits) -> SandboxSpec:
    (tmp / "data" / "rec").mkdir(parents=True)
    (tmp / "data" / "rec" / "a.edf").write_bytes(b"x")
    return SandboxSpec(run_id="run-7", case_id=f"case-{name}", data_root=tmp / "data",
                       inputs=("rec/a.edf",), workspace=tmp / "ws", limits=Limits(**limits))


@pytest.mark.integration
@pytest.mark.docker
def test_container_is_locked_down_and_labelled(backend, api, tmp_path):
    with backend.start(spec(tmp_path, "settings", memory_mb=768, pids=99, cpus=0.5)) as box:
        info = api.inspect_container(box.container_id)
    host, config = info["HostConfig"], info["Config"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is True and host["Privileged"] is False
    assert host["Memory"] == host["MemorySwap"] == 768 * 1024**2
    assert host["PidsLimit"] == 99 and host["NanoCpus"] == 500_000_000
    assert set(host["Tmpfs"]) == {"/tmp", "/dev/shm"}
    assert config["User"] == "65534:65534" and config["Image"] == backend.image
    assert config["Labels"]["eegbench.run"] == "run-7" and config["Labels"]["eegbench.case"] == "case-settings"
    assert config["Labels"]["eegbench.controller"] == str(os.getpid())
    mounts = {m["Destination"]: (m["Source"], m["RW"]) for m in info["Mounts"]}
    assert mounts["/input/rec/a.edf"] == (str(tmp_path / "data" / "rec" / "a.edf"), False)
    assert mounts["/workspace"] == (str(tmp_path / "ws"), True)
    assert set(mounts) == {"/input/rec/a.edf", "/workspace", "/kernel"}  # nothing else of the host
    assert len(box.sock.as_posix()) + 5 < 107  # ipc socket paths fit in sun_path


@pytest.mark.integration
@pytest.mark.docker
def test_describe_records_the_image_id(backend, api):
    described = backend.describe()
    assert described["name"] == "docker" and described["image"] == backend.image
    assert described["image_id"] == api.inspect_image(backend.image)["Id"]


def test_image_tag_is_a_content_hash_of_dockerfile_and_requirements(tmp_path):
    for name in image.DEFINING_FILES:
        (tmp_path / name).write_bytes((image.IMAGE_DIR / name).read_bytes())
    assert image.image_tag(tmp_path) == image.image_tag()
    (tmp_path / "requirements.txt").write_text("numpy==1.0\n")
    assert image.image_tag(tmp_path) != image.image_tag()


@pytest.mark.integration
@pytest.mark.docker
def test_auto_takes_docker_when_it_is_usable_and_local_otherwise(monkeypatch):
    chosen, why = choose_backend("auto")
    assert chosen.name == "docker" and "auto: docker is available" in why
    monkeypatch.setattr(docker_backend, "image_tag", lambda: "eegbench-kernel-never-built:0")
    chosen, why = choose_backend("auto")
    assert chosen.name == "local" and "eegbench-kernel-never-built:0 is not built" in why


STARTER = """
import json, sys
from pathlib import Path
from runner.sandbox import get_backend
from runner.sandbox.base import SandboxSpec
root = Path(sys.argv[1])
(root / "data").mkdir()
box = get_backend("docker").start(SandboxSpec(run_id="t", case_id="orphan", data_root=root / "data",
                                              inputs=(), workspace=root / "ws"))
print(json.dumps({"box": str(box.box), "container": box.container_id}), flush=True)
import time; time.sleep(600)
"""


@pytest.mark.integration
@pytest.mark.docker
def test_collect_stale_removes_containers_of_a_killed_controller(backend, api, tmp_path):
    with backend.start(spec(tmp_path, "live")) as live:
        (tmp_path / "orphan").mkdir()
        child = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path / "orphan")],
                                 stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
        try:
            made = json.loads(child.stdout.readline())
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert api.inspect_container(made["container"])["State"]["Running"]  # outlives its controller
        assert backend.collect_stale() >= 1
        with pytest.raises(docker.errors.NotFound):
            api.inspect_container(made["container"])
        assert not Path(made["box"]).exists()
        assert live.execute("print(1)").text == "1\n"  # a live controller's container is left alone
