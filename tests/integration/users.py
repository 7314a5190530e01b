"""Ordinary users for the tests that run eegbench as one (CI runs as root and creates them):
`eegbench-user-a` and `-b`, each with a home of its own, and the interpreter they run the
project with: the system Python in a virtualenv whose packages are the project virtualenv's
(hard links), since the project virtualenv's own interpreter may live where other users
cannot read (pyenv under /root)."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.integration.conftest import PROJECT_ROOT

USERS = ("eegbench-user-a", "eegbench-user-b")
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    home: Path  # a directory of its own: HOME, TMPDIR stays /tmp

    def run(self, argv: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
        """Start `argv` as this user, in the project, with a clean environment."""
        clean = {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                 "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        return subprocess.Popen(["runuser", "-u", self.name, "--", "env", "-i",
                                 *(f"{k}={v}" for k, v in clean.items()), *argv],
                                cwd=PROJECT_ROOT, text=True, **kwargs)


def user(name: str) -> User:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        entry = pwd.getpwnam(name)
    home = Path(f"/tmp/{name}-home")
    home.mkdir(mode=0o700, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    return User(name, entry.pw_uid, home)


def user_venv(tag: str) -> Path:
    """A virtualenv of the system Python holding the project virtualenv's packages (one per
    tag: test files on different workers build theirs at once)."""
    done = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(sys.version_info[:2]), (
        f"{SYSTEM_PYTHON} is Python {done.stdout.strip()}, the project's virtualenv {sys.version_info[:2]}: "
        "their compiled packages would not load")
    venv = PROJECT_ROOT / ".cache" / f"user-venv-{tag}"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", "--clear", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    shutil.rmtree(site)
    source = sysconfig.get_paths()["purelib"]
    if subprocess.run(["cp", "-al", source, str(site)], capture_output=True).returncode != 0:
        subprocess.run(["cp", "-a", source, str(site)], check=True)  # another file system: copy
    return venv / "bin" / "python"


def two_users(tag: str) -> Iterator[tuple[User, User, str]]:
    """Two ordinary users and the interpreter they run the project with (a fixture's body)."""
    assert os.geteuid() == 0, "this test creates two users: run it as root (CI does)"
    yield user(USERS[0]), user(USERS[1]), str(user_venv(tag))
