"""Answer of the PMQECN optimiser, its feasibility guard and threshold conversions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
import numpy.typing as npt

from models.optimize.objective import as_vector, evaluate
from models.optimize.problem import RHO_EPS, PmqecnProblem, ProblemError, SolverError
from models.queueing.kernel import mm1n_arrays

FloatArray = npt.NDArray[np.float64]

# Solver tolerances (1e-8 for the conic solver) may leave C2 violated by a hair;
# anything worse than this relative slack is reported as a solver failure.
_C2_SLACK = 1e-7


@dataclass(frozen=True)
class PmqecnSolution:
    """What the control plane pushes down, plus how it was obtained.

    ``k_packets[i] = max(1, ceil(L_s(lambda*_i, mu*_i)))``: the mean queue at the
    optimal operating point.  Algorithm 1 marks when the queue exceeds K_i, so a
    longer queue than the optimum predicts is exactly the evidence that class i
    arrives faster than lambda*_i, which is what the feedback corrects.  (The
    paper's step 3 alternative, omega_i * N, is a buffer share that an
    under-loaded queue never reaches, so it would rarely signal anything.)
    """

    mu: tuple[float, ...]
    lam_star: tuple[float, ...]
    omega: tuple[float, ...]
    k_packets: tuple[int, ...]
    objective: float  # exact F(mu*, lambda*), the answer's value
    layer1_objective: float  # exact F(mu*, measured lambda), what layer 1 minimised
    solver: str
    status: str


def project_mu(problem: PmqecnProblem, mu: npt.ArrayLike) -> FloatArray:
    """Put a near-feasible service split exactly on sum(mu) = Gamma, mu >= lambda/(1-eps)."""
    omega = np.asarray(mu, dtype=np.float64) / problem.Gamma
    if not np.all(np.isfinite(omega)):
        raise SolverError("mu: solver returned non-finite service rates")
    lo = problem.lambdas_array / problem.Gamma / (1.0 - RHO_EPS)
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
    """Clip lambda* into [eps, 1-eps] * mu and scale it under sum(lambda*) <= cap."""
    rho = np.asarray(lam, dtype=np.float64) / mu
    if not np.all(np.isfinite(rho)):
        raise SolverError("lam_star: solver returned non-finite arrival rates")
    lam_c = np.clip(rho, RHO_EPS, 1.0 - RHO_EPS) * mu
    cap = problem.target_cap
    if lam_c.sum() > cap:
        lam_c *= cap / lam_c.sum()
    while lam_c.sum() > cap:  # rounding of the scaled sum, at most a few ulps
        lam_c *= 1.0 - 4.0 * np.finfo(np.float64).eps
    return lam_c


def layer_value(problem: PmqecnProblem, mu: FloatArray, lam: FloatArray) -> tuple[float, float]:
    """(objective, C2 violation as a fraction of N) of one point."""
    ev = evaluate(problem, mu, lam)
    violation = max(0.0, float(ev.total_queue[0]) - problem.N) / problem.N
    return float(ev.objective[0]), violation


def build_solution(
    problem: PmqecnProblem, mu: FloatArray, lam: FloatArray, solver: str, status: str
) -> PmqecnSolution:
    """Check the final point against every constraint and derive omega and K."""
    layer1, viol1 = layer_value(problem, mu, problem.lambdas_array)
    final, viol2 = layer_value(problem, mu, lam)
    if max(viol1, viol2) > _C2_SLACK:
        raise SolverError(
            f"N: {solver} answer overfills the buffer (C2 exceeded by {max(viol1, viol2):.2e} N)"
        )
    if not (np.all(lam > 0.0) and np.all(lam < mu) and np.all(problem.lambdas_array < mu)):
        raise SolverError(f"lam_star: {solver} answer breaks 0 < lambda < mu (C4)")
    ls = mm1n_arrays(lam, mu, problem.N).ls
    k_packets = tuple(max(1, math.ceil(float(v) - 1e-9)) for v in ls)
    return PmqecnSolution(
        mu=tuple(float(v) for v in mu),
        lam_star=tuple(float(v) for v in lam),
        omega=tuple(float(v) for v in mu / problem.Gamma),
        k_packets=k_packets,
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
