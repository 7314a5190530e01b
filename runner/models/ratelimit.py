"""How many requests an endpoint gets at once and per minute: connections, rpm and tpm.

The core object never blocks: `try_acquire(tokens)` either grants a request (0.0) or says how
long to wait before asking again, and `release(tokens_used)` hands the connection back. The
caller (OpenAIModel) does the waiting, so the same object can sit behind a lock in one process
or behind an actor shared by many machines: its state is plain data and it pickles.

A 429's Retry-After pauses the whole limiter (`pause`): the endpoint's budget is the run's, so
every worker waits it out, not only the request that was told.

Budgets are sliding 60-second windows. A request's token count is an estimate when it is
granted (the prompt is known, the reply is not); release corrects it with the real usage.
A granted connection is a lease of `lease_s` (the request timeout and a margin): a worker that
dies mid-request (a lost Ray node) never releases, and its connection comes back when the
lease ends instead of shrinking the run's capacity for good.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from runner.core.settings import ModelSettings

WINDOW_S = 60.0  # rpm and tpm are per minute
POLL_S = 0.05  # how soon to ask again when every connection is busy (a release has no signal)
DEFAULT_MAX_CONNECTIONS: int = ModelSettings.model_fields["max_connections"].default
MIN_WAIT_S = 1e-3  # a positive wait even when float rounding puts the expiry at "now"


class Limiter(Protocol):
    """What OpenAIModel needs of a limiter (EndpointLimiter, or a proxy to a shared one)."""

    def try_acquire(self, tokens: int) -> float:
        """0.0: granted (a connection and budget are taken); else seconds to wait and ask again."""

    def release(self, tokens_used: int) -> None:
        """The request ended: free its connection; `tokens_used` replaces its estimate."""

    def pause(self, seconds: float) -> None:
        """The endpoint asked to wait (a 429's Retry-After): grant nothing for `seconds`."""


class EndpointLimiter:
    """Connections in flight, requests per minute and tokens per minute (None: no limit)."""

    def __init__(self, max_connections: int = DEFAULT_MAX_CONNECTIONS, rpm: int | None = None,
                 tpm: int | None = None, *, lease_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic, poll_s: float = POLL_S) -> None:
        """`lease_s`: how long a connection may be held without a release (None: forever)."""
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self.max_connections = max_connections
        self.rpm = rpm
        self.tpm = tpm
        self.poll_s = poll_s
        self.lease_s = lease_s
        self._clock = clock
        self._lock = threading.Lock()
        self._starts: deque[float] = deque()  # grant times within the window (rpm)
        # [grant time, tokens] within the window (tpm); lists, so release can correct one in place
        self._spent: deque[list[float]] = deque()
        # Entries of requests not released yet, oldest first: the connections in flight.
        self._open: deque[list[float]] = deque()
        self._paused_until = 0.0  # a Retry-After holds every request of the run until then

    def try_acquire(self, tokens: int) -> float:
        """Grant one request of about `tokens` tokens, or the seconds to wait before asking again."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if now < self._paused_until:
                return max(self._paused_until - now, MIN_WAIT_S)
            if len(self._open) >= self.max_connections:
                return self.poll_s
            wait = max(self._rpm_wait(now), self._tpm_wait(now, tokens))
            if wait > 0:
                return max(wait, MIN_WAIT_S)
            self._starts.append(now)
            entry = [now, float(max(tokens, 0))]
            self._spent.append(entry)
            self._open.append(entry)
            return 0.0

    def release(self, tokens_used: int) -> None:
        """Free a connection and put the real token count in place of the estimate. Releases
        carry no ticket, so the oldest open estimate is corrected: when requests end out of
        order the per-entry amounts swap, the window's total stays right. A release whose
        lease already ended frees nothing more."""
        with self._lock:
            if self._open:
                self._open.popleft()[1] = float(max(tokens_used, 0))

    def pause(self, seconds: float) -> None:
        """Grant nothing for `seconds` from now (a later pause never shortens an earlier one)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + max(seconds, 0.0))

    def in_flight(self) -> int:
        """Requests granted and not released (for tests and the log)."""
        with self._lock:
            return len(self._open)

    def _expire(self, now: float) -> None:
        while self.lease_s is not None and self._open and self._open[0][0] <= now - self.lease_s:
            self._open.popleft()  # its holder died mid-request: the connection comes back
        while self._starts and self._starts[0] <= now - WINDOW_S:
            self._starts.popleft()
        while self._spent and self._spent[0][0] <= now - WINDOW_S:
            self._spent.popleft()  # an open entry may expire too: its budget has come back

    def _rpm_wait(self, now: float) -> float:
        if self.rpm is None or len(self._starts) < self.rpm:
            return 0.0
        # The request that frees a place is the rpm-th newest.
        return self._starts[-self.rpm] + WINDOW_S - now

    def _tpm_wait(self, now: float, tokens: int) -> float:
        if self.tpm is None:
            return 0.0
        used = sum(n for _, n in self._spent)
        # An empty window grants even a request larger than the whole budget: else it never runs.
        if used == 0 or used + tokens <= self.tpm:
            return 0.0
        freed = 0.0
        for granted, n in self._spent:
            freed += n
            if used - freed + tokens <= self.tpm or freed >= used:
                return granted + WINDOW_S - now
        return WINDOW_S  # unreachable: the last entry frees everything

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock does not pickle; the copy gets its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
