"""`eegbench instances --sensitivity --check`: the committed mistake-sensitivity records are what
the mutants give when they run again, without the cache; bad flags are refused."""
import subprocess
import sys

from tests.integration.conftest import PROJECT_ROOT


def _instances(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner.cli", "instances", *args], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=900)


def test_sensitivity_records_reproduce_without_the_cache():
    proc = _instances("--sensitivity", "--check", "--task", "fa_hjorth", "--task", "sa_stage_percent",
                      "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0 difference(s)" in proc.stderr


def test_sensitivity_flags_without_sensitivity_are_refused():
    proc = _instances("--check")
    assert proc.returncode == 2 and "--sensitivity" in proc.stderr, proc.stderr[-2000:]
    proc = _instances("--sensitivity", "--task", "fa_no_such_task")
    assert proc.returncode == 2 and "fa_no_such_task" in proc.stderr, proc.stderr[-2000:]
    proc = _instances("--sensitivity", "--task", "fa_hjorth", "--jobs", "0")
    assert proc.returncode == 2 and "--jobs 0" in proc.stderr, proc.stderr[-2000:]
