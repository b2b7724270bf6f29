# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DCQCN congestion point: RED-style ECN marking on the instantaneous egress queue.

Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
Sec. 3 (CP algorithm)::

    p(q) = 0                                   q <= Kmin
    p(q) = Pmax * (q - Kmin) / (Kmax - Kmin)   Kmin < q <= Kmax
    p(q) = 1                                   q > Kmax

Defaults (all from Zhu et al. 2015, the values its deployment uses; also quoted
as "the default parameter setting" by later work): ``k_min = 5 KB``,
``k_max = 200 KB``, ``p_max = 1 %``.  Queue lengths are in bytes by default but
the marker is unit-agnostic: the comparison papers (seeds 000, 001) run it in
queue-occupancy units with ``Kmin = Kmax = 11``.  ``Kmin == Kmax`` is allowed
and degenerates to a step: no mark at ``q <= K``, always mark above.

The marker is stateless apart from the injected uniform source, which keeps it
deterministic under test and lets a simulator own its random streams.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.checks import UniformSource, bernoulli, non_negative, probability

DCQCN_K_MIN_BYTES = 5_000
DCQCN_K_MAX_BYTES = 200_000
DCQCN_P_MAX = 0.01


@dataclass(frozen=True)
class RedEcnParams:
    k_min: float = DCQCN_K_MIN_BYTES
    k_max: float = DCQCN_K_MAX_BYTES
    p_max: float = DCQCN_P_MAX

    def __post_init__(self) -> None:
        k_min = non_negative(self.k_min, "k_min")
        k_max = non_negative(self.k_max, "k_max")
        probability(self.p_max, "p_max")
        if k_max < k_min:
            raise ValueError(f"k_max must be >= k_min, got k_max={k_max} < k_min={k_min}")


def marking_probability(q: float, params: RedEcnParams) -> float:
    """Probability of setting CE on a packet that sees queue length ``q``."""
    q = non_negative(q, "q")
    if q <= params.k_min:
        return 0.0
    if q > params.k_max:
        return 1.0
    # q in (k_min, k_max] implies k_max > k_min, so the division is safe.
    return params.p_max * (q - params.k_min) / (params.k_max - params.k_min)


class RedEcnMarker:
    """Per-packet marking decision of one egress queue."""

    def __init__(self, uniform: UniformSource, params: RedEcnParams | None = None) -> None:
        self.params = params if params is not None else RedEcnParams()
        self._uniform = uniform

    def probability(self, q: float) -> float:
        return marking_probability(q, self.params)

    def should_mark(self, q: float) -> bool:
        """Decide CE for a packet that sees egress queue length ``q``."""
        return bernoulli(self.probability(q), self._uniform)
