"""The endpoint limiter's bookkeeping with a fake clock: connections, rpm and tpm windows."""
from __future__ import annotations

import pickle
import threading

import pytest

from runner.models.ratelimit import POLL_S, WINDOW_S, EndpointLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_connections_are_capped_and_freed_by_release():
    limiter = EndpointLimiter(2, clock=Clock())
    assert limiter.try_acquire(10) == 0.0 and limiter.try_acquire(10) == 0.0
    assert limiter.try_acquire(10) == POLL_S  # all busy: ask again shortly
    assert limiter.in_flight() == 2
    limiter.release(10)
    assert limiter.try_acquire(10) == 0.0
    assert limiter.in_flight() == 2


def test_a_connection_never_released_comes_back_when_its_lease_ends():
    clock = Clock()
    limiter = EndpointLimiter(1, lease_s=150.0, clock=clock)
    assert limiter.try_acquire(10) == 0.0  # its holder dies mid-request: no release ever comes
    clock.now += 149.0
    assert limiter.try_acquire(10) == POLL_S  # a request may still be running
    clock.now += 1.0
    assert limiter.try_acquire(10) == 0.0 and limiter.in_flight() == 1
    limiter.release(10)
    limiter.release(10)  # the dead holder's late release (its lease ended) frees nothing more
    assert limiter.in_flight() == 0
    assert limiter.try_acquire(10) == 0.0 and limiter.try_acquire(10) == POLL_S


def test_rpm_window_says_when_the_oldest_request_leaves_it():
    clock = Clock()
    limiter = EndpointLimiter(10, rpm=3, clock=clock)
    for step in range(3):
        clock.now = 1000.0 + 10 * step  # requests at 1000, 1010, 1020
        assert limiter.try_acquire(1) == 0.0
        limiter.release(1)
    clock.now = 1030.0
    assert limiter.try_acquire(1) == pytest.approx(30.0)  # the request at 1000 leaves at 1060
    clock.now = 1060.0
    assert limiter.try_acquire(1) == 0.0
    clock.now = 1061.0
    assert limiter.try_acquire(1) == pytest.approx(9.0)  # next: the one at 1010, leaving at 1070


def test_tpm_charges_the_estimate_then_the_real_usage():
    clock = Clock()
    limiter = EndpointLimiter(10, tpm=1000, clock=clock)
    assert limiter.try_acquire(800) == 0.0  # estimate: prompt + the whole reply limit
    clock.now += 5
    assert limiter.try_acquire(300) == pytest.approx(WINDOW_S - 5)  # 800 + 300 > 1000
    limiter.release(200)  # the reply was short: only 200 were used
    assert limiter.try_acquire(300) == 0.0  # 200 + 300 fits
    clock.now += 1
    assert limiter.try_acquire(600) == pytest.approx(WINDOW_S - 6)  # 500 + 600 > 1000 until the first leaves
    clock.now = 1000.0 + WINDOW_S
    assert limiter.try_acquire(600) == 0.0  # 300 + 600 fits once the first left the window


def test_a_request_larger_than_the_budget_runs_alone_rather_than_never():
    clock = Clock()
    limiter = EndpointLimiter(10, tpm=100, clock=clock)
    assert limiter.try_acquire(500) == 0.0  # empty window: granted
    assert limiter.try_acquire(1) == pytest.approx(WINDOW_S)  # and the next waits for it to leave
    clock.now += WINDOW_S
    assert limiter.try_acquire(1) == 0.0


def test_tpm_wait_frees_just_enough_of_the_oldest_entries():
    clock = Clock()
    limiter = EndpointLimiter(10, tpm=100, clock=clock)
    for used in (40, 40, 20):
        assert limiter.try_acquire(used) == 0.0
        limiter.release(used)
        clock.now += 10  # granted at 1000, 1010, 1020
    assert limiter.try_acquire(30) == pytest.approx(1000 + WINDOW_S - clock.now)  # the first 40 suffices
    assert limiter.try_acquire(70) == pytest.approx(1010 + WINDOW_S - clock.now)  # needs the first two


def test_connections_are_checked_before_budgets_and_a_refusal_takes_nothing():
    limiter = EndpointLimiter(1, rpm=1, clock=Clock())
    assert limiter.try_acquire(5) == 0.0
    assert limiter.try_acquire(5) == POLL_S
    limiter.release(5)
    assert limiter.try_acquire(5) > POLL_S  # connection free, rpm spent
    assert limiter.in_flight() == 0


def test_it_pickles_with_its_state_and_a_fresh_lock():
    limiter = EndpointLimiter(2, rpm=5, tpm=1000)
    limiter.try_acquire(100)
    copy = pickle.loads(pickle.dumps(limiter))
    assert copy.in_flight() == 1
    copy.release(40)
    assert copy.try_acquire(960) == 0.0  # the correction reached the copy's window entry
    assert limiter.in_flight() == 1  # the original is untouched


def test_concurrent_threads_never_exceed_the_cap():
    limiter = EndpointLimiter(3, poll_s=0.001)
    inside, peak, lock = [0], [0], threading.Lock()

    def worker() -> None:
        for _ in range(200):
            while limiter.try_acquire(1) > 0:
                pass
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            with lock:
                inside[0] -= 1
            limiter.release(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] <= 3 and limiter.in_flight() == 0


def test_a_connection_cap_below_one_is_refused():
    with pytest.raises(ValueError, match="max_connections"):
        EndpointLimiter(0)
