# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Answer of the PMQECN optimiser, its feasibility guard and threshold conversions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Literal

import numpy as np
import numpy.typing as npt

from models.optimize.objective import Evaluation, as_vector, evaluate
from models.optimize.problem import RHO_EPS, PmqecnProblem, ProblemError, SolverError

FloatArray = npt.NDArray[np.float64]
ThresholdRule = Literal["omega_n", "ls"]
THRESHOLD_RULES: tuple[ThresholdRule, ...] = ("omega_n", "ls")

# Solver tolerances (1e-8 for the conic solver) may leave C2 violated by a hair;
# anything worse than this relative slack is reported as a solver failure.
_C2_SLACK = 1e-7
# sum(mu) = Gamma (C5) counts as met within this relative error: a few ulps per class.
_SUM_SLACK = 1e-12
_SHAVE = 4.0 * float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class PmqecnSolution:
    """What the control plane pushes down, plus how it was obtained.

    Two ECN marking thresholds per queue, in packets (the controller converts
    them to buffer cells with its chip's cell size, see
    :func:`thresholds_to_cells`), one per rule of :data:`THRESHOLD_RULES`:

    * ``k_omega_n_packets[i] = max(1, ceil(omega_i N))``: Algorithm 2 step 3,
      K_i = mu*_i / sum(mu*) N, the queue's share of the buffer.  The paper's rule.
    * ``k_ls_packets[i] = max(1, ceil(L_s(lambda*_i, mu*_i)))``: the mean queue at
      the optimal operating point, so a longer queue than the optimum predicts
      is the evidence that class i arrives faster than lambda*_i.  Ours; it
      marks far earlier (1-2 packets at moderate load).
    """

    mu: tuple[float, ...]
    lam_star: tuple[float, ...]
    omega: tuple[float, ...]
    k_omega_n_packets: tuple[int, ...]
    k_ls_packets: tuple[int, ...]
    objective: float  # exact F(mu*, lambda*), the answer's value
    layer1_objective: float  # exact F(mu*, measured lambda), what layer 1 minimised
    solver: str
    status: str

    def k_packets(self, rule: ThresholdRule) -> tuple[int, ...]:
        """The thresholds K_i (packets) of ``rule``: "omega_n" or "ls"."""
        if rule == "omega_n":
            return self.k_omega_n_packets
        if rule == "ls":
            return self.k_ls_packets
        raise ProblemError(f"threshold_rule must be one of {THRESHOLD_RULES}, got {rule!r}")


def _at_least_one_packet(values: npt.ArrayLike) -> tuple[int, ...]:
    # The 1e-9 keeps an exact integer (e.g. omega N = 25.000000000000004) from
    # rounding up a whole packet.
    # tolist(): the same Python floats as float(v) of each, without a numpy
    # scalar per value (a full switch's cycle converts a thousand).
    return tuple(max(1, math.ceil(v - 1e-9)) for v in np.ravel(values).tolist())


def project_mu(problem: PmqecnProblem, mu: npt.ArrayLike) -> FloatArray:
    """Put a near-feasible service split exactly on sum(mu) = Gamma, mu >= lambda/(1-eps)."""
    omega = np.asarray(mu, dtype=np.float64) / problem.Gamma
    if not np.isfinite(omega).all():
        raise SolverError("mu: solver returned non-finite service rates")
    lo = problem.lambdas_array / problem.Gamma / (1.0 - RHO_EPS)
    if (omega >= lo).all() and abs(float(omega.sum()) - 1.0) <= _SUM_SLACK:
        # Already feasible (e.g. a previous answer fed back): renormalising
        # would only move it by rounding, and callers compare such mu exactly.
        return np.asarray(mu, dtype=np.float64).copy()
    omega = np.maximum(omega, lo)
    # Take any excess out of the slack above lo, so the floor survives renormalising.
    slack = omega - lo
    if slack.sum() <= 0.0:
        slack = np.ones_like(lo)
    omega = lo + slack * (1.0 - lo.sum()) / slack.sum()
    return problem.Gamma * omega


def fixed_service_rates(problem: PmqecnProblem, mu: object) -> FloatArray:
    """Validate caller-chosen service rates (skipping layer 1): C4 and C5 must hold."""
    mu_a = as_vector(problem, mu, "mu")  # type: ignore[arg-type]
    # Strict C4 only: project_mu then lifts mu to lambda/(1-eps), so an answer
    # sitting on that floor can be fed back without rounding rejecting it.
    low = np.flatnonzero(mu_a <= problem.lambdas_array)
    if low.size:
        i = int(low[0])
        raise ProblemError(
            f"mu[{i}] = {mu_a[i]} must exceed lambdas[{i}] = {problem.lambdas[i]} (C4)"
        )
    if abs(mu_a.sum() - problem.Gamma) > 1e-9 * problem.Gamma:
        raise ProblemError(f"mu must sum to Gamma = {problem.Gamma}, got {mu_a.sum()} (C5)")
    return project_mu(problem, mu_a)


