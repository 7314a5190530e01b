"""A real HTTP endpoint on 127.0.0.1 that answers each POST with the next scripted answer:
the OpenAI client's and the failure policy's tests talk to it instead of a provider."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion_body(text: str = "hello there") -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": text},
        }],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def send(handler: BaseHTTPRequestHandler, status: int, payload: bytes, headers: dict) -> None:
    """One JSON answer (the headers may override its content type)."""
    handler.send_response(status)
    for name, value in {"Content-Type": "application/json", **headers}.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class _Served:
    """Serves `self.httpd` on a thread for the duration of a with block."""

    httpd: ThreadingHTTPServer
    thread: threading.Thread

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ScriptedServer(_Served):
    """Answers each POST with the next (status, body, headers, delay_s); records requests."""

    def __init__(self, answers: list[tuple]) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", 0))
                outer.requests.append({
                    "path": self.path,
                    "auth": self.headers.get("Authorization"),
                    "body": json.loads(self.rfile.read(length)),
                })
                status, body, headers, delay = outer.answers.pop(0)
                time.sleep(delay)
                payload = json.dumps(body).encode()
                try:
                    send(self, status, payload, headers)
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)



def error(status: int, headers: dict | None = None, delay: float = 0.0) -> tuple:
    return (status, {"error": {"message": f"status {status}", "type": "x"}}, headers or {}, delay)


def ok(text: str = "hello there", delay: float = 0.0) -> tuple:
    return (200, completion_body(text), {}, delay)


class RawServer(ScriptedServer):
    """Answers with raw bytes (a malformed body), then with the scripted JSON answers."""

    def __init__(self, raw: list[bytes], answers: list[tuple]) -> None:
        super().__init__(answers)
        outer, handler = self, self.httpd.RequestHandlerClass

        class Raw(handler):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:  # noqa: N802
                if not raw:
                    return super().do_POST()
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                payload = raw.pop(0)
                outer.requests.append({"raw": True})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd.RequestHandlerClass = Raw


class Fault:
    """What a LimitedEndpoint answers to one request instead of a reply."""

    @staticmethod
    def rate_limited(retry_after_s: float) -> tuple:
        return ("status", 429, {"Retry-After": f"{retry_after_s:g}"})

    @staticmethod
    def server_error() -> tuple:
        return ("status", 500, {})

    @staticmethod
    def malformed() -> tuple:
        return ("raw", 200, {})

    @staticmethod
    def slow(delay_s: float) -> tuple:
        return ("slow", delay_s, {})


class LimitedEndpoint(_Served):
    """An endpoint with a concurrency cap it checks: it counts requests in flight (the peak
    and every request that found more than `cap` others in flight are kept), answers the
    n-th request (1-based, in arrival order) with `faults[n]` when given, and otherwise with
    `reply(body)`, the text a meaningful model would give to that conversation, after
    `delay_s`. Each reply reports `usage` tokens (prompt, completion)."""

    def __init__(self, reply, *, cap: int | None = None, faults: dict | None = None, delay_s: float = 0.0,
                 usage: tuple[int, int] = (11, 7)) -> None:
        self.reply, self.cap, self.faults, self.delay_s, self.usage = reply, cap, dict(faults or {}), delay_s, usage
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.count = 0
        self.violations: list[int] = []  # request numbers that arrived over the cap
        self.requests: list[dict] = []
        self.keys: list[str | None] = []  # each request's bearer token, in arrival order
        self.faulted: list[tuple[int, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                number = outer._enter(body, self.headers.get("Authorization"))
                try:
                    status, payload, headers = outer._answer(number, body)
                finally:
                    # Out of flight before the client can have the answer: the client frees its
                    # connection slot only after reading it, so the count never runs ahead of it.
                    outer._leave()
                send(self, status, payload, headers)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _enter(self, body: dict, auth: str | None) -> int:
        with self.lock:
            self.keys.append(auth.removeprefix("Bearer ") if auth else None)
            self.count += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.cap is not None and self.in_flight > self.cap:
                self.violations.append(self.count)
            self.requests.append(body)
            return self.count

    def _leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def _answer(self, number: int, body: dict) -> tuple[int, bytes, dict]:
        kind, value, headers = self.faults.get(number, ("reply", 0, {}))
        if kind != "reply":
            self.faulted.append((number, kind if kind != "status" else str(value)))
        time.sleep(value if kind == "slow" else self.delay_s)
        if kind == "status":
            return value, json.dumps({"error": {"message": f"status {value}", "type": "x"}}).encode(), headers
        reply = completion_body(self.reply(body))
        reply["usage"] = {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1],
                          "total_tokens": sum(self.usage)}
        payload = json.dumps(reply).encode()
        return (200, payload[: len(payload) // 2], {}) if kind == "raw" else (200, payload, {})

