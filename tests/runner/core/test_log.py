"""Logging: an instance's controller log holds what its own thread logged, nothing else."""
import logging
import threading

from runner.core.log import instance_log

log = logging.getLogger("runner.test")


def test_each_instance_log_holds_its_own_thread_s_records(tmp_path):
    barrier = threading.Barrier(2)

    def work(case):
        with instance_log(tmp_path / f"{case}.log", case):
            barrier.wait()
            log.info("%s: working", case)
            barrier.wait()

    threads = [threading.Thread(target=work, args=(c,)) for c in ("a-01", "b-01")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.warning("after both: in no instance log")
    a, b = (tmp_path / "a-01.log").read_text(), (tmp_path / "b-01.log").read_text()
    assert "a-01: working" in a and "b-01" not in a
    assert "b-01: working" in b and "a-01" not in b
    assert "after both" not in a + b
    leftover = [h for h in logging.getLogger().handlers
                if isinstance(h, logging.FileHandler) and h.baseFilename.startswith(str(tmp_path))]
    assert not leftover  # each handler is removed when its instance ends



def _handled_while(error, tmp_path, capsys):
    import logging

    from runner.core.log import _AuditFileHandler

    handler = _AuditFileHandler(tmp_path / "controller.log", delay=True)
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "written on a full disk", None, None)
    try:
        raise error
    except OSError:
        handler.handleError(record)  # what logging calls when emit fails
    handler.close()
    return capsys.readouterr().err


def test_a_full_disk_under_controller_log_prints_no_logging_traceback(tmp_path, capsys):
    import errno

    assert _handled_while(OSError(errno.ENOSPC, "No space left on device"), tmp_path, capsys) == ""
    assert "--- Logging error ---" in _handled_while(OSError(errno.EACCES, "Permission denied"), tmp_path, capsys)
