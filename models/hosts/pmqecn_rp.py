# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN reaction point: the host rate controller of Algorithm 3, Eqs. 15-18.

Three phases (Fig. 5): a feedback packet carrying (lambda, lambda*) sets the
rate to a target derived from lambda*/lambda (Eqs. 15-16) and remembers the
old rate as the recovery target; then N_C fast-recovery cycles halve the gap
to that target (Eq. 17); then active increase raises the target by R_A per
cycle and moves the rate half way to it (Eq. 18).  Cycles are counted as in
QCN/P4QCN, whose recovery the paper adopts: a timer cycle every
``timer_period`` and a byte-counter cycle every ``byte_counter`` bytes sent,
whichever comes.

How we read Eqs. 15-16 against Algorithm 3
------------------------------------------
Algorithm 3 runs ``send_rate = lambda*/lambda * send_rate`` for every
feedback packet received.  But the switch clones a feedback packet for every
packet above K_i, and every one of them carries the same (lambda, lambda*)
until the controller's next cycle: applied per packet, a ratio of 0.9 over a
burst of 50 feedback packets is a cut to 0.5 %, and a port's worth of them
drives every source to its minimum rate.  Eq. 15 says something else:
lambda*/lambda = v*/v, i.e. v* is the sending rate that makes the class arrive
at lambda*, where v is the rate the source sent while the switch measured
lambda.  We read it as that absolute target:

