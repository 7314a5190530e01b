"""`eegbench truth --check`: the committed instances equal what the reference scripts give now."""
import subprocess
import sys

from tests.integration.conftest import PROJECT_ROOT


def test_truth_check_passes_on_committed_instances():
    proc = subprocess.run([sys.executable, "-m", "runner.cli", "truth", "--check", "--jobs", "2"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0 difference(s)" in proc.stderr