def project_lam(problem: PmqecnProblem, mu: FloatArray, lam: npt.ArrayLike) -> FloatArray:
    """Clip lambda* into [target_floor, (1-eps) mu] and bring it under sum(lambda*) <= cap.

    Only the part above the floor is scaled down for the cap, so the answer
    keeps the floor (which target_floor already fits under the cap).
    """
    rho = np.asarray(lam, dtype=np.float64) / mu
    if not np.isfinite(rho).all():
        raise SolverError("lam_star: solver returned non-finite arrival rates")
    floor = problem.target_floor(mu)
    excess = np.maximum(rho.clip(RHO_EPS, 1.0 - RHO_EPS) * mu - floor, 0.0)
    cap = problem.target_cap
    room = cap - float(floor.sum())
    if floor.sum() + excess.sum() > cap:
        excess *= room / excess.sum()
    lam_c = floor + excess
    total = float(lam_c.sum())
    while total > cap:  # rounding of the scaled sum: a few ulps of the cap
        left = float(excess.sum())
        if left <= 0.0:
            break  # the floor alone, which C4's clip may lift by ~1e-6 mu
        excess *= shave_factor(total - cap, left)
        lam_c = floor + excess
        total = float(lam_c.sum())
    return lam_c


def shave_factor(over: float, excess: float) -> float:
    """What the excess above the floor is scaled by to take a sum ``over`` the
    cap back under it: 4 eps of it, or twice the overshoot where that is more.
    4 eps of an excess that is tiny beside the cap may not move the sum at
    all: an overshoot of 2e-7 of the excess took some 10^8 turns of it."""
    return max(0.0, 1.0 - max(_SHAVE, 2.0 * over / excess))


def layer_value(
    problem: PmqecnProblem, mu: FloatArray, lam: FloatArray, ev: Evaluation | None = None
) -> tuple[float, float]:
    """(objective, C2 violation as a fraction of N) of one point; ``ev`` if already evaluated."""
    ev = ev if ev is not None else evaluate(problem, mu, lam)
    violation = max(0.0, float(ev.total_queue[0]) - problem.N) / problem.N
    return float(ev.objective[0]), violation


def build_solution(
    problem: PmqecnProblem,
    mu: FloatArray,
    lam: FloatArray,
    solver: str,
    status: str,
    *,
    layer1_ev: Evaluation | None = None,
    final_ev: Evaluation | None = None,
) -> PmqecnSolution:
    """Check the final point against every constraint and derive omega and K.

    ``layer1_ev`` / ``final_ev``: evaluate(problem, mu, lambdas) and
    evaluate(problem, mu, lam) when the caller has them already (one exact
    evaluation costs about as much as one conic solve of a re-solve).
    """
    layer1_ev = layer1_ev if layer1_ev is not None else evaluate(problem, mu, problem.lambdas_array)
    final_ev = final_ev if final_ev is not None else evaluate(problem, mu, lam)
    layer1, viol1 = layer_value(problem, mu, problem.lambdas_array, layer1_ev)
    final, viol2 = layer_value(problem, mu, lam, final_ev)
    if max(viol1, viol2) > _C2_SLACK:
        raise SolverError(
            f"N: {solver} answer overfills the buffer (C2 exceeded by {max(viol1, viol2):.2e} N)"
        )
    if not ((lam > 0.0).all() and (lam < mu).all() and (problem.lambdas_array < mu).all()):
        raise SolverError(f"lam_star: {solver} answer breaks 0 < lambda < mu (C4)")
    omega = mu / problem.Gamma
    return PmqecnSolution(
        mu=tuple(np.asarray(mu, dtype=np.float64).tolist()),
        lam_star=tuple(np.asarray(lam, dtype=np.float64).tolist()),
        omega=tuple(omega.tolist()),
        k_omega_n_packets=_at_least_one_packet(omega * problem.N),
        k_ls_packets=_at_least_one_packet(final_ev.queues[:, 0]),
        objective=final,
        layer1_objective=layer1,
        solver=solver,
        status=status,
    )


def thresholds_to_cells(
    k_packets: Sequence[int], mean_packet_bytes: float, cell_bytes: int
) -> tuple[int, ...]:
    """Packet thresholds to buffer cells: ``ceil(K * mean_packet_bytes / cell_bytes)``.

    The cell size is the target chip's (the caller reads it from its hardware
    profile); exact rational arithmetic keeps 1500 B / 80 B cells from becoming
    19 cells through a rounding error in 18.75 * K.
    """
    if isinstance(mean_packet_bytes, bool) or not isinstance(mean_packet_bytes, Real):
        raise ProblemError(f"mean_packet_bytes must be a number, got {mean_packet_bytes!r}")
    if not math.isfinite(mean_packet_bytes) or mean_packet_bytes <= 0:
        raise ProblemError(f"mean_packet_bytes must be finite and > 0, got {mean_packet_bytes!r}")
    if isinstance(cell_bytes, bool) or not isinstance(cell_bytes, Integral) or cell_bytes <= 0:
        raise ProblemError(f"cell_bytes must be a positive integer, got {cell_bytes!r}")
    size = Fraction(mean_packet_bytes) / int(cell_bytes)
    cells = []
    for i, k in enumerate(k_packets):
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 0:
            raise ProblemError(f"k_packets[{i}] must be an integer >= 0, got {k!r}")
        cells.append(math.ceil(int(k) * size))
    return tuple(cells)
