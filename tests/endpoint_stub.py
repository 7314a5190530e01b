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


class ScriptedServer:
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
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout test)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


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
