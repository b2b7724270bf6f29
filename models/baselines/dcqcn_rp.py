# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DCQCN reaction point: the sender NIC's rate controller.

Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
Sec. 3 (RP algorithm), as an explicit state machine.

On a CNP (Eq. 1, applied in the order the paper lists it)::

    Rt = Rc;  Rc = Rc (1 - alpha/2);  alpha = (1 - g) alpha + g

and the alpha timer, rate timer and byte counter restart.  Each ``K`` ns without
a CNP, ``alpha = (1 - g) alpha`` (Eq. 2).  Every ``T`` ns (timer, count ``T``)
and every ``B`` bytes sent (byte counter, count ``BC``) is a rate-increase
event, whose phase comes from the counts before the event is added:

* fast recovery, ``max(T, BC) < F``: ``Rc = (Rt + Rc) / 2`` (Eq. 3), so with one
  counter running exactly ``F`` steps halve the gap to the fixed target, the
  paper's "F = 5 successive iterations" (the authors' ns-3 code tests the
  count after adding the event and so runs only ``F - 1``);
* additive increase, otherwise while ``min(T, BC) < F``:
  ``Rt += R_AI; Rc = (Rt + Rc) / 2`` (Eq. 4);
* hyper increase, ``min(T, BC) >= F``: ``Rt += i R_HAI; Rc = (Rt + Rc) / 2`` with
  ``i = min(T, BC) - F + 1``.

``Rc`` stays within ``[min_rate, line_rate]`` and ``Rt`` at most ``line_rate``.

Defaults and where they come from:

