# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Each class's share of its egress port, which its virtual queue drains at.

The virtual queue stands for the class's own queue only if it drains at the
rate the scheduler serves the class while every class of the port is
backlogged. Under TM DWRR (the default) that is the class's weight share
(weights follow the optimiser's omega_i = mu_i*/Gamma). Under `p4_wrr` it is
not: the Fig. 4 emulation's level counts wrap under backlog, so classes share
by arrival rate whatever their weights (tna/pmqecn/README.md, "Scheduling");
the drain then follows each class's measured lambda_i, and the weights for a
class with no arrivals measured yet.
"""

from __future__ import annotations

from collections import defaultdict

from .config import ClassSpec, PmqecnConfig
from .live import ClassLive


def drain_rate_bytes_per_s(
    config: PmqecnConfig,
    live: dict[int, ClassLive],
    c: ClassSpec,
    weights: dict[int | None, int] | None = None,
) -> int:
    """mu_i* as the data plane drains it: the class's share of its port's
    service rate. ``weights``: each port's total live weight, when the
    caller has it for many classes."""
    port_rate = {ps.port: ps.service_rate_pps for ps in config.ports if ps.service_rate_pps}
    gamma_pps = (port_rate.get(c.port) if c.port is not None else None) or (
        config.optimizer.service_rate_pps
    )
    share = arrival_share(config, live, c) if config.scheduling.mode == "p4_wrr" else None
    if share is None:
        totals = weights if weights is not None else port_weights(config, live)
        share = live[c.id].weight / totals[c.port]
    return int(gamma_pps * config.optimizer.mean_packet_bytes * share)


def arrival_share(config: PmqecnConfig, live: dict[int, ClassLive], c: ClassSpec) -> float | None:
    """The class's share of its port's measured arrivals; None for a class
    with none measured (idle, or before the first cycle), which drains at
    its weight share until it is (erring toward an empty virtual queue)."""
    own = live[c.id].rate_pps
    if own <= 0:
        return None
    return own / sum(live[d.id].rate_pps for d in config.classes if d.port == c.port)


def port_weights(config: PmqecnConfig, live: dict[int, ClassLive]) -> dict[int | None, int]:
    """Each port's total live weight."""
    totals: dict[int | None, int] = defaultdict(int)
    # The classes' weights only, as the paper's omega_i: the port's other
    # queues are set to OTHER_QUEUE_WEIGHT (dynamic_writes), so while they
    # are idle (what they are for) each class gets exactly this share, and
    # while they are backlogged at most n_other / (sum of the class
    # weights + n_other) less. Counting them always (tried) under-read
    # every class's drain by that much on an idle port: DCTCP through
    # PMQECN then carried 35-60 % of the link (tests/evaluation/test_tcp.py).
    for d in config.classes:
        totals[d.port] += live[d.id].weight
    return totals
