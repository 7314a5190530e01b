"""SandboxSpec.libraries: host packages mounted read-only and importable in the real sandbox."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from runner.sandbox import bwrap, get_backend
from runner.sandbox.base import SandboxError, SandboxSpec
from runner.sandbox.layout import LIBRARY_ROOT


def spec(tmp: Path, libraries) -> SandboxSpec:
    workspace = tmp / "ws"
    workspace.mkdir(exist_ok=True)
    return SandboxSpec("test", "lib-case", tmp, (), workspace, libraries=tuple(libraries))


def package(tmp: Path, name: str) -> Path:
    pkg = tmp / "host" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("ANSWER = 42\n")
    return pkg


@pytest.mark.integration
@pytest.mark.parametrize("backend_name", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_library_is_importable_read_only_and_alone(tmp_path, backend_name):
    pkg = package(tmp_path, "mylib")
    (tmp_path / "host" / "sibling.py").write_text("x = 1\n")  # beside the package: must stay invisible
    backend = get_backend(backend_name)
    with backend.start(spec(tmp_path, [pkg])) as box:
        obs = box.execute(
            "import mylib, os, importlib.util\n"
            "print(mylib.ANSWER, mylib.__file__)\n"
            "print(importlib.util.find_spec('sibling'))\n"
            "try:\n    open(os.path.join(os.path.dirname(mylib.__file__), 'x'), 'w')\n"
            "except OSError as e:\n    print('read-only', e.errno)\n"
        )
    assert obs.status == "ok", obs.text
    assert f"42 {LIBRARY_ROOT}/mylib/__init__.py" in obs.text
    assert "None" in obs.text and "read-only" in obs.text


@pytest.mark.integration
def test_eegtools_imports_in_the_sandbox(tmp_path):
    from runner.paradigms.hybrid import Hybrid

    with get_backend("local").start(spec(tmp_path, Hybrid.libraries)) as box:
        obs = box.execute("import eegtools; print(len(eegtools.TOOLS), eegtools.__file__)")
    assert obs.status == "ok", obs.text
    assert f"10 {LIBRARY_ROOT}/eegtools/__init__.py" in obs.text


def test_bad_libraries_are_refused(tmp_path):
    not_a_package = tmp_path / "plain"
    not_a_package.mkdir()
    made: set[str] = set()
    with pytest.raises(SandboxError, match="not a Python package"):
        bwrap.library_binds(spec(tmp_path, [not_a_package]), made)
    a, b = package(tmp_path / "a", "same"), package(tmp_path / "b", "same")
    with pytest.raises(SandboxError, match="two libraries"):
        bwrap.library_binds(spec(tmp_path, [a, b]), made)
    assert bwrap.library_binds(replace(spec(tmp_path, []), libraries=()), made) == []
