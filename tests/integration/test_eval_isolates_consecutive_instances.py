"""Nothing of one instance reaches the next, on every backend, with and without the warm pool:
each instance first looks for what the previous one planted (a changed module, a global, files
in /workspace, /tmp and /dev/shm, an environment variable, an open descriptor, a thread, an
entry in sys.modules) and lists its /input, then plants all of it, then looks again (the look
must see its own plants: the probe can fail). Every instance's first look must find nothing
and see only its own inputs. Docker is required for the docker half (`make image`)."""
import json

import pytest

from runner.benchmark import catalog

LOOK = r'''
import glob, json, os, sys, threading
import numpy
found = []
if numpy.pi != 3.141592653589793 or hasattr(numpy, "eegbench_planted"):
    found.append("module")
if "planted_global" in globals():
    found.append("global")
for folder in ("/workspace", "/tmp", "/dev/shm"):
    for top, dirs, files in os.walk(folder):
        found += [os.path.join(top, f) for f in files if "planted" in f]
if "EEGBENCH_PLANTED" in os.environ:
    found.append("environment")
for fd in os.listdir("/proc/self/fd"):
    try:
        if "planted" in os.readlink(f"/proc/self/fd/{fd}"):
            found.append(f"fd {fd}")
    except OSError:
        pass
found += [t.name for t in threading.enumerate() if t.name.startswith("planted")]
if "planted_module" in sys.modules:
    found.append("sys.modules")
inputs = sorted(p[len("/input/"):] for p in glob.glob("/input/**", recursive=True) if os.path.isfile(p))
print("LEFTOVERS", json.dumps(found))
print("INPUTS", json.dumps(inputs))
'''

PLANT = r'''
import os, sys, threading, time, types
import numpy
numpy.pi = 3.0
numpy.eegbench_planted = True
planted_global = 1
for folder in ("/workspace", "/tmp", "/dev/shm"):
    with open(f"{folder}/planted.txt", "w") as f:
        f.write("from the previous instance")
os.environ["EEGBENCH_PLANTED"] = "1"
kept = open("/tmp/planted-descriptor", "w")
threading.Thread(target=lambda: time.sleep(3600), name="planted-thread", daemon=True).start()
sys.modules["planted_module"] = types.ModuleType("planted_module")
print("PLANTED")
'''


def _two_cases() -> list:
    """Two instances of different tasks, so their inputs differ."""
    first = catalog.select(catalog.load_all(), [catalog.CHECK])
    a = first[0]
    b = next(i for i in first if set(i.agent_input.input_paths()) != set(a.agent_input.input_paths()))
    return [a, b]


@pytest.mark.parametrize("pool", [False, True], ids=["cold", "warm-pool"])
@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_nothing_of_an_instance_reaches_the_next(eegbench, tmp_path, backend, pool):
    cases = _two_cases()
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"replies": [f"<execute>{LOOK}</execute>", f"<execute>{PLANT}</execute>",
                                               f"<execute>{LOOK}</execute>", "<solution>null</solution>"]}))
    run = f"iso-{backend}-{'pool' if pool else 'cold'}"
    args = ["eval", "--model", f"script:{replies}", "--run", run, "--jobs", "1", "--sandbox", backend,
            "--set", ",".join(i.case_id for i in cases)]
    proc = eegbench(*args, *(["--warm-pool"] if pool else []))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(eegbench.results(run)) == 2
    for instance in cases:
        turns = eegbench.transcript(run, instance.case_id)["turns"]
        look, plant, again = (turn["observation"]["text"] for turn in turns[:3])
        assert "PLANTED" in plant, plant
        assert json.loads(_said(look)["LEFTOVERS"]) == [], (instance.case_id, look)
        assert json.loads(_said(look)["INPUTS"]) == sorted(instance.agent_input.input_paths()), (instance.case_id, look)
        planted = json.loads(_said(again)["LEFTOVERS"])
        assert {"module", "global", "environment", "planted-thread", "sys.modules", "/workspace/planted.txt",
                "/tmp/planted.txt", "/dev/shm/planted.txt"} <= set(planted), again
        assert any(item.startswith("fd ") for item in planted), again


def _said(text: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in text.splitlines() if line.startswith(("LEFTOVERS", "INPUTS")))
