"""`eegbench eval --executor ray` on a real two-node Ray cluster started by the test.

The head and a second node (`ray start --head` / `ray start --address ... --block`, one CPU
and 5 GB of Ray memory each, so each holds one sandbox slot) run on this machine; the second
node runs in its own session so the test can kill it, raylet, actor and all, mid-instance.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.sandbox.workspace import SCRATCH_ROOT
from tests.endpoint_stub import LimitedEndpoint, ScriptedServer, error
from tests.integration.leftovers import assert_nothing_left
from tests.integration.test_eval_respects_endpoint_limits import oracle_replies

BIN = Path(sys.executable).parent
SLOT_MEMORY = str(5 * 10**9)  # bytes of Ray memory per node: one 4096 MB slot
# A killed node is declared dead after ~3 s instead of Ray's default ~30 s.
HEALTH_CHECKS = json.dumps({"health_check_period_ms": 1000, "health_check_failure_threshold": 3})
SET = "fa_alpha_relpower"  # seven oracle instances of a few seconds each
# The run directory's files that must not depend on the executor (controller.log holds
# times and pids, transcript.json times and the driver's pid: compared field by field).
SAME_FILES = ("artifacts.json", "instance.json", "report.md", "score.json")
# Each node holds the endpoint key in its own environment; the driver's differs, so a request
# carrying the driver's key would show that the key travelled with the worker spec.
NODE_KEY, DRIVER_KEY = "sk-node-" + secrets.token_hex(8), "sk-driver-" + secrets.token_hex(8)


class Cluster:
    """A head node and a second node on this machine."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.second: subprocess.Popen | None = None
        # Token authentication as on a real cluster, with the test's own token: a token file
        # in ~/.ray would otherwise make the head demand one its peers do not send.
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        # Workers reach the test's endpoint on 127.0.0.1 directly, as a node's own would.
        self.env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()} | self.auth
        self.env["EEGBENCH_API_KEY"] = NODE_KEY

    def start(self) -> None:
        self.ray("start", "--head", f"--port={self.port}", "--num-cpus=1", f"--memory={SLOT_MEMORY}",
                 "--include-dashboard=false", "--disable-usage-stats", f"--system-config={HEALTH_CHECKS}")
        self.start_second()

    def start_second(self, **env: str) -> None:
        """The second node; `env` adds to its environment (EEGBENCH_DATA: its own data folder)."""
        self.second = subprocess.Popen(
            [str(BIN / "ray"), "start", f"--address={self.address}", "--num-cpus=1", f"--memory={SLOT_MEMORY}",
             "--disable-usage-stats", "--block"], env={**self.env, **env},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.wait_for_nodes(2)

    def alive_nodes(self) -> int:
        probe = ("import ray; ray.init(address=%r, log_to_driver=False); "
                 "print('ALIVE', sum(bool(n['Alive']) for n in ray.nodes()))" % self.address)
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=self.env)
        found = re.search(r"^ALIVE (\d+)$", out.stdout, re.MULTILINE)  # Ray may print warnings too
        return int(found[1]) if found else -1

    def wait_for_nodes(self, count: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.alive_nodes() != count:
            assert time.monotonic() < deadline, f"the Ray cluster never had {count} live nodes"
            time.sleep(1)

    def second_node_pids(self) -> set[int]:
        """Every process of the second node (raylet, its agents and workers): its session."""
        assert self.second is not None
        return {pid for pid in _pids() if _sid(pid) == self.second.pid}

    def kill_second(self) -> None:
        for pid in self.second_node_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert self.second is not None
        self.second.wait(timeout=30)
        self.wait_for_nodes(1)  # the head has noticed: a node started next is not counted as this one

    def stop(self) -> None:
        if self.second is not None and self.second.poll() is None:
            self.kill_second()
        self.ray("stop", "--force")

    def ray(self, *args: str) -> None:
        subprocess.run([str(BIN / "ray"), *args], check=True, capture_output=True, timeout=180, env=self.env)


@pytest.fixture(scope="module")
def cluster():
    ray_cluster = Cluster()
    ray_cluster.start()
    yield ray_cluster
    ray_cluster.stop()


@pytest.fixture
def on_cluster(eegbench, cluster, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    for name, value in cluster.auth.items():
        monkeypatch.setenv(name, value)
    if cluster.second is None or cluster.second.poll() is not None:
        cluster.start_second()
    else:
        cluster.wait_for_nodes(2)
    return eegbench


def test_oracle_through_ray_scores_and_records_as_through_threads(on_cluster):
    ev = on_cluster
    ray_run = ev("-v", "eval", "--model", "oracle", "--set", SET, "--executor", "ray", "--jobs", "2", "--run", "ray")
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    threads = ev("eval", "--model", "oracle", "--set", SET, "--jobs", "2", "--run", "threads")
    assert threads.returncode == 0, threads.stderr[-3000:]

    by_ray, by_threads = _by_case(ev.results("ray")), _by_case(ev.results("threads"))
    assert set(by_ray) == set(by_threads) and len(by_ray) == 7
    assert all(r["status"] == "solution" and r["score"] == 100.0 for r in by_ray.values())
    for case, record in by_ray.items():
        assert _outcome(record) == _outcome(by_threads[case])
        ray_dir, thread_dir = (ev.runs_dir / run / "instances" / case for run in ("ray", "threads"))
        assert _files(ray_dir) == _files(thread_dir), case
        for name in SAME_FILES:
            assert (ray_dir / name).read_bytes() == (thread_dir / name).read_bytes(), (case, name)
        assert _turns(ray_dir) == _turns(thread_dir), case
        assert "on Ray node" in (ray_dir / "controller.log").read_text()
    # both nodes took work: one actor each
    nodes = {re.search(r"on Ray node (\w+)", (ev.runs_dir / "ray" / "instances" / c / "controller.log").read_text())[1]
             for c in by_ray}
    assert len(nodes) == 2, nodes
    assert_nothing_left(_actor_pids(ray_run.stderr))


def test_killed_node_gives_infra_error_then_resume_completes(on_cluster, cluster):
    ev = on_cluster
    proc = ev.popen("-v", "eval", "--model", "oracle", "--set", SET, "--executor", "ray", "--jobs", "2", "--run", "lost")
    _wait_until(lambda: _second_node_runs_a_sandbox(cluster), proc, "the second node never ran a sandbox")
    cluster.kill_second()
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output[-3000:]

    results = ev.results("lost")
    keys = [r["case_id"] for r in results]
    assert len(keys) == len(set(keys)) == 7  # nothing lost, nothing duplicated
    lost = [r for r in results if r["status"] == "infra_error"]
    assert len(lost) == 1, results
    assert "lost mid-instance" in lost[0]["error"]
    transcript = json.loads((ev.runs_dir / "lost" / "instances" / lost[0]["case_id"] / "transcript.json").read_text())
    assert [e["kind"] for e in transcript["events"]] == ["worker_lost"]
    assert all(r["status"] == "solution" and r["score"] == 100.0 for r in results if r not in lost)

    cluster.start_second()
    resumed = ev("eval", "--model", "oracle", "--set", SET, "--executor", "ray", "--jobs", "2", "--run", "lost")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming lost: 6 finished, 1 to run" in resumed.stderr
    final = {r["case_id"]: (r["status"], r["score"]) for r in ev.results("lost")}
    assert final == {case: ("solution", 100.0) for case in keys}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_every_actor_and_leaves_no_sandbox(on_cluster, cluster, signum):
    ev = on_cluster
    proc = ev.popen("-v", "eval", "--model", "oracle", "--set", SET, "--executor", "ray", "--jobs", "2",
                    "--warm-pool", "--run", "stopped")
    _wait_until(lambda: _second_node_runs_a_sandbox(cluster) and _head_runs_a_sandbox(cluster), proc,
                "both nodes never ran a sandbox at once")
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, output[-3000:]
    assert "RUN=stopped" in output
    assert_nothing_left(_actor_pids(output))
    finished = ev.results("stopped")
    assert all(r["status"] == "solution" and r["score"] == 100.0 for r in finished)
    for record in finished:
        assert (ev.runs_dir / "stopped" / "instances" / record["case_id"] / "score.json").exists()


def test_the_endpoint_connection_cap_holds_across_every_worker(on_cluster, monkeypatch):
    ev = on_cluster
    cases = [f"{SET}-0{n}" for n in range(1, 5)]
    with LimitedEndpoint(oracle_replies(cases), delay_s=0.5) as server:
        monkeypatch.setenv("EEGBENCH_BASE_URL", server.url)
        monkeypatch.setenv("EEGBENCH_API_KEY", DRIVER_KEY)
        done = ev("eval", "--model", "openai:stub-model", "--set", ",".join(cases), "--executor", "ray",
                  "--jobs", "2", "--max-connections", "1", "--run", "capped")
    assert done.returncode == 0, done.stderr[-3000:]
    assert {(r["status"], r["score"]) for r in ev.results("capped")} == {("solution", 100.0)}
    # two actors on two nodes, one connection: the run's one limiter actor kept them in turn
    assert server.count == 2 * len(cases) and server.peak == 1, (server.count, server.peak)
    # every request carried the key of the node that sent it: the driver's never left it
    assert set(server.keys) == {NODE_KEY}, set(server.keys)
    _assert_no_key_in(ev.runs_dir / "capped", DRIVER_KEY, NODE_KEY)


def test_a_node_with_other_inputs_or_without_the_key_gets_no_work(on_cluster, cluster, tmp_path, monkeypatch):
    ev = on_cluster
    cluster.kill_second()
    elsewhere = tmp_path / "node-data"
    elsewhere.mkdir()  # a node that never ran `make data` nor was given the endpoint key
    cluster.start_second(EEGBENCH_DATA=str(elsewhere), EEGBENCH_API_KEY="")
    cases = [f"{SET}-01", f"{SET}-02"]
    with LimitedEndpoint(oracle_replies(cases)) as server:
        monkeypatch.setenv("EEGBENCH_BASE_URL", server.url)
        monkeypatch.setenv("EEGBENCH_API_KEY", DRIVER_KEY)
        done = ev("-v", "eval", "--model", "openai:stub-model", "--set", ",".join(cases), "--executor", "ray",
                  "--jobs", "2", "--run", "refused")
    assert done.returncode == 0, done.stderr[-3000:]
    said = " ".join(done.stderr.split())
    refusal = said[said.index("gets no work"):]
    assert "input file(s)" in refusal and "make data" in refusal, said[-3000:]
    assert "EEGBENCH_API_KEY" in refusal and "before `ray start`" in refusal, said[-3000:]
    assert len(_actor_pids(done.stderr)) == 1  # the head's slot alone
    assert {(r["status"], r["score"]) for r in ev.results("refused")} == {("solution", 100.0)}
    assert set(server.keys) == {NODE_KEY}
    cluster.kill_second()  # the next test starts it with the shared data again


def test_a_setup_error_on_a_worker_stops_the_run_with_one_message(on_cluster, monkeypatch):
    ev = on_cluster
    with ScriptedServer([error(401)] * 8) as server:
        monkeypatch.setenv("EEGBENCH_BASE_URL", server.url)
        monkeypatch.setenv("EEGBENCH_API_KEY", "sk-wrong")
        done = ev("eval", "--model", "openai:stub-model", "--set", SET, "--executor", "ray", "--jobs", "2",
                  "--run", "unauthorized")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "check the base URL, the API key and the model name" in done.stderr
    assert "Traceback" not in done.stderr
    assert ev.results("unauthorized") == []  # nothing recorded: fixing the key and rerunning resumes


# -- helpers ---------------------------------------------------------------------------------

def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _sandbox_parents() -> set[int]:
    """Parents of running sandbox reapers: the processes (actors) that started them."""
    parents = set()
    for pid in _pids():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b'"parent": ' in cmdline and f"{SCRATCH_ROOT}/".encode() in cmdline:
            parents.add(_ppid(pid))
    return parents - {None}


def _second_node_runs_a_sandbox(cluster: Cluster) -> bool:
    return bool(_sandbox_parents() & cluster.second_node_pids())


def _head_runs_a_sandbox(cluster: Cluster) -> bool:
    return bool(_sandbox_parents() - cluster.second_node_pids())


def _wait_until(condition, proc: subprocess.Popen, message: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.stdout.read()[-3000:]
        assert time.monotonic() < deadline, message
        time.sleep(0.1)


def _actor_pids(output: str) -> set[int]:
    pids = {int(p) for p in re.findall(r"ray: actor pid (\d+)", output)}
    assert pids, output[-3000:]
    return pids


def _assert_no_key_in(run_dir: Path, *keys: str) -> None:
    """No file the run wrote (run.json, logs, transcripts, bundles' artifacts) holds a key."""
    for path in run_dir.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert not any(key.encode() in content for key in keys), path


def _by_case(results: list[dict]) -> dict[str, dict]:
    return {r["case_id"]: r for r in results}


def _outcome(record: dict) -> tuple:
    return (record["status"], record["score"], record["rounds"], record["unscored"], record["violations"])


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _turns(folder: Path) -> list:
    """What the model said and saw, without times: equal whichever executor ran it."""
    transcript = json.loads((folder / "transcript.json").read_text())
    turns = [(t["reply"], t["action"], t["code"], (t["observation"] or {}).get("text"), (t["observation"] or {})
              .get("status")) for t in transcript["turns"]]
    return [transcript["status"], transcript["messages"], *turns]
