"""The kernel's command line, the same for every backend: ipykernel with an output cap.

Kernel side, every outbound text is capped at MESSAGE_CAP_CHARS (head and tail kept, the
middle replaced by a sentinel carrying the number of characters dropped): a 50 MB print must
not arrive as one 50 MB message that the controller would hold whole. The controller side
(runner/sandbox/cell.py) reads the sentinel back with CUT_SENTINEL_RE.

Before the kernel starts, kernel_jit.py (whose source the command line carries) points the
kernel environment's numba functions at the sandbox's compile cache, if it mounts one.

This module imports nothing of the package, so the sandbox contract (base.py) can use it.
"""
from __future__ import annotations

import re
from pathlib import Path

MESSAGE_CAP_CHARS = 1_000_000
PRELOAD_ENV = "EEGBENCH_PRELOAD"  # comma-separated modules the kernel imports before it answers
# The modules a warm kernel (runner/run/warm_pool.py) and a kernel template
# (runner/sandbox/template.py) import ahead of the model's code.
SCIENCE_STACK = ("numpy", "scipy.signal", "scipy.stats", "pandas", "matplotlib.pyplot", "mne", "mne.io",
                 "yasa", "antropy")
PRELOAD_READY_S = 90.0  # added to the kernel's ready timeout: imports on a loaded machine
CUT_SENTINEL_RE = re.compile("\x00eegbench-cut:([0-9]+)\x00")

# What `python -m ipykernel_launcher` does, preceded by one patch: Session.serialize caps the
# text of outbound output messages and drops rich mimetypes (only text/plain is observed).
# Definitions only: KERNEL_MAIN (a kernel started cold) and runner/sandbox/template_program.py
# (a kernel forked from a template) call them in their own order.
KERNEL_DEFINITIONS = r"""
import os
import sys
from jupyter_client.session import Session


def _install_output_cap(cap):
    half = cap // 2

    def cut(text):
        if not isinstance(text, str) or len(text) <= cap:
            return text
        return text[:half] + "\0eegbench-cut:%d\0" % (len(text) - 2 * half) + text[-half:]

    def capped(msg_type, content):
        if msg_type == "stream":
            return dict(content, text=cut(content.get("text")))
        if msg_type in ("execute_result", "display_data", "update_display_data"):
            data = content.get("data") or {}
            return dict(content, data={"text/plain": cut(data["text/plain"])} if "text/plain" in data else {})
        if msg_type == "error" or (msg_type == "execute_reply" and content.get("status") == "error"):
            return dict(content, evalue=cut(content.get("evalue")),
                        traceback=[cut(line) for line in content.get("traceback") or []])
        return content

    original = Session.serialize

    def serialize(self, msg, *args, **kwargs):
        # Every outbound message passes here complete (execute_result's data is filled in
        # after Session.msg built it).
        if isinstance(msg.get("content"), dict):
            msg = dict(msg, content=capped(msg["header"]["msg_type"], msg["content"]))
        return original(self, msg, *args, **kwargs)

    Session.serialize = serialize


def _preload(names):
    import importlib

    for name in filter(None, names.split(",")):
        try:
            importlib.import_module(name)
        except Exception:  # it fails again, visibly, when the model imports it
            pass


def _drop_cwd_from_path():
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]  # as ipykernel_launcher: the cwd must not shadow packages


def _launch():
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()
"""

# A kernel started cold: the cap (argv[1]), the compile cache's hook, the preloaded modules
# (imported before the kernel exists: what they print goes to the kernel's log, not to a cell).
KERNEL_MAIN = r"""
_install_output_cap(int(sys.argv.pop(1)))
install_from_env()
_drop_cwd_from_path()
_preload(os.environ.pop("EEGBENCH_PRELOAD", ""))  # PRELOAD_ENV
_launch()
"""

KERNEL_JIT_SOURCE = Path(__file__).with_name("kernel_jit.py").read_text()
# The program `python -c` runs: the compile cache's hook, then the launcher.
KERNEL_PROGRAM = KERNEL_JIT_SOURCE + KERNEL_DEFINITIONS + KERNEL_MAIN


def kernel_argv(python: str, connection_file: str, budget_chars: int) -> list[str]:
    """The kernel command line (inside the sandbox) for any backend."""
    cap = max(MESSAGE_CAP_CHARS, 4 * budget_chars)  # the cap must keep more than the budget
    return [python, "-c", KERNEL_PROGRAM, str(cap), "-f", connection_file,
            "--HistoryManager.hist_file=:memory:"]