* v* = (lambda*/lambda) * v_bar, with v_bar the source's mean rate over the
  last ``feedback_interval`` (the controller's measurement interval, so v_bar
  is this source's part of the measured lambda; with one source per class
  v* = lambda* in the host's unit).
* v* is computed at most once per ``feedback_interval``, and only for an
  answer (lambda, lambda*) other than the one it was last computed from: the
  same answer read again (the switch's table is written once per controller
  cycle) must not compound.  An answer arriving sooner waits for the interval.
* Every feedback packet then does Algorithm 3's three lines with that target:
  R_t = send_rate; send_rate = min(send_rate, v*); state = fast recovery.
  Repeated packets hold the rate at v* instead of compounding, and restart
  recovery from there; when they stop, recovery and active increase run as
  in Algorithm 3.  Choice: a feedback packet never raises the rate (the
  ``min``): lambda* > lambda means the port has room, which the increase
  phases find.  Choice: a packet whose v* is at or above the current rate
  changes nothing but the remembered answer: restarting recovery toward
  the current rate would stop the increase phases for as long as the port
  marks.

Choices where the paper is silent or self-contradictory are marked "Choice".
Rates use any unit, the same for every argument; times are seconds.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from enum import Enum
from numbers import Integral, Real

from models import speedups
from models.checks import positive


class Phase(Enum):
    FAST_RECOVERY = "fast_recovery"
    ACTIVE_INCREASE = "active_increase"


@dataclass(frozen=True)
class RpConfig:
    """Defaults are the paper's (Algorithm 3): R_A = 5 Mbps, N_C = 5, start at 1 Mbps."""

    line_rate: float = 10e6
    min_rate: float = 0.1e6
    initial_rate: float = 1e6
    r_a: float = 5e6
    n_c: int = 5
    timer_period: float = 0.01  # s, one timer cycle
    byte_counter: int = 150_000  # bytes, one byte-counter cycle (QCN's BC)
    # s: the switch's answers change once per controller cycle, so a new target
    # is taken at most this often (the controller's optimizer.interval_s).
    feedback_interval: float = 1.0

    def __post_init__(self) -> None:
        for name in (
            "line_rate",
            "min_rate",
            "initial_rate",
            "r_a",
            "timer_period",
            "feedback_interval",
        ):
            positive(getattr(self, name), name)
        if not self.min_rate <= self.initial_rate <= self.line_rate:
            raise ValueError(
                f"initial_rate must lie in [min_rate, line_rate] = "
                f"[{self.min_rate}, {self.line_rate}], got {self.initial_rate}"
            )
        for name in ("n_c", "byte_counter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class RpState:
    phase: Phase
    rate: float  # R_c, the current sending rate
    target: float  # R_t, the rate fast recovery heads back to
    cycles_left: int  # fast-recovery cycles still to run
    bytes_in_cycle: int  # bytes sent since the last byte-counter cycle
    timer_epoch: float  # when the timer was last restarted
    timer_cycles: int  # timer cycles run since timer_epoch
    now: float  # latest time seen, to reject time running backwards
    # v*, the rate the latest answer asks for (None before the first feedback),
    # the answer (lambda, lambda*) it was computed from, and when.
    feedback_target: float | None = None
    answer: tuple[float, float] | None = None
    answer_time: float = -math.inf


def _with_now(s: RpState, now: float, **changes: object) -> RpState:
    """`replace(s, now=now, **changes)` without its per-call field walk and
    checks (the harness steps every host's clock at every packet)."""
    out = object.__new__(RpState)
    out.__dict__.update(s.__dict__)
    out.__dict__["now"] = now
    out.__dict__.update(changes)
    return out


class _MeanRate:
    """The mean of a piecewise-constant rate over a trailing window.

    Keeps (time, integral so far, rate from then on) at every change; the
    integral over [t - w, t] is then a difference of two interpolations.
    Checkpoints older than the longest window asked for are dropped.
    """

    def __init__(self, start: float, rate: float) -> None:
        self._start = start
        self._points: deque[tuple[float, float, float]] = deque([(start, 0.0, rate)])

    def _integral(self, t: float) -> float:
        # Latest checkpoint at or before t (the deque is short: changes within one window).
        for when, area, rate in reversed(self._points):
            if when <= t:
                return area + rate * (t - when)
        when, area, rate = self._points[0]
        return area + rate * (t - when)

    def set_rate(self, t: float, rate: float) -> None:
        when, area, last = self._points[-1]
        if rate != last:
            self._points.append((t, area + last * (t - when), rate))

    def mean(self, t: float, window: float) -> float:
        """Mean over [t - window, t], or since the start if that is shorter."""
        lo = max(self._start, t - window)
        while len(self._points) > 1 and self._points[1][0] <= lo:
            self._points.popleft()
        if t <= lo:
            return self._points[-1][2]
        return (self._integral(t) - self._integral(lo)) / (t - lo)


class ReactionPoint:
    """Explicit state machine; every input is validated before the state changes."""

    def __init__(self, config: RpConfig | None = None, now: float = 0.0) -> None:
        self.config = config or RpConfig()
        start = self._time(now, "now", None)
        # Choice: Algorithm 3 starts with R_t = 0, but then the first active
        # increase averages the rate with R_A alone and cuts any start rate
        # above R_A; starting the target at the start rate avoids that.
        self._state = RpState(
            phase=Phase.ACTIVE_INCREASE,
            rate=self.config.initial_rate,
            target=self.config.initial_rate,
            cycles_left=0,
            bytes_in_cycle=0,
            timer_epoch=start,
            timer_cycles=0,
            now=start,
        )
        self._sent = _MeanRate(start, self.config.initial_rate)

    @property
    def state(self) -> RpState:
        return self._state

    @property
    def rate(self) -> float:
        return self._state.rate

    def _time(self, now: object, name: str, last: float | None) -> float:
        if (
            speedups.ENABLED
            and type(now) is float
            and math.isfinite(now)
            and (last is None or now >= last)
        ):
            return now  # the harness's clock: the checks below pass it as is
        if isinstance(now, bool) or not isinstance(now, Real) or not math.isfinite(float(now)):
            raise ValueError(f"{name} must be a finite time, got {now!r}")
        if last is not None and float(now) < last:
            raise ValueError(f"{name} ({now}) is before the last event ({last})")
        return float(now)

    def _clamp(self, rate: float) -> float:
        return min(max(rate, self.config.min_rate), self.config.line_rate)

    def on_feedback(self, rate: float, target_rate: float, now: float) -> float:
        """A congestion feedback with the queue's measured (rate) and optimal (target_rate)
        arrival rates, i.e. the packet's INT rate1 = lambda and rate2 = lambda*."""
        lam = positive(rate, "rate")
        lam_star = positive(target_rate, "target_rate")
        t = self._time(now, "now", self._state.now)
        s = self._state
        answer = (lam, lam_star)
        target, answer_time = s.feedback_target, s.answer_time
        if target is None or (
            answer != s.answer and t - s.answer_time >= self.config.feedback_interval
        ):
            # Eq. 15 as an absolute target (module docstring): once per interval.
            v_bar = self._sent.mean(t, self.config.feedback_interval)
            target, answer_time = self._clamp(v_bar * lam_star / lam), t
        else:
            answer = s.answer if s.answer is not None else answer
        old = s.rate
        if target >= old:
            # Choice: an answer whose v* allows the current rate is no
            # congestion signal.  Restarting recovery toward the current rate
            # would stop the increase phases for as long as the port keeps
            # marking (with K_i = ceil(L_s), one or two packets, a port far
            # below its capacity marks often): an under-loaded port would
            # hold its sources as surely as a halving would.
            self._state = replace(
                s, now=t, feedback_target=target, answer=answer, answer_time=answer_time
            )
            return s.rate
        # Eq. 16: R_t = R_old, R_c = v* (never above R_old).  As in QCN a
        # decrease restarts both cycle counters.
        self._state = RpState(
            phase=Phase.FAST_RECOVERY,
            rate=min(old, target),
            target=old,
            cycles_left=self.config.n_c,
            bytes_in_cycle=0,
            timer_epoch=t,
            timer_cycles=0,
            now=t,
            feedback_target=target,
            answer=answer,
            answer_time=answer_time,
        )
        self._sent.set_rate(t, self._state.rate)
        return self._state.rate

    def on_timer(self, now: float) -> int:
        """Run the timer cycles that have completed by ``now``; returns how many."""
        s = self._state
        if speedups.ENABLED and type(now) is float and now >= s.now and math.isfinite(now):
            # The harness asks at every packet and most asks end no cycle:
            # then only the clock moves. The rate is the one the mean
            # already holds (every change of it is followed by set_rate),
            # so the steps below would leave all else as it is.
            elapsed = (now - s.timer_epoch) / self.config.timer_period
            if math.floor(elapsed + 1e-9) <= s.timer_cycles:
                self._state = _with_now(s, now)
                return 0
        t = self._time(now, "now", self._state.now)
        # Cycle boundaries are epoch + j * period counted in integers, so
        # repeated float additions cannot make a boundary arrive late; the
        # 1e-9 absorbs the rounding in (t - epoch) / period itself.
        elapsed = (t - self._state.timer_epoch) / self.config.timer_period
        due = math.floor(elapsed + 1e-9)
        cycles = max(0, due - self._state.timer_cycles)
        if cycles == 0 and speedups.ENABLED:
            # The harness asks at every packet; most asks end no cycle and
            # move only the clock, which `replace` made a measurable cost.
            self._state = _with_now(self._state, t)
        else:
            self._state = replace(
                self._state, now=t, timer_cycles=self._state.timer_cycles + cycles
            )
        self._run_cycles(cycles)
        self._sent.set_rate(t, self._state.rate)
        return cycles

    def on_bytes_sent(self, nbytes: int, now: float) -> int:
        """Count ``nbytes`` sent; every ``byte_counter`` bytes is one cycle.  Returns cycles run."""
        if not (speedups.ENABLED and type(nbytes) is int and nbytes >= 0) and (
            isinstance(nbytes, bool) or not isinstance(nbytes, Integral) or nbytes < 0
        ):
            raise ValueError(f"nbytes must be an integer >= 0, got {nbytes!r}")
        t = self._time(now, "now", self._state.now)
        total = self._state.bytes_in_cycle + int(nbytes)
        cycles, rest = divmod(total, self.config.byte_counter)
        if speedups.ENABLED:
            self._state = _with_now(self._state, t, bytes_in_cycle=rest)
        else:
            self._state = replace(self._state, now=t, bytes_in_cycle=rest)
        self._run_cycles(cycles)
        self._sent.set_rate(t, self._state.rate)
        return cycles

    def _run_cycles(self, cycles: int) -> None:
        for _ in range(cycles):
            before = self._state
            self._state = self._cycle(before)
            if self._state == before:
                break  # at line rate with nothing left to recover: a fixed point

    def _cycle(self, s: RpState) -> RpState:
        if s.phase is Phase.FAST_RECOVERY:
            # Eq. 17: R_c = (R_c + R_t) / 2, R_t unchanged, for N_C cycles.
            left = s.cycles_left - 1
            phase = Phase.ACTIVE_INCREASE if left == 0 else Phase.FAST_RECOVERY
            rate = self._clamp((s.rate + s.target) / 2.0)
            return replace(s, phase=phase, rate=rate, cycles_left=left)
        # Eq. 18: R_t += R_A, R_c = (R_c + R_t) / 2.  Choice: Algorithm 3 omits the
        # R_t update, which would stall the increase at R_t + R_A instead of
        # probing for spare bandwidth as the text says; the target is capped at
        # line rate so a long quiet spell cannot wind it up without bound.
        target = min(s.target + self.config.r_a, self.config.line_rate)
        return replace(s, target=target, rate=self._clamp((s.rate + target) / 2.0))
