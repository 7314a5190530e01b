"""What a sandbox looks like, built without starting one: the shared layout, the bubblewrap
command, the container settings (no root, no bwrap run, no Docker daemon needed)."""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from runner.benchmark import numerics
from runner.sandbox import bwrap, container, kernel, layout
from runner.sandbox.base import Limits, SandboxError, SandboxSpec
from runner.sandbox.docker import STATE_DIR as DOCKER_STATE_DIR
from runner.sandbox.local import STATE_DIR as LOCAL_STATE_DIR

PROJECT_ROOT = Path(__file__).resolve().parents[3]
COMMAND = ["/k/python", "-c", "kernel"]


def spec(tmp: Path, inputs=("rec/a.edf",), libraries=(), **limits) -> SandboxSpec:
    (tmp / "data" / "rec").mkdir(parents=True, exist_ok=True)
    (tmp / "data" / "rec" / "a.edf").write_bytes(b"x")
    return SandboxSpec(run_id="r", case_id="case-7", data_root=tmp / "data", inputs=tuple(inputs),
                       workspace=tmp / "ws", limits=Limits(**limits), libraries=tuple(libraries))


def package(tmp: Path, name: str) -> Path:
    pkg = tmp / "libs" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    return pkg


# --- layout ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rel, message", [
    ("/etc/passwd", "must be relative to the data root"),
    ("../secret", "must be relative to the data root"),
    ("rec/absent.edf", "absent.edf does not exist"),
])
def test_bad_inputs_are_refused_naming_the_case(tmp_path, rel, message):
    with pytest.raises(SandboxError, match=f"case-7: .*{message}"):
        layout.input_mounts(spec(tmp_path, inputs=[rel]))


def test_inputs_mount_under_input_and_libraries_under_the_library_root(tmp_path):
    s = spec(tmp_path, libraries=[package(tmp_path, "mylib")])
    assert layout.input_mounts(s) == [(tmp_path / "data" / "rec" / "a.edf", "/input/rec/a.edf")]
    assert layout.library_mounts(s) == [(tmp_path / "libs" / "mylib", f"{layout.LIBRARY_ROOT}/mylib")]


def test_sandbox_env_is_ours_alone_with_threads_pinned_to_the_cpu_limit():
    env = layout.sandbox_env(Limits(cpus=2.5), "/opt/venv/bin/python")
    assert env["PATH"].startswith("/opt/venv/bin:") and env["HOME"] == "/workspace"
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "3"
    assert not any(key.startswith("EEGBENCH") for key in env)
    assert {k: env[k] for k in numerics.X86_PINS if k in env} == numerics.pinned_env()


@pytest.mark.parametrize("state_dir", [LOCAL_STATE_DIR, DOCKER_STATE_DIR])
def test_state_dirs_leave_room_for_socket_paths(state_dir):
    box = state_dir / f"{4_194_304}-{'f' * 8}" / "sock"  # the longest pid and name
    kernel.socket_dir_ok(box, layout.INSIDE_SOCKET_DIR)


def test_machine_state_is_per_user_under_the_temp_dir(monkeypatch, tmp_path):
    assert LOCAL_STATE_DIR.parent == DOCKER_STATE_DIR.parent == layout.user_dir()
    assert layout.user_dir().name == f"eegbench-{os.geteuid()}"
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(layout.os, "geteuid", lambda: 1234)
    assert layout.state_dir("sbx") == tmp_path / "eegbench-1234" / "sbx"


def test_state_dirs_are_made_private(monkeypatch, tmp_path):
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    layout.ensure_private_dir(layout.state_dir("sbx"))
    for d in (layout.user_dir(), layout.state_dir("sbx")):
        assert d.stat().st_mode & 0o777 == 0o700 and d.stat().st_uid == os.geteuid()


def test_a_user_dir_someone_else_made_is_refused_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    layout.user_dir().mkdir(mode=0o700)
    owner = os.geteuid()
    monkeypatch.setattr(layout.os, "geteuid", lambda: owner + 4242)  # we are now someone else
    with pytest.raises(SandboxError, match=f"eegbench-{owner + 4242} is owned by uid {owner}.*TMPDIR"):
        layout.ensure_private_dir(layout.state_dir("sbx"))


