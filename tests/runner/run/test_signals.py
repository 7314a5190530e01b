"""The scheduler's stop signals: SIGINT and SIGTERM both raise KeyboardInterrupt (the clean
stop), even when the process inherited SIGINT ignored (a run started in the background of a
non-interactive shell), and the previous handlers come back afterwards."""
import os
import signal

import pytest

from runner.run.scheduler import _signals_raise_interrupt


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_raises_keyboard_interrupt_even_when_inherited_ignored(signum):
    before = signal.signal(signum, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt, match=f"signal {int(signum)}"):
            with _signals_raise_interrupt():
                os.kill(os.getpid(), signum)  # the handler runs before the next bytecode
        assert signal.getsignal(signum) == signal.SIG_IGN
    finally:
        signal.signal(signum, before)
