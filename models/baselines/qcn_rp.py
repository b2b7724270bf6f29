# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN / QCN reaction point: the source's rate controller (P4QCN Eqs. 2-4).

Geng, Yan, Zhang, P4QCN, Electronics 2019 (seed 003), Sec. 3.1.2.  A
three-state FSM: rate reduction, fast recovery, active increase.

On a feedback packet (Eq. 2)::

    Rt = R_old;  Rc = Rc (1 - beta/2);  Rd = Rt - Rc

then the byte counter restarts and fast recovery begins.  Each time ``B`` bytes
have been sent one cycle ends.  The first ``N`` cycles are fast recovery
(Eq. 3, ``Rc = (Rt + Rc) / 2``, ``Rt`` fixed); every later cycle is active
increase (Eq. 4, ``Rt += R_AI; Rc = (Rt + Rc) / 2``).  P4QCN has no hyper
increase.  ``Rc`` stays within ``[min_rate, line_rate]`` and ``Rt`` at most
``line_rate``.

Defaults and where they come from:

* ``beta = 1`` (its maximum, a halving), ``N = 5``, ``R_AI = 5 Mb/s``: P4QCN
  Sec. 4 (also the BFCC paper's P4QCN baseline, seed 001).
* ``B = 150 KB``: the QCN (IEEE 802.1Qau) byte-counter cycle; P4QCN says only
  that a cycle ends "when the value of bytes counter reached a threshold".
* no timer: P4QCN's RP counts cycles with the byte counter alone.  Passing
  ``timer_ns`` adds QCN's timer, whose expiries count as cycles too; the phase
  then follows the larger of the two counts, as in DCQCN.
* ``line_rate`` and ``min_rate`` have no default: P4QCN's 7 Mb/s mininet links
  are no guide for a simulated fabric.

Three options reproduce how seed 000 ran P4QCN as its baseline (the
authors' published RP, YXY-1998/CC ``my-p4qcn/RP.py``; P4QCN's own paper
leaves these open), each off by default:

* ``feedback_packets_per_cut = k``: only every k-th feedback packet cuts (the
  others are counted and otherwise ignored).  Their RP cuts on the 26th
  feedback packet of each run (its comment says 50; the counter steps by
  two on every packet that does not cut).
* ``random_beta``: each cut draws beta uniformly from [0, beta) (theirs:
  ``random.uniform(0, 1)``), from a generator seeded by ``seed``.
* ``initial_rate_bps``: the source starts at this rate in active increase,
  its timer running from time 0, rather than at line rate with the
  increase machinery idle (theirs: 1 Mb/s, "increase").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.baselines._rp_base import ReactionPointBase, RpStage, check_rates
from models.checks import integer, non_negative, positive


@dataclass(frozen=True, kw_only=True)
class QcnRpParams:
    line_rate_bps: float
    min_rate_bps: float
    beta: float = 1.0
    fast_recovery_cycles: int = 5
    rai_bps: float = 5e6
    # None: no byte counter (cycles end on the timer alone).
    byte_counter_bytes: int | None = 150_000
    timer_ns: int | None = None
    feedback_packets_per_cut: int = 1
    random_beta: bool = False
    seed: int = 0
    initial_rate_bps: float | None = None

    def __post_init__(self) -> None:
        check_rates(self.line_rate_bps, self.min_rate_bps)
        beta = positive(self.beta, "beta")
        if beta > 1.0:
            raise ValueError(f"beta must be in (0, 1], got {self.beta!r}")
        integer(self.fast_recovery_cycles, "fast_recovery_cycles", 1)
        non_negative(self.rai_bps, "rai_bps")
        if self.byte_counter_bytes is not None:
            integer(self.byte_counter_bytes, "byte_counter_bytes", 1)
        elif self.timer_ns is None:
            raise ValueError("byte_counter_bytes None needs timer_ns: nothing would end a cycle")
        if self.timer_ns is not None:
            integer(self.timer_ns, "timer_ns", 1)
        integer(self.feedback_packets_per_cut, "feedback_packets_per_cut", 1)
        if self.initial_rate_bps is not None:
            start = positive(self.initial_rate_bps, "initial_rate_bps")
            if not self.min_rate_bps <= start <= self.line_rate_bps:
                raise ValueError(
                    f"initial_rate_bps must be within [min_rate_bps, line_rate_bps], got {start}"
                )


class QcnReactionPoint(ReactionPointBase):
    def __init__(self, params: QcnRpParams) -> None:
        self.params = params
        super().__init__(
            line_rate_bps=params.line_rate_bps,
            min_rate_bps=params.min_rate_bps,
            byte_counter_bytes=params.byte_counter_bytes,
            timer_ns=params.timer_ns,
        )
        self._feedback_seen = 0
        self._rng = random.Random(params.seed)
        if params.initial_rate_bps is not None:
            self._start_in_increase(params.initial_rate_bps, params.fast_recovery_cycles)

    @property
    def rate_deficit_bps(self) -> float:
        """``Rd = Rt - Rc``, the gap fast recovery closes by half each cycle."""
        return self.target_rate_bps - self.rate_bps

    @property
    def cycles(self) -> int:
        return max(self.timer_count, self.byte_count)

    def _stage(self) -> RpStage:
        if self.cycles < self.params.fast_recovery_cycles:
            return RpStage.FAST_RECOVERY
        return RpStage.ADDITIVE_INCREASE

    def on_feedback(self, now_ns: int) -> None:
        self._feedback_seen += 1
        if self._feedback_seen < self.params.feedback_packets_per_cut:
            self.on_timer(now_ns)  # time still passes; the packet itself is ignored
            return
        self._feedback_seen = 0
        super().on_feedback(now_ns)

    def _cut(self, now: int) -> None:
        beta = self.params.beta
        if self.params.random_beta:
            beta = self._rng.uniform(0.0, beta)
        self._set_rates(self.rate_bps * (1.0 - beta / 2.0), self.rate_bps)

    def _increase(self) -> None:
        target = self.target_rate_bps
        if self._stage() is RpStage.ADDITIVE_INCREASE:
            target = min(target + self.params.rai_bps, self.line_rate_bps)
        self._set_rates((target + self.rate_bps) / 2.0, target)
