"""One logging setup for the `eegbench` command, and a log file per instance.

`configure` sends warnings and errors of every module (and INFO with --verbose) to the
console through rich. While an instance runs, `instance_log` also writes every record its
worker thread emits (INFO and up: sandbox start, retries, restarts, the end status) to
instances/<case>/controller.log, so the audit directory says what the controller did.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.logging import RichHandler

from runner.core.fileio import is_disk_full

_CASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("eegbench_case", default=None)
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(console: Console, *, verbose: bool = False) -> None:
    """Console logging for the command (idempotent: a second call replaces the handler)."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)  # instance logs take INFO; the console handler filters
    for handler in [h for h in root.handlers if getattr(h, "_eegbench", False)]:
        root.removeHandler(handler)
    handler = RichHandler(console=console, show_path=False, show_time=False, markup=False)
    handler.setLevel(logging.INFO if verbose else logging.WARNING)
    handler._eegbench = True  # type: ignore[attr-defined]
    root.addHandler(handler)


class _CaseFilter(logging.Filter):
    def __init__(self, case_id: str) -> None:
        super().__init__()
        self.case_id = case_id

    def filter(self, record: logging.LogRecord) -> bool:
        return _CASE.get() == self.case_id


class _AuditFileHandler(logging.FileHandler):
    """A controller.log that stays quiet when its disk is full: the run store reports that
    (one message, the run stops), not a logging traceback on the console."""

    def handleError(self, record: logging.LogRecord) -> None:
        if is_disk_full(sys.exc_info()[1]):
            return
        super().handleError(record)


@contextlib.contextmanager
def instance_log(path: Path, case_id: str) -> Iterator[None]:
    """Records emitted in this thread (and this context) also go to `path`."""
    token = _CASE.set(case_id)
    handler = _AuditFileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(_CaseFilter(case_id))
    root = logging.getLogger()
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        _CASE.reset(token)
