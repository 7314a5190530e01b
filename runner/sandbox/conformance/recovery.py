"""Limits and recovery: cells that hang, exit, get killed, exhaust memory or processes, or spin."""
from __future__ import annotations

import subprocess
from pathlib import Path

from runner.sandbox.conformance.context import Context, check, run


@check
def uninterruptible_cell_is_hard_killed_and_restarted(ctx: Context) -> None:
    """A cell deaf to SIGINT is killed after the grace; state is lost, files are kept."""
    rough = ctx.rough
    run(rough, "lost = 1\nopen('/workspace/kept.txt', 'w').write('on disk')")
    old = rough.kernel_pid
    obs = run(rough, "sum(range(10**11))")
    assert obs.status == "timeout" and obs.restarted, obs
    assert "did not stop within 1 s" in obs.text and "killed" in obs.text and "lost" in obs.text, obs.text
    assert old and not Path(f"/proc/{old}").exists(), old
    assert run(rough, "print('back')").text == "back\n"
    assert run(rough, "lost").error_name == "NameError"
    assert run(rough, "print(open('/workspace/kept.txt').read())").text == "on disk\n"


@check
def os_exit_is_reported_as_death_and_restarted(ctx: Context) -> None:
    """os._exit gives status died with the exit code, and a fresh kernel."""
    obs = run(ctx.rough, "import os\nos._exit(1)")
    assert obs.status == "died" and obs.restarted, obs
    assert "died" in obs.text and "exit code 1" in obs.text, obs.text
    assert run(ctx.rough, "print('back')").text == "back\n"


@check
def kill_signal_is_reported_as_death(ctx: Context) -> None:
    """A kernel killed by a signal is reported with the signal's name."""
    obs = run(ctx.rough, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert obs.status == "died" and obs.restarted and "killed by SIGKILL" in obs.text, obs
    assert run(ctx.rough, "print('back')").text == "back\n"


@check
def memory_past_the_limit_is_reported_as_oom_once(ctx: Context) -> None:
    """Memory past the limit kills the kernel (only it) as OOM, or, where the limit is each
    process's address space (no cgroups), fails the allocation; a later death is not OOM."""
    # Its own sandbox with a long timeout: on a loaded machine the kernel reclaims for
    # seconds before the OOM kill.
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        # 1 GB: where the limit is each process's address space, less would not even load numpy.
        with ctx.start("oom", memory_mb=1024, exec_timeout_s=60) as box:
            per_process = box.enforcement()["memory"] == "RLIMIT_AS per process"
            obs = run(box, "import numpy\nblock = numpy.ones(2 * 1024**3 // 8)\nprint('ALLOC' + 'ATED')")
            assert obs.status == "oom" and "ALLOCATED" not in obs.text, obs.text
            if per_process:
                assert obs.error_name == "MemoryError" and not obs.restarted, obs
                assert "out of memory (limit 1024 MB)" in obs.text, obs.text
            else:
                assert obs.restarted and "memory limit (1024 MB)" in obs.text, obs.text
            assert bystander.poll() is None  # the controller's side is untouched
            assert run(box, "print('back')").text == "back\n"
            obs = run(box, "import os\nos._exit(3)")  # a later death is not an OOM again
            assert obs.status == "died" and "exit code 3" in obs.text, obs
    finally:
        bystander.kill()
        bystander.wait()


@check
def fork_bomb_is_contained(ctx: Context) -> None:
    """A fork bomb hits the process limit, its copies are killed, the kernel carries on."""
    # Its own sandbox with a long timeout: on a loaded machine 128 copies of the kernel take
    # longer than the shared sandboxes' 3 s to fork, and a cell stopped by the timeout before
    # the limit says nothing of it.
    with ctx.start("bomb", memory_mb=512, pids=128, exec_timeout_s=60, grace_s=1) as box:
        baseline = len(box.host_pids())
        obs = run(box, "import os\nwhile True:\n    os.fork()")
        assert obs.status in ("error", "timeout"), obs
        assert "process limit (128)" in obs.text, obs.text
        assert run(box, "print('back')").text == "back\n"
        assert len(box.host_pids()) == baseline, (box.host_pids(), baseline)


@check
def cpu_quota_throttles_the_sandbox(ctx: Context) -> None:
    """A quarter CPU gets about a quarter of the wall time, where the sandbox says CPU is
    limited; where it says it is not (no cgroup), the kernel is in no cgroup of its own."""
    with ctx.start("cpu", cpus=0.25) as sandbox:
        limited = bool(sandbox.enforcement()["cpu"])
        if not limited:
            kernel = Path(f"/proc/{sandbox.kernel_pid}/cgroup").read_text()
            assert kernel == Path("/proc/self/cgroup").read_text(), kernel  # the controller's own
            return
        obs = run(sandbox, """
            import os, time
            before, start = os.times(), time.time()
            while time.time() - start < 1.2:
                pass
            after = os.times()
            print(round(after.user + after.system - before.user - before.system, 2))
        """)
    assert obs.status == "ok", obs.text
    assert float(obs.text) < 0.7, obs.text  # a quarter of a CPU for 1.2 s, with scheduling slack
