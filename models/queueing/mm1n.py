# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""M/M/1/N metrics of one PMQECN virtual queue (paper Eqs. 1-10), validated.

The paper prints Eq. (2) as ``(1 - rho^i)/(1 - rho_i^(N+1)) rho_i^m``; the
``rho^i`` is a typesetting slip for ``rho_i``, and the code uses the standard
M/M/1/N form ``P_m = (1 - rho)/(1 - rho^(N+1)) rho^m``.  The closed forms the
paper gives for ``rho != 1`` are evaluated through :mod:`models.queueing.kernel`,
which also covers ``rho == 1`` by the limit forms and stays finite for N up to
10**6 and any positive ``rho``.

Units follow the caller: if rates are packets/s, W_s is in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from models.checks import integer, positive
from models.queueing.kernel import log_pm, mm1n_arrays


@dataclass(frozen=True)
class MM1NMetrics:
    """Steady state of one M/M/1/N queue.

    ``ls = lq + lc`` (Eq. 6), ``ws = ls / lambda_e`` (Little's law on the traffic
    actually admitted, Eq. 7), ``n_loss = lam * pn`` (Eq. 8).
    """

    lam: float
    mu: float
    N: int
    rho: float
    p0: float
    pn: float
    lq: float
    lc: float
    ls: float
    lambda_e: float
    ws: float
    n_loss: float

    @property
    def wq(self) -> float:
        """Mean time waiting before service (Little's law on L_q)."""
        return self.lq / self.lambda_e

    def jitter(self, w_measured: float) -> float:
        """Eq. 9: distance between a measured queueing delay and the model's W_s."""
        w = float(w_measured)
        if not math.isfinite(w) or w < 0.0:
            raise ValueError(f"w_measured must be finite and >= 0, got {w_measured!r}")
        return abs(w - self.ws)


def mm1n_metrics(lam: float, mu: float, N: int) -> MM1NMetrics:
    """All Eq. 1-8 metrics for arrival rate ``lam``, service rate ``mu``, capacity ``N``."""
    lam_f = positive(lam, "lam")
    mu_f = positive(mu, "mu")
    n_i = integer(N, "N", 1)
    r = mm1n_arrays(lam_f, mu_f, n_i)
    assert r.lq is not None  # asked for by default
    return MM1NMetrics(
        lam=lam_f,
        mu=mu_f,
        N=n_i,
        rho=lam_f / mu_f,
        p0=float(r.p0),
        pn=float(r.pn),
        lq=float(r.lq),
        lc=float(r.lc),
        ls=float(r.ls),
        lambda_e=float(r.lambda_e),
        ws=float(r.ws),
        n_loss=float(r.n_loss),
    )


def p0(lam: float, mu: float, N: int) -> float:
    """Eq. 1: probability the queue is empty."""
    return mm1n_metrics(lam, mu, N).p0


def p_m(lam: float, mu: float, N: int, m: int) -> float:
    """Eq. 2 (corrected): probability of exactly ``m`` packets, 0 <= m <= N."""
    lam_f = positive(lam, "lam")
    mu_f = positive(mu, "mu")
    n_i = integer(N, "N", 1)
    m_i = integer(m, "m", 0)
    if m_i > n_i:
        raise ValueError(f"m must be <= N={n_i}, got {m_i}")
    return math.exp(log_pm(lam_f, mu_f, n_i, m_i))


def p_n(lam: float, mu: float, N: int) -> float:
    """Probability the queue is full (the blocking probability used by Eqs. 3 and 8)."""
    return mm1n_metrics(lam, mu, N).pn


def effective_arrival_rate(lam: float, mu: float, N: int) -> float:
    """Eq. 3: ``lam (1 - P_N)``, the rate of packets that are not dropped."""
    return mm1n_metrics(lam, mu, N).lambda_e


def queue_length(lam: float, mu: float, N: int) -> float:
    """Eq. 6: mean number of packets in the queue, L_s."""
    return mm1n_metrics(lam, mu, N).ls


def sojourn_time(lam: float, mu: float, N: int) -> float:
    """Eq. 7: mean time in the queue of an admitted packet, W_s."""
    return mm1n_metrics(lam, mu, N).ws


def loss_rate(lam: float, mu: float, N: int) -> float:
    """Eq. 8: packets dropped per unit time, N_loss."""
    return mm1n_metrics(lam, mu, N).n_loss


def jitter(w_measured: float, lam: float, mu: float, N: int) -> float:
    """Eq. 9: ``|W - W_s|`` for a measured queueing delay ``w_measured``."""
    return mm1n_metrics(lam, mu, N).jitter(w_measured)


def c_rest(n: int, C: float, queues: Iterable[tuple[float, float]], N: int) -> float:
    """Eq. 10 as printed: ``n C - sum_i L_s^i`` over ``queues`` of ``(lam_i, mu_i)``.

    The paper subtracts queue lengths (packets) from bandwidth, so ``C`` must be
    expressed in packets for the result to mean anything; the optimiser in
    :mod:`models.optimize` uses a throughput reading instead and says why.
    """
    n_i = integer(n, "n", 1)
    c_f = positive(C, "C")
    n_cap = integer(N, "N", 1)
    total = 0.0
    for index, pair in enumerate(queues):
        lam, mu = pair
        total += mm1n_metrics(
            positive(lam, f"queues[{index}].lam"), positive(mu, f"queues[{index}].mu"), n_cap
        ).ls
    return n_i * c_f - total
