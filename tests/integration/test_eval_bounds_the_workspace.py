"""--workspace-mb: a cell that writes past the bound gets "No space left on device" in its
observation, the instance goes on, the host's disk is untouched, and nothing stays mounted;
on both backends. A bound that cannot be made is refused before the run directory exists."""
import json
import shutil

import pytest

from runner.sandbox import workspace
from tests.integration.leftovers import assert_nothing_left

FILL = """\
import os
written = 0
try:
    with open('/workspace/ballast', 'wb') as f:
        while written < 400 * 2**20:
            f.write(b'x' * 2**20); f.flush(); written += 2**20
        os.fsync(f.fileno())
    print('WROTE', written // 2**20)
except OSError as e:
    print('STOPPED', written // 2**20, e.errno, e.strerror)
"""
AFTER = """\
import os, shutil
os.remove('/workspace/ballast')
st = os.statvfs('/workspace')
print('TOTAL_MB', st.f_blocks * st.f_frsize // 2**20)
open('/workspace/file_check/kept.txt', 'w').write('still writable')
print('KEPT', sorted(os.listdir('/workspace')))
"""


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_cell_writing_past_the_workspace_bound_gets_enospc(eegbench, tmp_path, sandbox, all_case_ids):
    replies = [f"<execute>\n{FILL}</execute>", f"<execute>\n{AFTER}</execute>", "<solution>{}</solution>"]
    script = tmp_path / "fill.json"
    script.write_text(json.dumps({"replies": replies}))
    host_free = shutil.disk_usage(workspace.SCRATCH_ROOT.parent).free
    proc = eegbench("eval", "--model", f"script:{script}", "--run", "full", "--sandbox", sandbox,
                    "--set", all_case_ids[0], "--workspace-mb", "64")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [result] = eegbench.results("full")
    assert result["status"] == "solution"
    fill, after = (t["observation"] for t in eegbench.transcript("full", result["case_id"])["turns"][:2])
    stopped = fill["text"].split()
    assert stopped[0] == "STOPPED" and 40 <= int(stopped[1]) <= 64, fill["text"]
    assert "28 No space left on device" in fill["text"]
    assert "TOTAL_MB" in after["text"] and int(after["text"].split()[1]) <= 64, after["text"]
    assert "KEPT ['file_check']" in after["text"]  # the file system starts empty: no lost+found
    kept = eegbench.runs_dir / "full" / "instances" / result["case_id"] / "artifacts" / "kept.txt"
    assert kept.read_text() == "still writable"
    assert host_free - shutil.disk_usage(workspace.SCRATCH_ROOT.parent).free < 64 * 2**20
    assert_nothing_left(eegbench.controllers)  # unmounted, image deleted; a kernel still exiting gets 5 s


def test_workspace_bound_too_small_is_refused_before_the_run_starts(eegbench, all_case_ids):
    proc = eegbench("eval", "--model", "oracle", "--run", "tiny", "--set", all_case_ids[0], "--workspace-mb", "8")
    assert proc.returncode == 2
    assert "workspace_mb" in proc.stderr and "at least 16" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert not (eegbench.runs_dir / "tiny").exists()
