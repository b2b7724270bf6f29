# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Event plumbing shared by the QCN-family reaction points (DCQCN, P4QCN/QCN).

Both follow QCN: a congestion notification cuts the rate and restarts the
rate-increase clock; afterwards each expiry of the byte counter (every ``B``
bytes sent) or of the timer (every ``T`` ns) is one rate-increase event, and
the counts of those expiries since the last notification pick the phase.

Time is whatever the caller passes as ``now_ns``.  Every entry point first
fires the timers that fell due at or before ``now_ns`` (in deadline order), so
a simulator may either call :meth:`on_timer` at :attr:`next_timer_ns` or simply
pass time along with its other events; the trace is the same.  A timer due at
the same instant as a notification fires first.

Before the first notification the source runs at line rate with the increase
machinery idle, as a NIC does before its rate limiter is engaged.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod

from models.checks import Clock, integer, positive

RATE_TIMER = "rate_timer"


class RpStage(enum.Enum):
    """Phase the next rate-increase event will apply."""

    IDLE = "idle"
    FAST_RECOVERY = "fast_recovery"
    ADDITIVE_INCREASE = "additive_increase"  # P4QCN's "active increase"
    HYPER_INCREASE = "hyper_increase"


def check_rates(line_rate_bps: object, min_rate_bps: object) -> None:
    line = positive(line_rate_bps, "line_rate_bps")
    low = positive(min_rate_bps, "min_rate_bps")
    if low > line:
        raise ValueError(f"min_rate_bps must be <= line_rate_bps, got {low} > {line}")


class ReactionPointBase(ABC):
    def __init__(
        self,
        *,
        line_rate_bps: float,
        min_rate_bps: float,
        byte_counter_bytes: int | None,
        timer_ns: int | None,
    ) -> None:
        self.line_rate_bps = float(line_rate_bps)
        self.min_rate_bps = float(min_rate_bps)
        self._byte_limit = byte_counter_bytes
        self._timer_ns = timer_ns
        self._rate = self.line_rate_bps
        self._target = self.line_rate_bps
        self._active = False
        self._timer_count = 0
        self._byte_count = 0
        self._bytes = 0
        self._deadlines: dict[str, int] = {}
        self._clock = Clock()

    @property
    def rate_bps(self) -> float:
        return self._rate

    @property
    def target_rate_bps(self) -> float:
        return self._target

    @property
    def timer_count(self) -> int:
        """Timer expiries since the last notification (``T`` in DCQCN)."""
        return self._timer_count

    @property
    def byte_count(self) -> int:
        """Byte-counter expiries since the last notification (``BC`` in DCQCN)."""
        return self._byte_count

    @property
    def next_timer_ns(self) -> int | None:
        return min(self._deadlines.values(), default=None)

    @property
    def stage(self) -> RpStage:
        if not self._active:
            return RpStage.IDLE
        return self._stage()

    def on_feedback(self, now_ns: int) -> None:
        """A congestion notification (CNP, or P4QCN's ECN=11 feedback packet) arrived."""
        now = self._advance(now_ns)
        self._cut(now)
        self._active = True
        self._timer_count = 0
        self._byte_count = 0
        self._bytes = 0
        if self._timer_ns is not None:
            self._deadlines[RATE_TIMER] = now + self._timer_ns

    def _start_in_increase(self, rate_bps: float, cycles: int) -> None:
        """Start at ``rate_bps`` as if ``cycles`` increase events had already
        passed since a notification, the timer running from time 0 (a host
        whose rate limiter is engaged from its first packet)."""
        self._set_rates(rate_bps, rate_bps)
        self._active = True
        self._timer_count = cycles
        self._byte_count = cycles
        if self._timer_ns is not None:
            self._deadlines[RATE_TIMER] = self._timer_ns

    def on_timer(self, now_ns: int) -> None:
        self._advance(now_ns)

    def on_bytes_sent(self, n_bytes: int, now_ns: int) -> None:
        """The source put ``n_bytes`` on the wire at ``now_ns``."""
        n = integer(n_bytes, "n_bytes", 0)
        self._advance(now_ns)
        if not self._active or self._byte_limit is None:  # None: no byte counter
            return
        self._bytes += n
        while self._bytes >= self._byte_limit:
            self._bytes -= self._byte_limit
            self._increase()
            self._byte_count += 1

    def _advance(self, now_ns: int) -> int:
        now = self._clock.advance(now_ns)
        while self._deadlines:
            # Ties break by timer name; the two DCQCN timers commute, so order is moot.
            name, due = min(self._deadlines.items(), key=lambda item: (item[1], item[0]))
            if due > now:
                break
            self._fire(name, due)
        return now

    def _fire(self, name: str, due: int) -> None:
        if name != RATE_TIMER:
            self._fire_other(name, due)
            return
        assert self._timer_ns is not None
        self._increase()
        self._timer_count += 1
        self._deadlines[RATE_TIMER] = due + self._timer_ns

    def _set_rates(self, rate: float, target: float) -> None:
        self._target = min(target, self.line_rate_bps)
        self._rate = min(max(rate, self.min_rate_bps), self.line_rate_bps)

    def _fire_other(self, name: str, due: int) -> None:
        raise AssertionError(f"unknown timer {name}")

    @abstractmethod
    def _stage(self) -> RpStage:
        """Phase from the expiry counts, evaluated before the event's own count is added."""

    @abstractmethod
    def _cut(self, now: int) -> None:
        """Rate decrease on a notification."""

    @abstractmethod
    def _increase(self) -> None:
        """One rate-increase event in the phase given by :meth:`_stage`."""
