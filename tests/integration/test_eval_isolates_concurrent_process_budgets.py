"""Two instances run side by side (--jobs 2): one fork-bombs against its process limit again
and again while the other keeps starting processes. Each sandbox has its own pids budget
(a cgroup per local sandbox, a container's pids limit on Docker), so the second instance's
cells never fail to fork; under a shared budget (RLIMIT_NPROC of one uid) they would."""
import json

import pytest

from runner.benchmark import catalog

# The cell tells its role from its inputs: the bomber's first input carries MARK.
CELL = """\
import glob, os, subprocess, time
first = sorted(glob.glob('/input/**/*.*', recursive=True))[0]
end = time.monotonic() + 20
if MARK in first:
    rounds = 0
    while time.monotonic() < end:
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(3); os._exit(0)
        except OSError:
            rounds += 1
        time.sleep(0.2)
    print('BOMBER hit the limit', rounds, 'times')
else:
    time.sleep(2)
    ok = failed = 0
    while time.monotonic() < end:
        try:
            subprocess.run(['/usr/bin/true'], check=True); ok += 1
        except OSError:
            failed += 1
        time.sleep(0.05)
    print('SPAWNER ok', ok, 'failed', failed)
"""


def _two_cases_with_distinct_inputs():
    seen, picked = set(), []
    for instance in catalog.select(catalog.load_all(), []):
        first = sorted(instance.agent_input.input_paths())[0]
        if first not in seen:
            seen.add(first)
            picked.append((instance.case_id, first))
        if len(picked) == 2:
            return picked
    raise AssertionError("the benchmark has no two cases with different inputs")


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_fork_bomb_does_not_fail_a_concurrent_instances_cells(eegbench, tmp_path, sandbox):
    (bomber, mark), (spawner, _) = _two_cases_with_distinct_inputs()
    cell = CELL.replace("MARK", repr(mark.rsplit("/", 1)[-1]))
    script = tmp_path / "budget.json"
    script.write_text(json.dumps({"replies": [f"<execute>\n{cell}</execute>", "<solution>{}</solution>"]}))
    proc = eegbench("eval", "--model", f"script:{script}", "--run", "budget", "--jobs", "2", "--sandbox", sandbox,
                    "--pids", "48", "--set", f"{bomber},{spawner}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    texts = {case: eegbench.transcript("budget", case)["turns"][0]["observation"]["text"] for case in (bomber, spawner)}
    assert "BOMBER hit the limit" in texts[bomber], texts[bomber]
    assert int(texts[bomber].split("BOMBER hit the limit")[1].split()[0]) >= 3
    words = texts[spawner].split()
    assert words[0] == "SPAWNER", texts[spawner]
    assert int(words[2]) > 50 and words[4] == "0", texts[spawner]  # no fork failed beside the bomb
