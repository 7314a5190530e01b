"""The artifact reader process: memory cap, crash and timeout end as MeasureError (the
field scores 0), the worker is replaced, and the controller process is never at risk."""
import os
import time

import pytest

from validation.artifacts.isolation import MEMORY_LIMIT_BYTES, MeasureError, Reader


def allocate_beyond_cap(path, check, names, options):
    try:
        block = bytearray(MEMORY_LIMIT_BYTES + 1024**3)
        return {"allocated": len(block)}
    except MemoryError:
        return {"capped": True}


def die(path, check, names, options):
    os._exit(3)


def spin(path, check, names, options):
    with open(path, "w") as out:
        out.write(str(os.getpid()))
    time.sleep(600)


def worker_pid(path, check, names, options):
    return {"pid": os.getpid()}


def test_worker_memory_is_capped():
    reader = Reader(job=allocate_beyond_cap)
    try:
        assert reader.measure("x", "eeg_file_match", [], {}) == {"capped": True}
    finally:
        reader.close()


def test_dead_worker_is_a_measure_error_and_is_replaced():
    reader = Reader(job=die)
    try:
        with pytest.raises(MeasureError, match="died"):
            reader.measure("x", "eeg_file_match", [], {})
        reader.job = worker_pid
        assert reader.measure("x", "eeg_file_match", [], {})["pid"] != os.getpid()
    finally:
        reader.close()


def test_overrunning_worker_is_killed(tmp_path):
    reader = Reader(job=worker_pid)
    pid_file = tmp_path / "pid"
    try:
        # Started first: on a loaded machine spawning the worker alone can take over a second,
        # and the 1 s limit below is meant for the job, not for the start.
        reader.measure("x", "eeg_file_match", [], {})
        reader.job, reader.timeout_s = spin, 1.0
        with pytest.raises(MeasureError, match="longer than 1 s"):
            reader.measure(str(pid_file), "eeg_file_match", [], {})
        with pytest.raises(ProcessLookupError):  # killed and reaped, not left spinning
            os.kill(int(pid_file.read_text()), 0)
        # The next file gets a fresh worker; its start is not the job's time, as above.
        reader.job, reader.timeout_s = worker_pid, 60.0
        first = reader.measure("x", "eeg_file_match", [], {})["pid"]
        assert first != os.getpid()
    finally:
        reader.close()
