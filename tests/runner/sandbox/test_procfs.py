"""CPU time from /proc: what an observation records beside its wall time."""
import os
import time

from runner.core.transcript import Observation, ToolCallRecord
from runner.sandbox import procfs


def test_cpu_seconds_grow_with_work_and_are_none_for_no_process():
    before = procfs.cpu_seconds(os.getpid())
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    assert procfs.cpu_seconds(os.getpid()) - before >= 0.2
    assert procfs.cpu_seconds(None) is None
    assert procfs.cpu_seconds(next(p for p in range(4_000_000, 4_100_000) if not procfs.exists(p))) is None


def test_only_a_starved_timeout_counts_as_host_overload():
    def obs(status="timeout", cpu_s=10.0, host_load=2.5):
        return Observation(text="", status=status, duration_s=150.0, cpu_s=cpu_s, host_load=host_load)

    assert obs().host_overloaded()
    assert not obs(cpu_s=140.0).host_overloaded()  # the cell was busy itself
    assert not obs(host_load=0.9).host_overloaded()  # the host had CPU to spare
    assert not obs(status="ok").host_overloaded()
    assert not obs(cpu_s=None).host_overloaded()  # unknown: never flagged


def test_a_brainagent_tool_call_that_timed_out_starved_counts_too():
    def call(code):
        return ToolCallRecord(name="psd", arguments={}, status="error", error_code=code, result="",
                              duration_s=150.0, cpu_s=10.0, host_load=2.5)

    assert call("timeout").host_overloaded()
    assert not call("failed").host_overloaded()
