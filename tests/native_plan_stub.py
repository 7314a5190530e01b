"""A real HTTP endpoint on 127.0.0.1 that plays one instance's BrainAgent tool plan with
native function calls: the supervisor gets text JSON (it is offered no tools), every subagent
round that offers tools gets OpenAI `tool_calls`, never text JSON. The plan is played by the
oracle's own PlanPlayer, which reads results from the text protocol's "Results:" message, so
the stub rewrites the `tool` messages it receives into that message first.

`malformed` calls are answered once, on the first subagent round, before the plan starts:
they prove that bad native calls end as tool errors and the instance goes on.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from runner.models.oracle_plan import PlanPlayer
from runner.paradigms.brainagent.prompts import result_line, results_message
from tests.endpoint_stub import _Served, completion_body, send
from validation.instance import Instance


def tool_call_body(calls: list[tuple[str, str, str]]) -> dict:
    """A completion holding native calls (id, name, raw arguments) and no text."""
    body = completion_body("")
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in calls]}
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def as_text_protocol(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with the `tool` messages after the last native calls turned into one
    "Results:" user message, as the text protocol would have sent them."""
    last = max((i for i, m in enumerate(messages) if m.get("tool_calls")), default=None)
    if last is None:
        return messages
    names = {c["id"]: c["function"]["name"] for c in messages[last]["tool_calls"]}
    results = [m for m in messages[last + 1:] if m.get("role") == "tool"]
    lines = [result_line(i, names[m["tool_call_id"]], m["content"]) for i, m in enumerate(results, 1)]
    rest = [m for m in messages[last + 1:] if m.get("role") != "tool"]
    return messages[:last + 1] + [{"role": "user", "content": results_message(lines, False)}] + rest


class NativePlanServer(_Served):
    """Plays `instance`'s plan; records every request body."""

    def __init__(self, project_root: Path, instance: Instance, malformed: list[tuple[str, str, str]] = ()) -> None:
        self.player = PlanPlayer(project_root, instance)
        self.malformed = list(malformed)
        self.requests: list[dict[str, Any]] = []
        self.calls_sent = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with outer.lock:
                    outer.requests.append(body)
                    answer = outer.answer(body)
                send(self, 200, json.dumps(answer).encode(), {})

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, body: dict[str, Any]) -> dict:
        if not body.get("tools"):  # the supervisor: text JSON
            return completion_body(self.player.reply(body["messages"]))
        if self.malformed:
            calls, self.malformed = self.malformed, []
            return tool_call_body(calls)
        reply = json.loads(self.player.reply(as_text_protocol(body["messages"])))
        if "calls" not in reply:  # the subagent's report
            return completion_body(json.dumps(reply))
        calls = []
        for call in reply["calls"]:
            self.calls_sent += 1
            calls.append((f"call_{self.calls_sent}", call["tool"], json.dumps(call["arguments"])))
        return tool_call_body(calls)
