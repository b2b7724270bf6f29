"""PMQECN control-plane optimiser: mu*, lambda*, omega and K per virtual queue.

The paper (Algorithm 2, Fig. 3) solves two layers, each with differential
evolution: layer 1 picks service rates mu for the measured arrival rates
lambda, layer 2 picks target arrival rates lambda* for those mu*.  The
objective of both is the exact M/M/1/N function F of
:mod:`models.optimize.objective`.  :func:`solve_de` keeps that DE as the
reference; :func:`solve` instead solves a convex stand-in of each layer with
cvxpy (CLARABEL) and then polishes on the exact F with SLSQP, keeping whichever
point is better.

Convex formulation (omega = mu/Gamma, lam~ = lambda/Gamma, rho = lambda/mu)
---------------------------------------------------------------------------
* Delay: M/M/1/N's W_s is replaced by the M/M/1 delay 1/(mu - lambda), an
  upper bound that is tight once rho^N is negligible (N of tens of packets).
  With Eq. 14's weight mu/Gamma the term becomes 1 + lam~/(omega - lam~) in
  layer 1 and 1/(1 - rho) in layer 2: both ``inv_pos`` of an affine, convex.
* C2 (sum L_s <= N): the M/M/1 queue lam~/(omega - lam~), resp.
  1/(1 - rho) - 1, is an upper bound on L_s, so the convex set is inside the
  exact one.  C3 and C6 are linear in rho (lambda_e <= lambda); C5 is linear.
* Loss (class C): P_N <= rho^N for rho < 1, so omega * N_loss / Gamma is
  bounded by exp((N+1) ln lam~ + (1 - N) ln omega) in layer 1 (exponential
  cone; convex because 1 - N <= 0) and by omega^2 rho^(N+1) in layer 2 (power
  cone, exact for any N).
* Residual bandwidth (class A): lambda_e ~ lambda makes it affine in rho
  (layer 2) and a constant times omega_A (layer 1).
* Jitter (class B): with g the convex delay above and t = omega Gamma W_i
  affine, a g + b |t - g| = max((a+b) g - b t, (a-b) g + b t), which is
  convex whenever the delay weight a >= the jitter weight b, and is then
  solved exactly.  For b > a the part b (t - g) is concave: g is replaced by
  its tangent (a majoriser) and re-linearised until the value settles
  (convex-concave procedure, a few re-solves of the compiled problem).

Where the stand-ins differ from M/M/1/N (small N, rho near 1, the loss
bound) the SLSQP polish on the exact F and exact C2 closes the gap; the convex
answer is kept when the polish does not improve it.

Layer 1 does not minimise the final F(mu*, lambda*), so only each layer's
value is ordered between solvers: a worse layer-1 mu* (e.g. DE's) can still
end with a lower final F.  ``solve(..., mu=...)`` and ``solve_de(..., mu=...)``
run layer 2 alone, which is how the two are compared on equal terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from models.optimize.de import DeSettings, solve_de
from models.optimize.objective import evaluate, exact_objective
from models.optimize.polish import polish_layer1, polish_layer2
from models.optimize.problem import PmqecnProblem, ProblemError, QosKind, SolverError
from models.optimize.solution import (
    PmqecnSolution,
    build_solution,
    fixed_service_rates,
    layer_value,
    project_lam,
    project_mu,
    thresholds_to_cells,
)
from models.optimize.surrogate import solve_layer1, solve_layer2

__all__ = [
    "DeSettings",
    "PmqecnProblem",
    "PmqecnSolution",
    "ProblemError",
    "QosKind",
    "SolverError",
    "evaluate",
    "exact_objective",
    "solve",
    "solve_de",
    "thresholds_to_cells",
]

FloatArray = npt.NDArray[np.float64]


class _Candidate(NamedTuple):
    mu: FloatArray
    lam: FloatArray
    source: str


def _best(problem: PmqecnProblem, candidates: list[_Candidate]) -> _Candidate:
    """The candidate with the lowest exact objective among those meeting C2."""
    scored = [(layer_value(problem, c.mu, c.lam), c) for c in candidates]
    feasible = [(value, c) for (value, violation), c in scored if violation == 0.0]
    if not feasible:
        raise SolverError("N: no candidate point keeps sum L_s <= N (C2)")
    return min(feasible, key=lambda item: item[0])[1]


def _layer1(problem: PmqecnProblem, polish: bool) -> tuple[FloatArray, str]:
    lam_meas = problem.lambdas_array
    first = solve_layer1(problem)
    mu_cvx = project_mu(problem, problem.Gamma * first.x)
    candidates = [_Candidate(mu_cvx, lam_meas, "cvxpy")]
    if polish:
        omega = polish_layer1(problem, mu_cvx / problem.Gamma)
        candidates.append(_Candidate(project_mu(problem, problem.Gamma * omega), lam_meas, "slsqp"))
    best = _best(problem, candidates)
    return best.mu, f"layer1 {first.status} ({first.solves} solves, kept {best.source})"


def _layer2(problem: PmqecnProblem, mu: FloatArray, polish: bool) -> tuple[FloatArray, str]:
    second = solve_layer2(problem, mu)
    lam_cvx = project_lam(problem, mu, second.x * mu)
    candidates = [_Candidate(mu, lam_cvx, "cvxpy")]
    if polish:
        rho = polish_layer2(problem, mu, lam_cvx / mu)
        candidates.append(_Candidate(mu, project_lam(problem, mu, rho * mu), "slsqp"))
    best = _best(problem, candidates)
    return best.lam, f"layer2 {second.status} ({second.solves} solves, kept {best.source})"


def solve(
    problem: PmqecnProblem, *, polish: bool = True, mu: Sequence[float] | None = None
) -> PmqecnSolution:
    """Both layers via cvxpy, each then polished with SLSQP on the exact objective.

    The polish is on by default because the conic answer can be off by ~1e-6
    relative even when the stand-ins are exact (power/exponential cones with
    exponents ~N are badly scaled for large N; the jitter kink is degenerate).
    Passing ``mu`` skips layer 1 and solves layer 2 for those service rates.
    """
    if mu is None:
        mu_star, status1 = _layer1(problem, polish)
    else:
        mu_star, status1 = fixed_service_rates(problem, mu), "layer1 given"
    lam, status2 = _layer2(problem, mu_star, polish)
    solver = "cvxpy-CLARABEL+SLSQP" if polish else "cvxpy-CLARABEL"
    return build_solution(problem, mu_star, lam, solver, f"{status1}; {status2}")
