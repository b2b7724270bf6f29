# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference solver: the paper's differential evolution (Algorithm 2, DE/best/1).

Kept as the baseline the convex path is measured against, so it follows the
paper rather than being tuned: DE/best/1 with exponential crossover
(scipy ``best1exp``), no gradient polish, constraints handled by penalty.
Two constraints are instead built into the encoding, because a penalty cannot
make DE hit them exactly: layer 1 maps x in (0, 1]^k onto the simplex
sum(mu) = Gamma above each lambda_i, layer 2 maps x in [0, 1]^k onto
[target_floor, (1 - eps) mu*] and scales the part above the floor under the
cap.  The floor on lambda* (PmqecnProblem.target_floor, each class's share of
the target utilisation) is ours, not the paper's; DE obeys it so that both
solvers answer the same problem.
"""

from __future__ import annotations

import time
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
    """Paper-like defaults; tests shrink popsize/maxiter to stay fast.

    Both ways run the paper's search: each generation's trial population
    against the current one, one-to-one survivor selection (scipy's
    ``deferred`` updating).  ``vectorized=True`` (ours) evaluates a whole
    generation in one call of the exact model; ``vectorized=False`` calls it
    once per candidate, as a straightforward implementation does.  Same seed,
    same answer, bit for bit; only the time differs.  ``max_seconds`` stops a
    layer after that much wall time (for benchmarks that must finish); the
    status then says so.
    """

    popsize: int = 15
    maxiter: int = 1000
    tol: float = 0.01
    strategy: str = "best1exp"
    vectorized: bool = True
    max_seconds: float | None = None


def _penalised(objective: FloatArray, total_queue: FloatArray, n_cap: int) -> FloatArray:
    excess = np.maximum(total_queue - n_cap, 0.0) / n_cap
    return np.where(excess > 0.0, objective + _PENALTY * (1.0 + excess), objective)


def _decode_mu(problem: PmqecnProblem, x: FloatArray) -> FloatArray:
    """(k, S) genes in (0, 1] -> service rates on sum = Gamma, mu_i >= lambda_i/(1-eps)."""
    lo = problem.lambdas_array / (1.0 - RHO_EPS)
    spare = problem.Gamma - lo.sum()
    return lo[:, None] + spare * x / x.sum(axis=0, keepdims=True)


def _decode_lam(
    problem: PmqecnProblem, mu: FloatArray, floor: FloatArray, x: FloatArray
) -> FloatArray:
    """(k, S) genes in [0, 1] -> arrival targets in [floor, (1-eps) mu], sum under the cap.

    ``floor`` is problem.target_floor(mu), passed in as it is fixed for a run.
    """
    floor = floor[:, None]
    excess = x * ((1.0 - RHO_EPS) * mu[:, None] - floor)
    room = problem.target_cap - floor.sum()
    scale = np.minimum(1.0, room / np.maximum(excess.sum(axis=0, keepdims=True), 1e-300))
    return floor + excess * scale


def _run(
    fun: Callable[[FloatArray], FloatArray],
    k: int,
    bounds: tuple[float, float],
    seed: int,
    s: DeSettings,
) -> tuple[FloatArray, str]:
    if s.vectorized:
        objective: Callable[[FloatArray], FloatArray | float] = fun
    else:

        def objective(x: FloatArray) -> float:
            return float(fun(x[:, None])[0])

    deadline = None if s.max_seconds is None else time.monotonic() + s.max_seconds

    def out_of_time(intermediate_result: object) -> bool:
        # scipy passes the best point so far; returning True stops the run.
        return deadline is not None and time.monotonic() > deadline

    res = differential_evolution(
        objective,
        [bounds] * k,
        strategy=s.strategy,
        popsize=s.popsize,
        maxiter=s.maxiter,
        tol=s.tol,
        polish=False,
        init="latinhypercube",
        rng=np.random.default_rng(seed),
        vectorized=s.vectorized,
        updating="deferred",
        callback=out_of_time if deadline is not None else None,
    )
    if not np.all(np.isfinite(res.x)):
        raise SolverError(f"differential evolution returned {res.x!r}: {res.message}")
    if res.success:
        status = f"converged after {res.nit} generations"
    elif deadline is not None and time.monotonic() > deadline:
        status = f"stopped by the {s.max_seconds:g} s budget after {res.nit} generations"
    else:
        status = f"stopped after {res.nit} generations"
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

    floor = problem.target_floor(mu_star)

    def layer2(x: FloatArray) -> FloatArray:
        lam = _decode_lam(problem, mu_star, floor, x)
        ev = evaluate(problem, np.repeat(mu_star[:, None], x.shape[1], 1), lam)
        return _penalised(ev.objective, ev.total_queue, problem.N)

    genes2, status2 = _run(layer2, problem.k, (0.0, 1.0), seed + 1, s)
    lam = project_lam(problem, mu_star, _decode_lam(problem, mu_star, floor, genes2[:, None])[:, 0])
    status = f"layer1 {status1}; layer2 {status2}"
    name = f"scipy-DE/{s.strategy}" + ("" if s.vectorized else "/per-candidate")
    return build_solution(problem, mu_star, lam, name, status)
