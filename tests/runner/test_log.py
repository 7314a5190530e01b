"""Logging: an instance's controller log holds what its own thread logged, nothing else."""
import logging
import threading

from runner.log import instance_log

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
