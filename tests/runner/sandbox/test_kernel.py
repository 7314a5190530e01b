"""Unit tests of the backend-independent kernel parts: kernel.py (wire), cell.py (output
policy), bootstrap.py (the kernel-side output cap). No kernel needed."""
from __future__ import annotations

import pytest

from runner.sandbox import bootstrap, cell, kernel
from runner.sandbox.base import Limits, SandboxError


def render(chunks: list[str], budget: int) -> tuple[str, int]:
    buf = cell.OutputBuffer(budget)
    for chunk in chunks:
        buf.add(chunk)
    return buf.render()


def test_output_under_budget_is_kept_whole():
    assert render(["abc", "def", ""], 10) == ("abcdef", 0)
    assert render(["0123456789"], 10) == ("0123456789", 0)


def test_output_over_budget_keeps_head_and_tail_and_counts_the_cut():
    text = "".join(f"{i:04d}" for i in range(1000))  # 4000 characters
    chunks = [text[i : i + 7] for i in range(0, len(text), 7)]  # odd chunking on purpose
    out, cut = render(chunks, 100)
    assert cut == 4000 - 100
    assert out.startswith(text[:50])
    assert out.endswith(text[-50:])
    assert f"[... {cut} characters of output cut here" in out


def test_output_buffer_memory_stays_bounded():
    buf = cell.OutputBuffer(1000)
    for _ in range(100_000):
        buf.add("y" * 100)
    held = sum(len(c) for c in buf.head) + sum(len(c) for c in buf.tail)
    assert held <= 1000 + 100  # budget plus at most one chunk
    text, cut = buf.render()
    assert cut == 100 * 100_000 - 1000
    assert len(text) < 1000 + 120


def test_single_huge_chunk_is_cut_without_copying_it_whole():
    out, cut = render(["H" + "x" * 1_000_000 + "T"], 10)
    assert out.startswith("Hxxxx") and out.endswith("xxxxT")
    assert cut == 1_000_002 - 10


def test_strip_ansi_removes_colour_codes():
    assert cell.strip_ansi("\x1b[0;31mZeroDivisionError\x1b[0m: x") == "ZeroDivisionError: x"


def test_output_text_of_each_message_kind():
    def msg(kind, content):
        return {"msg_type": kind, "content": content}

    assert cell.output_text(msg("stream", {"name": "stderr", "text": "warn\n"})) == "warn\n"
    assert cell.output_text(msg("execute_result", {"data": {"text/plain": "42"}})) == "42\n"
    assert cell.output_text(msg("display_data", {"data": {"image/png": "..."}})) == ""
    assert cell.output_text(msg("error", {"traceback": ["a", "b"]})) == "a\nb\n"
    assert cell.output_text(msg("status", {"execution_state": "idle"})) == ""


def test_connection_info_uses_ipc_paths_in_the_given_dir():
    info = kernel.connection_info("/kernel", "k3y")
    assert info["transport"] == "ipc" and info["ip"] == "/kernel/k" and info["key"] == "k3y"
    assert {info[p] for p in kernel.PORTS} == {1, 2, 3, 4, 5}


def test_socket_path_length_is_checked():
    kernel.socket_dir_ok("/tmp/eegbench-sbx/123-abcd/sock", "/kernel")
    with pytest.raises(SandboxError, match="too long"):
        kernel.socket_dir_ok("/tmp/" + "d" * 100, "/kernel")


def test_kernel_side_cut_sentinels_count_as_cut_characters():
    progress = cell._Cell("id", budget=100)
    progress.add_text("A" * 60 + "\x00eegbench-cut:5000\x00" + "B" * 60)
    text, cut = progress.out.render()
    assert cut == 60 + 5000 + 60 - 100
    assert text.startswith("A" * 50) and text.endswith("B" * 50) and "\x00" not in text


def test_output_trailing_a_reply_is_waited_for_after_a_long_silent_computation(monkeypatch):
    def msg(kind, content, parent):
        return {"msg_type": kind, "content": content, "parent_header": {"msg_id": parent}}

    clock = [100.0]
    monkeypatch.setattr(cell.time, "monotonic", lambda: clock[0])
    progress = cell._Cell("id", budget=100)
    progress.take_iopub(msg("status", {"execution_state": "busy"}, parent="id"))
    clock[0] += 5.0  # the cell computes for 5 s in silence, then its reply arrives first
    progress.take_shell({"parent_header": {"msg_id": "id"}, "msg_type": "execute_reply", "content": {"status": "ok"}})
    assert not progress.done()  # its output may still be on the way
    progress.take_iopub(msg("stream", {"name": "stdout", "text": "late\n"}, parent="id"))
    clock[0] += cell.IOPUB_SETTLE_S + 0.1
    assert progress.done() and progress.out.render()[0] == "late\n"  # no idle came: settled


def test_error_label_is_short_and_readable():
    assert cell.error_label(None) is None
    assert cell.error_label("x\x00eegbench-cut:7\x00y") == "x[... 7 characters cut ...]y"
    assert len(cell.error_label("v" * 10_000)) == cell.ERROR_VALUE_CHARS + len(" [...]")


def test_kernel_bootstrap_caps_outbound_messages():
    """Run the bootstrap's patch (not the kernel launch) against a real Session."""
    from jupyter_client.session import Session

    patch = bootstrap.KERNEL_DEFINITIONS
    namespace: dict = {}
    original = Session.serialize
    try:
        exec(patch, namespace)  # noqa: S102 - the bootstrap text is ours
        namespace["_install_output_cap"](100)
        session = Session(key=b"k")
        frames = session.serialize(session.msg("stream", {"name": "stdout", "text": "a" * 1000}))
        content = session.unpack(frames[-1])
        assert content["text"] == "a" * 50 + "\x00eegbench-cut:900\x00" + "a" * 50
        rich = session.msg("display_data", {"data": {"text/plain": "fig", "image/png": "x" * 10**6}})
        assert session.unpack(session.serialize(rich)[-1])["data"] == {"text/plain": "fig"}
        reply = session.msg("execute_reply", {"status": "ok", "execution_count": 1})
        assert session.unpack(session.serialize(reply)[-1]) == {"status": "ok", "execution_count": 1}
    finally:
        Session.serialize = original


class _StuckHost:
    """A kernel that ignores the interrupt; `oom` says whether the memory cgroup killed it."""

    def __init__(self, oom: bool) -> None:
        self.oom, self.calls = oom, []

    def interrupt(self):
        self.calls.append("interrupt")

    def oom_killed(self):
        return self.oom

    def hard_kill(self):
        self.calls.append("hard_kill")

    def restart(self):
        self.calls.append("restart")


@pytest.mark.parametrize("oom, status", [(True, "oom"), (False, "timeout")])
def test_a_timeout_that_ends_in_an_oom_kill_is_reported_as_oom(monkeypatch, oom, status):
    # On a loaded host a kernel over its memory limit can reclaim for seconds before the OOM kill.
    monkeypatch.setattr(cell, "_pump", lambda host, progress, deadline: "timeout")
    host, notes = _StuckHost(oom), []
    got = cell._after_timeout(host, cell._Cell("id", budget=100), Limits(memory_mb=768, exec_timeout_s=8), notes)
    assert got == (status, True) and host.calls == ["interrupt", "hard_kill", "restart"]
    assert ("memory limit (768 MB)" in notes[0]) is oom and "timed out after 8 s" in notes[0]
