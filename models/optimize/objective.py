# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The exact M/M/1/N objective (our reading of Eq. 14) shared by every solver.

    F(mu, lam) = sum_i (mu_i / Gamma) * (a_i * Gamma * W_s,i + b_i * q_i)

with ``(a_i, b_i) = weights[i]`` and the class's second objective ``q_i``:

* A (Eq. 11): residual bandwidth ``(n C - sum_j lambda_e,j) / (n C)``.  Eq. 10
  subtracts queue lengths (packets) from bandwidth, and minimising it would
  reward long queues; the paper's text defines C_rest as bandwidth minus the
  traffic carried, so we use the admitted throughput lambda_e (C in packets/s).
* B (Eq. 12): jitter ``Gamma * |W_i - W_s,i|`` against the measured delay W_i.
* C (Eq. 13): loss ``N_loss,i / Gamma``.

Delays are scaled by Gamma (port packet times) and rates divided by Gamma or
n C so every term is dimensionless and the weights do not depend on units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from models import cycle_speedups
from models.optimize.problem import PmqecnProblem, ProblemError, QosKind
from models.queueing.kernel import mm1n_arrays

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Evaluation:
    """Objective and constraint values for a batch of candidate points (last axis)."""

    objective: FloatArray
    total_queue: FloatArray  # sum_i L_s,i, C2 asks for <= N
    throughput: FloatArray  # sum_i lambda_e,i, C6 asks for <= n C
    smooth: FloatArray  # objective without the jitter terms
    deviation: FloatArray  # (k, S): mu_i (W_i - W_s,i) for class B, 0 elsewhere
    queues: FloatArray  # (k, S): L_s,i, kept so the thresholds K need no second kernel call

    def jitter_weights(self, problem: PmqecnProblem) -> FloatArray:
        """b_i for class B, 0 elsewhere: objective = smooth + jitter_weights @ |deviation|."""
        return np.where(problem.mask(QosKind.B), problem.weight_arrays()[1], 0.0)


def evaluate(problem: PmqecnProblem, mu: npt.ArrayLike, lam: npt.ArrayLike) -> Evaluation:
    """Evaluate F for ``mu``, ``lam`` of shape (k,) or (k, S); no feasibility checks."""
    mu_a = np.asarray(mu, dtype=np.float64)
    lam_a = np.asarray(lam, dtype=np.float64)
    if mu_a.ndim == 1:
        mu_a, lam_a = mu_a[:, None], lam_a[:, None]
    # L_q is no term of F: left out (the polish evaluates F hundreds of times a cycle).
    r = mm1n_arrays(lam_a, mu_a, problem.N, with_lq=not cycle_speedups.ENABLED)
    gamma = problem.Gamma
    delay_w, qos_w = (w[:, None] for w in problem.weight_arrays())
    is_a = problem.mask(QosKind.A)[:, None]
    is_b = problem.mask(QosKind.B)[:, None]
    throughput = r.lambda_e.sum(axis=0)
    residual = (problem.n * problem.C - throughput) / (problem.n * problem.C)
    # Class B's jitter is kept apart (as a signed deviation) so the SLSQP polish
    # can treat |.| through an epigraph instead of differentiating across the kink.
    qos = np.where(is_a, residual, np.where(is_b, 0.0, r.n_loss / gamma))
    smooth = ((mu_a / gamma) * (delay_w * gamma * r.ws + qos_w * qos)).sum(axis=0)
    w_meas = np.asarray(problem.W, dtype=np.float64)[:, None]
    deviation = np.where(is_b, mu_a * (w_meas - r.ws), 0.0)
    objective = smooth + (qos_w * np.abs(deviation)).sum(axis=0)
    return Evaluation(objective, r.ls.sum(axis=0), throughput, smooth, deviation, r.ls)


def evaluate_many(
    problems: list[PmqecnProblem], mus: list[FloatArray], lams: list[FloatArray]
) -> list[Evaluation]:
    """:func:`evaluate` of one point per port, as one kernel call over every class.

    The ports are independent; their classes are laid end to end and the
    port-level sums (throughput, the objective, sum L_s) taken per port, so
    each result equals the port's own :func:`evaluate` up to summation order.
    """
    if not problems:
        return []
    sizes = np.array([p.k for p in problems])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    port_of = np.repeat(np.arange(len(problems)), sizes)
    mu = np.concatenate(mus)
    lam = np.concatenate(lams)
    n_cap = np.repeat([float(p.N) for p in problems], sizes)
    gamma = np.repeat([p.Gamma for p in problems], sizes)
    n_c = np.array([p.n * p.C for p in problems])
    weights = np.concatenate([p.weights_matrix for p in problems])
    delay_w, qos_w = weights[:, 0], weights[:, 1]
    kinds = [k for p in problems for k in p.kinds]
    is_a = np.array([k is QosKind.A for k in kinds])
    is_b = np.array([k is QosKind.B for k in kinds])
    w_meas = np.concatenate([p.w_array for p in problems])
    r = mm1n_arrays(lam, mu, n_cap, with_lq=not cycle_speedups.ENABLED)
    throughput = np.add.reduceat(r.lambda_e, starts)
    residual = ((n_c - throughput) / n_c)[port_of]
    qos = np.where(is_a, residual, np.where(is_b, 0.0, r.n_loss / gamma))
    smooth_i = (mu / gamma) * (delay_w * gamma * r.ws + qos_w * qos)
    deviation = np.where(is_b, mu * (w_meas - r.ws), 0.0)
    smooth = np.add.reduceat(smooth_i, starts)
    objective = smooth + np.add.reduceat(qos_w * np.abs(deviation), starts)
    total_queue = np.add.reduceat(r.ls, starts)
    out = []
    for j, (s, k) in enumerate(zip(starts, sizes, strict=True)):
        cut = slice(int(s), int(s + k))
        out.append(
            Evaluation(
                objective[j : j + 1],
                total_queue[j : j + 1],
                throughput[j : j + 1],
                smooth[j : j + 1],
                deviation[cut, None],
                r.ls[cut, None],
            )
        )
    return out


def as_vector(problem: PmqecnProblem, values: npt.ArrayLike, name: str) -> FloatArray:
    """``values`` as a float vector of length k with finite positive entries."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ProblemError(f"{name} must be a sequence of {problem.k} numbers") from None
    if arr.shape != (problem.k,):
        raise ProblemError(f"{name} must have shape ({problem.k},), got {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0.0))
    if bad.size:
        raise ProblemError(f"{name}[{bad[0]}] must be finite and > 0, got {arr[bad[0]]}")
    return arr


def exact_objective(problem: PmqecnProblem, mu: npt.ArrayLike, lam_star: npt.ArrayLike) -> float:
    """F(mu, lam_star) on the exact M/M/1/N model (see module docstring)."""
    mu_a = as_vector(problem, mu, "mu")
    lam_a = as_vector(problem, lam_star, "lam_star")
    return float(evaluate(problem, mu_a, lam_a).objective[0])
