# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN congestion point: feedback generation, PFC pause/resume, threshold sizing.

Geng, Yan, Zhang, "P4QCN: Congestion Control Using P4-Capable Device in Data
Center Networks", Electronics 8(3):280, 2019 (seed 003).

Feedback (Sec. 3.1.1, Eq. 1) on the egress queue ``q``::

    P = 0                  q <= Qmin
    P = alpha (q - Qmin)   Qmin < q < Qmax     (capped at 1)
    P = 1                  q >= Qmax            ("when the queue size reaches Qmax")

A feedback packet (a clone sent back to the flow's source with ECN = 11) is
generated at most once every ``N`` us per flow, a flow being a source/destination
IP pair.  Eq. 1 stops at ``Q_pfc``; above it this model keeps ``P = 1`` because
nothing in the paper switches feedback off while PFC is pausing the upstream.

PFC (Sec. 2.2, 3.1.1) acts on the ingress queue: PAUSE when it exceeds
``Q_PFC``, RESUME when it comes back under.  The paper has a single threshold;
the state machine still has hysteresis in that it emits one PAUSE per episode
and one RESUME, and ``q == Q_PFC`` keeps the current state.  ``q_resume`` lets
a caller add a lower XON threshold as real PFC implementations do; it defaults
to ``Q_PFC``, the paper's behaviour.

Thresholds (Sec. 3.2.2), with ``Q`` the switch buffer, ``n`` ports, 8 PFC
priorities and ``Q_flight`` one BDP of in-flight data::

    Q_PFC    <= (Q - 8 n Q_flight) / (8 n)
    Q_P4QCN  <= Q_PFC - Q_flight
    Q_P4QCN  <  a (Q - 8 n Q_flight) / (8 n (a + 1)),  a = 8  (shared buffer, after DCQCN)

Defaults: ``Qmin = Qmax = 11``, ``Q_PFC = 14``: the paper's testbed, in bmv2
queue-occupancy units (the comparison papers, seeds 000 and 001, also set the
P4QCN threshold to 11).  ``alpha`` defaults to ``1 / (Qmax - Qmin)`` so P reaches 1 exactly at
Qmax as in the paper's Fig. 3; it is irrelevant when ``Qmin == Qmax``.  The
feedback interval ``N`` has no value in the paper (its "N = 5" is the fast
recovery cycle count, which shares the letter); the default 50 us borrows the
DCQCN CNP interval, the closest published rate limit for the same purpose.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass

from models.baselines._flow_limiter import PerFlowLimiter
from models.checks import (
    UniformSource,
    bernoulli,
    integer,
    non_negative,
    positive,
)

ECN_CONGESTION_FEEDBACK = 0b11
P4QCN_Q_MIN = 11.0
P4QCN_Q_MAX = 11.0
P4QCN_Q_PFC = 14.0
P4QCN_FEEDBACK_INTERVAL_NS = 50_000
SHARED_BUFFER_ALPHA = 8.0
PFC_PRIORITIES = 8


@dataclass(frozen=True)
class P4qcnCpParams:
    q_min: float = P4QCN_Q_MIN
    q_max: float = P4QCN_Q_MAX
    q_pfc: float = P4QCN_Q_PFC
    alpha: float | None = None
    feedback_interval_ns: int = P4QCN_FEEDBACK_INTERVAL_NS

    def __post_init__(self) -> None:
        q_min = non_negative(self.q_min, "q_min")
        q_max = non_negative(self.q_max, "q_max")
        q_pfc = non_negative(self.q_pfc, "q_pfc")
        if q_max < q_min:
            raise ValueError(f"q_max must be >= q_min, got q_max={q_max} < q_min={q_min}")
        # PFC is the last resort, so P4QCN has to trigger no later than it (Sec. 3.2.2).
        if q_pfc < q_max:
            raise ValueError(f"q_pfc must be >= q_max, got q_pfc={q_pfc} < q_max={q_max}")
        if self.alpha is not None:
            positive(self.alpha, "alpha")
        integer(self.feedback_interval_ns, "feedback_interval_ns", 1)

    @property
    def slope(self) -> float:
        if self.alpha is not None:
            return float(self.alpha)
        span = self.q_max - self.q_min
        return 1.0 / span if span > 0 else 1.0


def feedback_probability(q: float, params: P4qcnCpParams) -> float:
    """Eq. 1 of P4QCN at egress queue size ``q``."""
    q = non_negative(q, "q")
    if q >= params.q_max and q > params.q_min:
        return 1.0
    if q <= params.q_min:
        # With Qmin == Qmax (the paper's own setting) the threshold must be
        # exceeded, as Sec. 3.1.1 words it, so q == Qmin == Qmax sends nothing.
        return 0.0
    return min(1.0, params.slope * (q - params.q_min))


class P4qcnCongestionPoint:
    """Feedback decisions of one egress queue, rate-limited per flow."""

    def __init__(self, uniform: UniformSource, params: P4qcnCpParams | None = None) -> None:
        self.params = params if params is not None else P4qcnCpParams()
        self._uniform = uniform
        self._limiter = PerFlowLimiter(self.params.feedback_interval_ns, "feedback_interval_ns")

    def probability(self, q: float) -> float:
        return feedback_probability(q, self.params)

    def last_feedback_ns(self, flow: Hashable) -> int | None:
        return self._limiter.last_ns(flow)

    def on_packet(self, flow: Hashable, q: float, now_ns: int) -> bool:
        """True means clone this packet back to ``flow``'s source as a feedback packet.

        The rate limit is checked before the random draw so a suppressed flow
        does not consume the random stream.
        """
        p = self.probability(q)
        if not self._limiter.allowed(flow, now_ns) or p <= 0.0:
            return False
        if not bernoulli(p, self._uniform):
            return False
        self._limiter.record(flow, now_ns)
        return True


class PfcAction(enum.Enum):
    PAUSE = "pause"
    RESUME = "resume"


class PfcGate:
    """PAUSE/RESUME decisions for one ingress queue (one port and priority)."""

    def __init__(self, q_pfc: float = P4QCN_Q_PFC, q_resume: float | None = None) -> None:
        self.q_pfc = non_negative(q_pfc, "q_pfc")
        self.q_resume = self.q_pfc if q_resume is None else non_negative(q_resume, "q_resume")
        if self.q_resume > self.q_pfc:
            raise ValueError(
                f"q_resume must be <= q_pfc, got q_resume={self.q_resume} > q_pfc={self.q_pfc}"
            )
        self.paused = False

    def on_queue(self, q: float) -> PfcAction | None:
        """Feed the ingress queue size after an enqueue or dequeue; returns a frame to send."""
        q = non_negative(q, "q")
        if not self.paused and q > self.q_pfc:
            self.paused = True
            return PfcAction.PAUSE
        if self.paused and q < self.q_resume:
            self.paused = False
            return PfcAction.RESUME
        return None


@dataclass(frozen=True)
class P4qcnThresholds:
    """Upper bounds from Sec. 3.2.2; any configured threshold must not exceed them."""

    q_pfc_max: float
    q_p4qcn_max: float  # Q_PFC - Q_flight, with Q_PFC at its bound
    q_p4qcn_shared_max: float  # shared-buffer bound (strict inequality in the paper)


def p4qcn_thresholds(
    buffer: float,
    n_ports: int,
    q_flight: float,
    shared_alpha: float = SHARED_BUFFER_ALPHA,
    priorities: int = PFC_PRIORITIES,
) -> P4qcnThresholds:
    """Threshold bounds for a switch with ``buffer`` bytes shared by ``n_ports`` ports.

    ``q_flight`` is the in-flight allowance per port and priority (the paper
    uses one BDP).  All three quantities share the caller's unit.
    """
    total = positive(buffer, "buffer")
    ports = integer(n_ports, "n_ports", 1)
    flight = non_negative(q_flight, "q_flight")
    a = positive(shared_alpha, "shared_alpha")
    prio = integer(priorities, "priorities", 1)
    queues = prio * ports
    free = total - queues * flight
    if free <= 0:
        raise ValueError(
            f"buffer must exceed {queues} * q_flight = {queues * flight} "
            f"(priorities * n_ports headroom), got {total}"
        )
    q_pfc_max = free / queues
    q_p4qcn_max = q_pfc_max - flight
    if q_p4qcn_max <= 0:
        raise ValueError(
            f"q_flight={flight} leaves no room below Q_PFC={q_pfc_max}; buffer is too small"
        )
    return P4qcnThresholds(
        q_pfc_max=q_pfc_max,
        q_p4qcn_max=q_p4qcn_max,
        q_p4qcn_shared_max=a * free / (queues * (a + 1.0)),
    )
