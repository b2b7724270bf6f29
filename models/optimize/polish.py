# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""SLSQP refinement of a layer on the exact M/M/1/N objective and constraints.

The convex layers optimise stand-ins (M/M/1 delay, rho^N loss); starting SLSQP
from their answer moves it to a local optimum of the exact objective, which
for these smooth, nearly convex layers is the one the stand-in pointed at.
Class B's |deviation| is written as an epigraph (t >= +-deviation): the optimum
often sits exactly on the kink W_s = W_i, where SLSQP on |.| itself crawls.
Gradients are central differences evaluated as one vectorised batch;
line-search values evaluate the single point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from models.optimize.objective import Evaluation, evaluate
from models.optimize.problem import RHO_EPS, PmqecnProblem

FloatArray = npt.NDArray[np.float64]

_STEP = 1e-7
_MAXITER = 200
# SLSQP's ftol is absolute; relative to the objective this stops once a step
# changes it by less than central differences (step 1e-7) can resolve.  A fixed
# 1e-13 was below double precision for objectives ~100 and made SLSQP spend
# its line searches on rounding noise (tens of evaluations for nothing).
_FTOL_REL = 1e-12


class _Batched:
    """The exact model at x alone, or at x and its 2k central-difference neighbours; cached.

    SLSQP asks for values at every line-search step and for gradients only at
    accepted points, so a value costs one point and only a gradient pays for
    the batch (column 0 of which is x itself, so either answers for values).
    """

    def __init__(self, run: Callable[[FloatArray], Evaluation]) -> None:
        self._run = run
        self._point: tuple[bytes, Evaluation] | None = None
        self._batch: tuple[bytes, Evaluation] | None = None
        self._step: FloatArray = np.zeros(0)

    def at(self, x: FloatArray) -> Evaluation:
        """Evaluation whose column 0 is x."""
        key = x.tobytes()
        for cached in (self._batch, self._point):
            if cached is not None and cached[0] == key:
                return cached[1]
        self._point = (key, self._run(x[:, None]))
        return self._point[1]

    def around(self, x: FloatArray) -> Evaluation:
        """Evaluation of x (column 0) and its neighbours, for :meth:`grad`."""
        key = x.tobytes()
        if self._batch is None or self._batch[0] != key:
            # Relative steps: a variable near 1e-6 must not be pushed through zero.
            self._step = _STEP * np.maximum(np.abs(x), 1e-3)
            shifts = np.diag(self._step)
            points = x[:, None] + np.hstack([np.zeros((x.size, 1)), shifts, -shifts])
            self._batch = (key, self._run(points))
        return self._batch[1]

    def grad(self, values: FloatArray) -> FloatArray:
        """d values[..., 0] / dx from the neighbour columns of :meth:`around`; (k,) or (m, k)."""
        k = self._step.size
        return (values[..., 1 : k + 1] - values[..., k + 1 :]) / (2.0 * self._step)


@dataclass(frozen=True)
class _Layer:
    run: Callable[[FloatArray], Evaluation]  # (k, S) variables -> Evaluation
    bounds: list[tuple[float, float]]
    # The layer's own linear constraint (C5 or C3/C6), in x only.
    linear_type: str
    linear_fun: Callable[[FloatArray], float]
    linear_jac: Callable[[FloatArray], FloatArray]


def _polish(problem: PmqecnProblem, layer: _Layer, x0: FloatArray) -> FloatArray:
    k = x0.size
    batch = _Batched(layer.run)
    jit = np.flatnonzero(batch.at(x0).jitter_weights(problem) > 0.0)
    weights = batch.at(x0).jitter_weights(problem)[jit]
    m = jit.size

    def x_of(z: FloatArray) -> FloatArray:
        return np.ascontiguousarray(z[:k])

    def objective(z: FloatArray) -> float:
        return float(batch.at(x_of(z)).smooth[0] + weights @ z[k:])

    def objective_jac(z: FloatArray) -> FloatArray:
        return np.concatenate([batch.grad(batch.around(x_of(z)).smooth), weights])

    def epigraph(z: FloatArray) -> FloatArray:
        dev = batch.at(x_of(z)).deviation[jit, 0]
        return np.concatenate([z[k:] - dev, z[k:] + dev])

    def epigraph_jac(z: FloatArray) -> FloatArray:
        d_dev = batch.grad(batch.around(x_of(z)).deviation[jit])
        eye = np.eye(m)
        return np.vstack([np.hstack([-d_dev, eye]), np.hstack([d_dev, eye])])

    def buffer(z: FloatArray) -> float:
        return float(problem.N - batch.at(x_of(z)).total_queue[0])

    def buffer_jac(z: FloatArray) -> FloatArray:
        return np.concatenate([-batch.grad(batch.around(x_of(z)).total_queue), np.zeros(m)])

    lin_fun, lin_jac = layer.linear_fun, layer.linear_jac
    constraints = [
        {
            "type": layer.linear_type,
            "fun": lambda z: lin_fun(z[:k]),
            "jac": lambda z: np.concatenate([lin_jac(z[:k]), np.zeros(m)]),
        },
        {"type": "ineq", "fun": buffer, "jac": buffer_jac},
    ]
    if m:
        constraints.append({"type": "ineq", "fun": epigraph, "jac": epigraph_jac})
    z0 = np.concatenate([x0, np.abs(batch.at(x0).deviation[jit, 0])])
    res = minimize(
        objective,
        z0,
        jac=objective_jac,
        method="SLSQP",
        bounds=layer.bounds + [(0.0, None)] * m,
        constraints=constraints,
        options={"ftol": _FTOL_REL * max(1.0, abs(objective(z0))), "maxiter": _MAXITER},
    )
    return np.asarray(res.x[:k], dtype=np.float64)


def polish_layer1(problem: PmqecnProblem, omega0: FloatArray) -> FloatArray:
    """Refine omega = mu/Gamma for the measured arrival rates."""
    lam = problem.lambdas_array
    lo = lam / problem.Gamma / (1.0 - RHO_EPS)
    layer = _Layer(
        run=lambda x: evaluate(problem, problem.Gamma * x, np.repeat(lam[:, None], x.shape[1], 1)),
        bounds=[(float(v), 1.0) for v in lo],
        linear_type="eq",
        linear_fun=lambda x: float(np.sum(x)) - 1.0,
        linear_jac=np.ones_like,
    )
    return _polish(problem, layer, omega0)


def polish_layer2(problem: PmqecnProblem, mu: FloatArray, rho0: FloatArray) -> FloatArray:
    """Refine rho = lambda*/mu* for fixed service rates, above the floor on lambda*."""
    rho_lo = problem.target_floor(mu) / mu
    layer = _Layer(
        run=lambda x: evaluate(problem, np.repeat(mu[:, None], x.shape[1], 1), mu[:, None] * x),
        bounds=[(float(lo), 1.0 - RHO_EPS) for lo in rho_lo],
        linear_type="ineq",
        linear_fun=lambda x: problem.target_cap - float(mu @ x),
        linear_jac=lambda x: -mu,
    )
    return _polish(problem, layer, np.clip(rho0, rho_lo, 1.0 - RHO_EPS))