def test_a_user_dir_others_can_write_in_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    layout.user_dir().mkdir()
    layout.user_dir().chmod(0o757)
    with pytest.raises(SandboxError, match="writable by others \\(mode 757\\)"):
        layout.ensure_private_dir(layout.user_dir())


def test_an_own_user_dir_only_others_could_read_is_closed_not_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(layout.tempfile, "gettempdir", lambda: str(tmp_path))
    layout.user_dir().mkdir()
    layout.user_dir().chmod(0o755)  # what a umask of 022 makes
    layout.ensure_private_dir(layout.state_dir("sbx"))
    assert [stat.S_IMODE(d.stat().st_mode) for d in (layout.user_dir(), layout.state_dir("sbx"))] == [0o700, 0o700]


def test_workspace_is_prepared_with_its_file_check_dir(tmp_path):
    layout.prepare_workspace(tmp_path / "ws", as_root=False)
    assert (tmp_path / "ws" / layout.FILE_CHECK_DIR).is_dir()


# --- the bubblewrap command ------------------------------------------------------------------


def binds(argv: list[str]) -> dict[str, tuple[str, str]]:
    """Destination -> (kind, source) of every bind in a bwrap command line."""
    found = {}
    for i, arg in enumerate(argv):
        if arg in ("--bind", "--ro-bind"):
            found[argv[i + 2]] = (arg, argv[i + 1])
    return found


@pytest.mark.parametrize("as_root", [True, False])
def test_bwrap_argv_isolates_and_ends_with_the_kernel(tmp_path, as_root):
    argv = bwrap.bwrap_argv(spec(tmp_path), tmp_path / "box", COMMAND, as_root)
    assert argv[0] == "bwrap" and argv[-len(COMMAND):] == COMMAND
    for option in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--clearenv"):
        assert option in argv
    assert ("setpriv" in argv) == as_root and ("--unshare-user" in argv) == (not as_root)
    mounted = binds(argv)
    assert mounted["/workspace"] == ("--bind", str(tmp_path / "ws"))
    assert mounted["/kernel"] == ("--bind", str(tmp_path / "box" / "sock"))
    assert mounted["/input/rec/a.edf"] == ("--ro-bind", str(tmp_path / "data" / "rec" / "a.edf"))
    assert mounted["/etc/passwd"] == ("--ro-bind", str(tmp_path / "box" / "etc" / "passwd"))
    assert not any(dest.startswith(str(PROJECT_ROOT)) for dest in mounted)  # the project never appears
    writable = sorted(dest for dest, (kind, _) in mounted.items() if kind == "--bind")
    assert writable == ["/kernel", "/workspace"]


def test_the_sandbox_root_is_read_only_and_the_command_is_its_pid_1(tmp_path):
    argv = bwrap.bwrap_argv(spec(tmp_path), tmp_path / "box", COMMAND, as_root=False)
    assert "--as-pid-1" in argv
    i = argv.index("--remount-ro")  # after every mount and directory made on the root
    assert argv[i + 1] == "/" and not any(a in ("--bind", "--ro-bind", "--dir", "--tmpfs") for a in argv[i:])