* ``g = 1/256``, ``K = 55 us`` (alpha timer), ``F = 5``: Zhu et al. 2015 (and
  the BFCC paper's DCQCN baseline, seed 001: g = 1/256, K = 55 us).
* ``T = 55 us``, ``B = 10 MB`` (10**7 bytes), ``R_AI = 40 Mb/s``: the parameter
  set of Zhu et al. 2015 that its fluid model (and reproductions of it) use.
  The authors' released ns-3 config (bobzhuyb/ns3-rdma mix/config.txt)
  uses T = 60 us and B = 300 KB instead; pass those to reproduce it.
* ``R_HAI = 200 Mb/s``: that same ns-3 config (we found no value in the paper).
* ``line_rate = 40 Gb/s``: the paper's testbed NICs.
* ``min_rate = 100 Mb/s``: the authors' ns-3 ``MinRate`` default.
* ``alpha_init = 1``: the NIC default (Mellanox ``initial_alpha_value``) and
  the HPCC ns-3 DCQCN model; the paper gives no value.  A first CNP then halves
  the rate.
* ``alpha_update_before_cut = False`` follows Eq. 1's order; both public ns-3
  models update alpha first, so ``True`` reproduces them.
"""

from __future__ import annotations

from dataclasses import dataclass

from models import speedups
from models.baselines._rp_base import RATE_TIMER, ReactionPointBase, RpStage, check_rates
from models.checks import integer, non_negative, probability

ALPHA_TIMER = "alpha_timer"


@dataclass(frozen=True)
class DcqcnRpParams:
    line_rate_bps: float = 40e9
    min_rate_bps: float = 100e6
    g: float = 1.0 / 256.0
    alpha_init: float = 1.0
    alpha_timer_ns: int = 55_000
    rate_timer_ns: int = 55_000
    byte_counter_bytes: int = 10_000_000
    fast_recovery_steps: int = 5
    rai_bps: float = 40e6
    rhai_bps: float = 200e6
    alpha_update_before_cut: bool = False

    def __post_init__(self) -> None:
        check_rates(self.line_rate_bps, self.min_rate_bps)
        if probability(self.g, "g") == 0.0:
            raise ValueError(f"g must be in (0, 1], got {self.g!r}")
        probability(self.alpha_init, "alpha_init")
        integer(self.alpha_timer_ns, "alpha_timer_ns", 1)
        integer(self.rate_timer_ns, "rate_timer_ns", 1)
        integer(self.byte_counter_bytes, "byte_counter_bytes", 1)
        integer(self.fast_recovery_steps, "fast_recovery_steps", 1)
        non_negative(self.rai_bps, "rai_bps")
        non_negative(self.rhai_bps, "rhai_bps")
        if not isinstance(self.alpha_update_before_cut, bool):
            raise ValueError(
                f"alpha_update_before_cut must be a bool, got {self.alpha_update_before_cut!r}"
            )


class DcqcnReactionPoint(ReactionPointBase):
    def __init__(self, params: DcqcnRpParams | None = None) -> None:
        self.params = params if params is not None else DcqcnRpParams()
        super().__init__(
            line_rate_bps=self.params.line_rate_bps,
            min_rate_bps=self.params.min_rate_bps,
            byte_counter_bytes=self.params.byte_counter_bytes,
            timer_ns=self.params.rate_timer_ns,
        )
        self._alpha = float(self.params.alpha_init)

    @property
    def alpha(self) -> float:
        return self._alpha

    def _stage(self) -> RpStage:
        f = self.params.fast_recovery_steps
        if max(self.timer_count, self.byte_count) < f:
            return RpStage.FAST_RECOVERY
        if min(self.timer_count, self.byte_count) < f:
            return RpStage.ADDITIVE_INCREASE
        return RpStage.HYPER_INCREASE

    def _cut(self, now: int) -> None:
        g = self.params.g
        if self.params.alpha_update_before_cut:
            self._alpha = (1.0 - g) * self._alpha + g
            self._set_rates(self.rate_bps * (1.0 - self._alpha / 2.0), self.rate_bps)
        else:
            self._set_rates(self.rate_bps * (1.0 - self._alpha / 2.0), self.rate_bps)
            self._alpha = (1.0 - g) * self._alpha + g
        self._deadlines[ALPHA_TIMER] = now + self.params.alpha_timer_ns

    def _fire_other(self, name: str, due: int) -> None:
        assert name == ALPHA_TIMER
        self._alpha *= 1.0 - self.params.g
        self._deadlines[ALPHA_TIMER] = due + self.params.alpha_timer_ns

    def _increase(self) -> None:
        stage = self._stage()
        target = self.target_rate_bps
        if stage is RpStage.ADDITIVE_INCREASE:
            target += self.params.rai_bps
        elif stage is RpStage.HYPER_INCREASE:
            i = min(self.timer_count, self.byte_count) - self.params.fast_recovery_steps + 1
            target += i * self.params.rhai_bps
        target = min(target, self.line_rate_bps)
        self._set_rates((target + self.rate_bps) / 2.0, target)

    def _advance(self, now_ns: int) -> int:
        """Fire the timers due by ``now_ns``, as the base class does, in a
        tight loop: at the papers' 55 us timers a 10 Mb/s source sees about
        fifteen expiries between two of its packets, and the generic loop
        (a min over the deadlines, a method call per expiry and per phase
        test) was most of a DCQCN or TCN run's time. The two timers touch
        disjoint state (alpha; rates and the timer count) and nothing else
        happens between expiries, so each timer's expiries run in one loop;
        every float operation is the reference's, in its order, so the
        trace is bit for bit the same (tests/test_speedups.py)."""
        if not speedups.ENABLED:
            return super()._advance(now_ns)
        now = self._clock.advance(now_ns)
        deadlines = self._deadlines
        p = self.params
        due = deadlines.get(ALPHA_TIMER)
        if due is not None and due <= now:
            alpha, keep, step = self._alpha, 1.0 - p.g, p.alpha_timer_ns
            while due <= now:
                alpha *= keep
                due += step
            self._alpha = alpha
            deadlines[ALPHA_TIMER] = due
        due = deadlines.get(RATE_TIMER)
        if due is not None and due <= now:
            f, rai, rhai = p.fast_recovery_steps, p.rai_bps, p.rhai_bps
            line, low, step = self.line_rate_bps, self.min_rate_bps, p.rate_timer_ns
            rate, target = self._rate, self._target
            timers, bytes_ = self._timer_count, self._byte_count
            while due <= now:
                # _increase() with _stage() and _set_rates() inlined.
                if timers >= f and bytes_ >= f:
                    target += (min(timers, bytes_) - f + 1) * rhai
                elif timers >= f or bytes_ >= f:
                    target += rai
                target = min(target, line)
                rate = min(max((target + rate) / 2.0, low), line)
                timers += 1
                due += step
            self._rate, self._target, self._timer_count = rate, target, timers
            deadlines[RATE_TIMER] = due
        return now
