"""Reference solver: the paper's differential evolution (Algorithm 2, DE/best/1).

Kept as the baseline the convex path is measured against, so it follows the
paper rather than being tuned: DE/best/1 with exponential crossover
(scipy ``best1exp``), no gradient polish, constraints handled by penalty.
Two constraints are instead built into the encoding, because a penalty cannot
make DE hit them exactly: layer 1 maps x in (0, 1]^k onto the simplex
sum(mu) = Gamma above each lambda_i, layer 2 scales lambda* under the cap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import differential_evolution

from models.optimize.objective import evaluate
from models.optimize.problem import RHO_EPS, PmqecnProblem, SolverError
from models.optimize.solution import (
    PmqecnSolution,
    build_solution,
    fixed_service_rates,
    project_lam,
    project_mu,
)

FloatArray = npt.NDArray[np.float64]

# Any C2 violation costs more than any feasible objective the weights can give.
_PENALTY = 1e6


@dataclass(frozen=True)
class DeSettings:
    """Paper-like defaults; tests shrink popsize/maxiter to stay fast."""

    popsize: int = 15
    maxiter: int = 1000
    tol: float = 0.01
    strategy: str = "best1exp"


def _penalised(objective: FloatArray, total_queue: FloatArray, n_cap: int) -> FloatArray:
    excess = np.maximum(total_queue - n_cap, 0.0) / n_cap
    return np.where(excess > 0.0, objective + _PENALTY * (1.0 + excess), objective)


def _decode_mu(problem: PmqecnProblem, x: FloatArray) -> FloatArray:
    """(k, S) genes in (0, 1] -> service rates on sum = Gamma, mu_i >= lambda_i/(1-eps)."""
    lo = problem.lambdas_array / (1.0 - RHO_EPS)
    spare = problem.Gamma - lo.sum()
    return lo[:, None] + spare * x / x.sum(axis=0, keepdims=True)


def _decode_lam(problem: PmqecnProblem, mu: FloatArray, x: FloatArray) -> FloatArray:
    """(k, S) genes rho in [eps, 1-eps] -> arrival targets scaled under the cap."""
    lam = mu[:, None] * x
    scale = np.minimum(1.0, problem.target_cap / lam.sum(axis=0, keepdims=True))
    return lam * scale


def _run(
    fun: Callable[[FloatArray], FloatArray],
    k: int,
    bounds: tuple[float, float],
    seed: int,
    s: DeSettings,
) -> tuple[FloatArray, str]:
    res = differential_evolution(
        fun,
        [bounds] * k,
        strategy=s.strategy,
        popsize=s.popsize,
        maxiter=s.maxiter,
        tol=s.tol,
        polish=False,
        init="latinhypercube",
        rng=np.random.default_rng(seed),
        vectorized=True,
        updating="deferred",
    )
    if not np.all(np.isfinite(res.x)):
        raise SolverError(f"differential evolution returned {res.x!r}: {res.message}")
    status = "converged" if res.success else f"stopped after {res.nit} generations"
    return np.asarray(res.x, dtype=np.float64), status


def solve_de(
    problem: PmqecnProblem,
    seed: int = 0,
    settings: DeSettings | None = None,
    *,
    mu: Sequence[float] | None = None,
) -> PmqecnSolution:
    """Both layers by differential evolution on the exact objective; deterministic per seed.

    Passing ``mu`` skips layer 1 and solves layer 2 for those service rates.
    """
    s = settings or DeSettings()
    lam_meas = problem.lambdas_array

    def layer1(x: FloatArray) -> FloatArray:
        rates = _decode_mu(problem, x)
        ev = evaluate(problem, rates, np.repeat(lam_meas[:, None], x.shape[1], 1))
        return _penalised(ev.objective, ev.total_queue, problem.N)

    if mu is None:
        genes1, status1 = _run(layer1, problem.k, (1e-6, 1.0), seed, s)
        mu_star = project_mu(problem, _decode_mu(problem, genes1[:, None])[:, 0])
    else:
        mu_star, status1 = fixed_service_rates(problem, mu), "given"

    def layer2(x: FloatArray) -> FloatArray:
        lam = _decode_lam(problem, mu_star, x)
        ev = evaluate(problem, np.repeat(mu_star[:, None], x.shape[1], 1), lam)
        return _penalised(ev.objective, ev.total_queue, problem.N)

    genes2, status2 = _run(layer2, problem.k, (RHO_EPS, 1.0 - RHO_EPS), seed + 1, s)
    lam = project_lam(problem, mu_star, _decode_lam(problem, mu_star, genes2[:, None])[:, 0])
    status = f"layer1 {status1}; layer2 {status2}"
    return build_solution(problem, mu_star, lam, f"scipy-DE/{s.strategy}", status)