def test_a_tmpfs_workspace_is_sized_and_not_the_host_directory(tmp_path):
    argv = bwrap.bwrap_argv(spec(tmp_path), tmp_path / "box", COMMAND, as_root=False, workspace_tmpfs_mb=64)
    assert "/workspace" not in binds(argv) and str(tmp_path / "ws") not in argv
    tmpfs = [argv[i - 2: i + 2] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert ["--size", str(64 * 2**20), "--tmpfs", "/workspace"] in tmpfs
    assert argv[argv.index(f"/workspace/{layout.FILE_CHECK_DIR}") - 1] == "--dir"


def test_the_holder_only_reaps_and_says_when_it_is_ready():
    command = bwrap.holder_command("/opt/venv/bin/python")
    assert command[:4] == ["/opt/venv/bin/python", "-I", "-S", "-c"]
    assert f"READY = {bwrap.HOLDER_READY!r}" in command[4] and "waitpid" in command[4]
    compile(command[4], "holder", "exec")


def test_a_virtualenv_is_mounted_at_the_env_view_not_at_its_host_path():
    if not bwrap.in_virtualenv():
        pytest.skip("the controller does not run from a virtualenv")
    view = bwrap.env_view()
    assert (sys.prefix, str(view / "venv")) in bwrap.python_binds()
    assert bwrap.kernel_python().startswith(str(view / "venv") + "/")
    assert view.parent == layout.user_dir() and not str(view).startswith(str(Path(sys.prefix).parent))


def test_the_env_view_links_to_the_virtualenv_and_the_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    cache = tmp_path / "jit-cache"
    cache.mkdir()
    bwrap.link_env_view(cache)
    view = bwrap.env_view()
    assert view.parent == tmp_path / f"eegbench-{os.geteuid()}"
    assert os.readlink(view / "jit") == str(cache)
    if bwrap.in_virtualenv():
        assert os.readlink(view / "venv") == sys.prefix
        assert os.path.samefile(bwrap.kernel_python().replace(str(view / "venv"), sys.prefix), sys.executable)
    other = tmp_path / "another-cache"
    other.mkdir()
    bwrap.link_env_view(other)  # replaced in place
    assert os.readlink(view / "jit") == str(other) and sorted(p.name for p in view.iterdir()) == sorted(
        ["jit", *(["venv"] if bwrap.in_virtualenv() else [])])


def test_the_env_view_is_bound_after_the_tmpfs_that_would_hide_it(tmp_path):
    argv = bwrap.bwrap_argv(spec(tmp_path), tmp_path / "box", COMMAND, as_root=False)
    if bwrap.in_virtualenv():
        assert argv.index(bwrap.venv_inside()) > argv.index("/tmp")
    assert ["--perms", "0755", "--dir", "/tmp"] not in [argv[i:i + 4] for i in range(len(argv))]


def test_libraries_go_on_pythonpath(tmp_path):
    argv = bwrap.bwrap_argv(spec(tmp_path, libraries=[package(tmp_path, "mylib")]), tmp_path, COMMAND, False)
    assert binds(argv)[f"{layout.LIBRARY_ROOT}/mylib"][0] == "--ro-bind"
    i = argv.index("PYTHONPATH")
    assert argv[i - 1: i + 2] == ["--setenv", "PYTHONPATH", layout.LIBRARY_ROOT]


def test_generated_etc_knows_only_root_and_the_sandbox_uid(tmp_path):
    bwrap.write_etc(tmp_path / "etc")
    passwd = (tmp_path / "etc" / "passwd").read_text()
    assert [line.split(":")[0] for line in passwd.splitlines()] == ["root", "sandbox"]
    assert f":{layout.SANDBOX_UID}:" in passwd


# --- the container ----------------------------------------------------------------------------


def test_container_config_is_locked_down(tmp_path):
    s = spec(tmp_path, memory_mb=768, pids=99, cpus=0.5, libraries=[package(tmp_path, "mylib")])
    config = container.container_config(s, "img:1", tmp_path / "sock", {"eegbench.run": "r"}, COMMAND)
    assert config["command"] == COMMAND and config["image"] == "img:1"
    assert config["network_mode"] == "none" and config["read_only"] is True and config["init"] is True
    assert config["cap_drop"] == ["ALL"] and config["security_opt"] == ["no-new-privileges"]
    assert config["mem_limit"] == config["memswap_limit"] == "768m"
    assert config["pids_limit"] == 99 and config["nano_cpus"] == 500_000_000
    assert config["environment"]["PYTHONPATH"] == layout.LIBRARY_ROOT
    assert config["environment"]["PATH"].startswith("/opt/venv/bin:")
    mounts = {m["Target"]: (m["Source"], m["ReadOnly"]) for m in config["mounts"]}
    assert mounts == {
        "/input/rec/a.edf": (str(tmp_path / "data" / "rec" / "a.edf"), True),
        f"{layout.LIBRARY_ROOT}/mylib": (str(tmp_path / "libs" / "mylib"), True),
        "/workspace": (str(tmp_path / "ws"), False),
        "/kernel": (str(tmp_path / "sock"), False),
    }
