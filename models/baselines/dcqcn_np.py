# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DCQCN notification point: the receiver NIC turning CE marks into CNPs.

Zhu et al., SIGCOMM 2015, Sec. 3 (NP algorithm): when a CE-marked packet
arrives for a flow and no CNP has been sent for that flow in the last ``N``
microseconds, a CNP is sent immediately; the NIC sends at most one CNP every
``N`` us per flow.  Default ``N = 50 us`` (the paper's deployment value, also
the setting the BFCC paper, seed 001, used for its DCQCN baseline).

The NP is modelled as the immediate, rate-limited form: a mark inside the
window is dropped, not deferred to the window's end.  A flow is whatever
hashable key the simulator uses (the paper's is the RoCE queue pair).
"""

from __future__ import annotations

from collections.abc import Hashable

from models.baselines._flow_limiter import PerFlowLimiter

DCQCN_CNP_INTERVAL_NS = 50_000


class DcqcnNotificationPoint:
    def __init__(self, cnp_interval_ns: int = DCQCN_CNP_INTERVAL_NS) -> None:
        self._limiter = PerFlowLimiter(cnp_interval_ns, "cnp_interval_ns")

    @property
    def cnp_interval_ns(self) -> int:
        return self._limiter.interval_ns

    def last_cnp_ns(self, flow: Hashable) -> int | None:
        return self._limiter.last_ns(flow)

    def on_packet(self, flow: Hashable, ce_marked: bool, now_ns: int) -> bool:
        """Process one received data packet; True means send a CNP for ``flow`` now."""
        if not self._limiter.allowed(flow, now_ns) or not ce_marked:
            return False
        self._limiter.record(flow, now_ns)
        return True
