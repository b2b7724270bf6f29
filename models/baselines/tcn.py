# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCN: ECN marking on the packet's own sojourn time, decided at dequeue.

Bai et al., "Enabling ECN over Generic Packet Scheduling", CoNEXT 2016: a packet
is marked when the time it spent in the queue exceeds a static threshold ``T``.
The decision needs only the packet's enqueue and dequeue timestamps, so TCN
keeps no per-queue state and works under any scheduler.

``T`` is derived from the standard ECN threshold expressed in time,
``T = lambda * RTT`` (the DCTCP-style rule ``K = lambda * C * RTT`` divided by
the link capacity ``C``).  Default ``lambda = 0.17``: the DCTCP guideline
``K > 0.17 C RTT`` (Alizadeh, Javanmard, Prabhakar, SIGMETRICS 2011), and the
value the PMQECN paper used for its TCN baseline (seed 000, Table 3).  There is
no default RTT: it is a property of the simulated topology.

"Exceeds" is read strictly: a sojourn exactly equal to ``T`` is not marked.
"""

from __future__ import annotations

from models.checks import integer, positive

TCN_LAMBDA = 0.17


def tcn_threshold_ns(base_rtt_ns: int, lam: float = TCN_LAMBDA) -> int:
    """Sojourn threshold ``lambda * RTT``, rounded to the nearest ns and at least 1 ns."""
    rtt = integer(base_rtt_ns, "base_rtt_ns", 1)
    factor = positive(lam, "lam")
    return max(1, round(factor * rtt))


class TcnMarker:
    def __init__(self, threshold_ns: int) -> None:
        self.threshold_ns = integer(threshold_ns, "threshold_ns", 1)

    @classmethod
    def from_rtt(cls, base_rtt_ns: int, lam: float = TCN_LAMBDA) -> TcnMarker:
        return cls(tcn_threshold_ns(base_rtt_ns, lam))

    def should_mark_sojourn(self, sojourn_ns: int) -> bool:
        return integer(sojourn_ns, "sojourn_ns", 0) > self.threshold_ns

    def should_mark(self, enqueue_ns: int, dequeue_ns: int) -> bool:
        """Decide CE at dequeue from the packet's two timestamps."""
        enq = integer(enqueue_ns, "enqueue_ns", 0)
        deq = integer(dequeue_ns, "dequeue_ns", 0)
        if deq < enq:
            raise ValueError(f"dequeue_ns must be >= enqueue_ns, got {deq} < {enq}")
        return self.should_mark_sojourn(deq - enq)
