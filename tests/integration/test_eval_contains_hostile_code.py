"""Hostile code sent through MODEL=script: every attempt ends as an observation and a
recorded status, the run completes, the next instance is unaffected, no process is left."""
import json
import socket
import threading

import pytest

# One cell per attack. Each try/except prints what happened, so the transcript shows it.
ATTACKS = {
    "tcp_outside": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3); print('CONNECTED')\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)",
    "tcp_host_loopback": "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)",
    "dns": "import socket\ntry:\n    print('RESOLVED', socket.getaddrinfo('pypi.org', 443))\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)",
    "pip_install": "import subprocess, sys\nr = subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-cache-dir', '--retries', '0', '--timeout', '1', 'cowsay'], capture_output=True, text=True)\nprint('PIP_RC', r.returncode)",
    "shadow": "try:\n    print('READ', open('/etc/shadow').read()[:20])\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)",
    # Walk everything the sandbox shows except kernel views and the read-only system and
    # Python trees, looking for any JSON that carries a ground truth.
    "instance_file": "import os, sys\nskip = {'/proc', '/sys', '/dev', '/usr', sys.base_prefix, sys.prefix}\nhits = []\nfor top, dirs, files in os.walk('/'):\n    dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]\n    for f in files:\n        p = os.path.join(top, f)\n        if f.endswith('.json') and os.path.isfile(p) and any(k in open(p, errors='ignore').read() for k in ('ground_truth', 'gt_value')):\n            hits.append(p)\nprint('INSTANCE_FILES', len(hits), os.path.exists('{root}/instances'))",
    "write_input": "import glob\np = glob.glob('/input/**/*.*', recursive=True)[0]\ntry:\n    open(p, 'a').write('x'); print('WROTE')\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)",
    "env_secret": "import os\nprint('SECRET' if any('secret-xyz' in v for v in os.environ.values()) else 'CLEAN', sorted(os.environ))",
    "fork_bomb": "import os\nn = 0\ntry:\n    while n < 100000:\n        if os.fork() == 0:\n            import time; time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('FORK_LIMIT', n, type(e).__name__)",
    "memory": "import numpy as np\nx = np.ones(2 * 1024**3 // 8)\nprint('ALLOC' + 'ATED', x.sum())",
    "busy_loop": "while True:\n    pass",
    "uninterruptible": "sum(range(10**11))",
    "exit": "import os\nos._exit(1)",
    "print_50mb": "print('y' * (50 * 1024 * 1024))",
    "input": "input('password? ')",
    "still_works": "import importlib.util\nprint('ALIVE', 6 * 7, 'IMPORTABLE' if importlib.util.find_spec('cowsay') else 'ABSENT')",
}


@pytest.fixture
def host_listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    accepted = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_cells_end_as_observations_and_run_completes(eegbench, tmp_path, host_listener, all_case_ids, backend):
    from tests.integration.conftest import PROJECT_ROOT

    port, accepted = host_listener
    cells = {k: v.replace("{port}", str(port)).replace("{root}", str(PROJECT_ROOT)) for k, v in ATTACKS.items()}
    replies = [f"<execute>\n{code}\n</execute>" for code in cells.values()] + ["<solution>{}</solution>"]
    script = tmp_path / "hostile.json"
    script.write_text(json.dumps({"replies": replies}))
    cases = all_case_ids[:2]
    env_args = ("--exec-timeout", "8", "--grace", "2", "--memory-mb", "768", "--pids", "64",
                "--repeat-limit", "50", "--max-rounds", "30")
    eegbench.env = lambda: {**__import__("os").environ, "EEGBENCH_RUNS": str(eegbench.runs_dir),
                            "EEGBENCH_API_KEY": "secret-xyz", "OPENAI_API_KEY": "secret-xyz"}
    proc = eegbench("eval", "--model", f"script:{script}", "--run", "hostile", "--jobs", "1", "--sandbox", backend,
                    "--set", ",".join(cases), *env_args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = {r["case_id"]: r for r in eegbench.results("hostile")}
    assert set(results) == set(cases)
    assert not accepted, "the sandbox reached a port on the host's loopback"
    for case in cases:  # the second instance sees exactly what the first saw: nothing carried over
        assert results[case]["status"] == "solution"
        obs = {name: t["observation"] for name, t in zip(cells, eegbench.transcript("hostile", case)["turns"])}
        assert "BLOCKED" in obs["tcp_outside"]["text"]
        assert "BLOCKED" in obs["tcp_host_loopback"]["text"]
        assert "BLOCKED" in obs["dns"]["text"]
        # pip either fails or is stopped by the timeout; either way nothing gets installed
        assert "PIP_RC 0" not in obs["pip_install"]["text"] and obs["pip_install"]["status"] in ("ok", "timeout")
        assert "BLOCKED" in obs["shadow"]["text"]
        assert "INSTANCE_FILES 0 False" in obs["instance_file"]["text"]
        assert "BLOCKED" in obs["write_input"]["text"]
        assert "CLEAN" in obs["env_secret"]["text"]
        assert "FORK_LIMIT" in obs["fork_bomb"]["text"]
        # The limit holds either way; a loaded host can reclaim past the 8 s timeout before the OOM
        # kill (the conformance check, with a 60 s timeout, asserts the oom status itself).
        memory = obs["memory"]
        assert "ALLOCATED" not in memory["text"], memory
        assert memory["status"] == "oom" or (memory["restarted"] and "did not stop within" in memory["text"]), memory
        assert obs["busy_loop"]["status"] == "timeout"
        assert obs["uninterruptible"]["status"] == "timeout" and obs["uninterruptible"]["restarted"]
        assert obs["exit"]["status"] == "died" and obs["exit"]["restarted"]
        assert len(obs["print_50mb"]["text"]) < 10_000 and obs["print_50mb"]["truncated_chars"] > 50_000_000
        assert obs["input"]["status"] == "error"
        assert "ALIVE 42 ABSENT" in obs["still_works"]["text"]
