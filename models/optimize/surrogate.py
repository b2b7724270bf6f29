"""Convex (cvxpy) stand-ins of the two PMQECN layers; the derivation is in pmqecn.py.

Both layers use scaled variables so the conic solver sees O(1) numbers whatever
the rate unit: layer 1 solves for the spare share s = omega - lam~ (omega =
mu/Gamma, lam~ = lambda/Gamma measured), layer 2 for rho = lambda*/mu*.  In
both, class i's delay is a convex g_i (omega_i Gamma W_s,i under M/M/1) and its
jitter |target_i - g_i| with target_i = omega_i Gamma W_i affine.

Every number that comes from the measurements is a cvxpy Parameter and each
problem is DPP, so a control loop re-solving with new measurements (same
classes, kinds and N) reuses the compiled problem; only the first solve of a
structure pays cvxpy's canonicalisation, which dominates a small solve.  The
cached problems hold mutable parameter values: one solve at a time (not
thread-safe).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cvxpy as cp
import numpy as np
import numpy.typing as npt

from models.optimize.problem import RHO_EPS, PmqecnProblem, QosKind, SolverError

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]
# point -> (slope, offset) of a line supporting each class's convex delay g
Tangent = Callable[[FloatArray], tuple[FloatArray, FloatArray]]

_CCP_MAX_ITER = 10
_CCP_REL_TOL = 1e-9
# Tangents are taken no closer to rho = 1 than this: any tangent of a convex g
# still majorises the concave side, and one at rho = 1 - 1e-6 has a slope of
# 1e12, which the conic solver reads as (spurious) infeasibility.
_TANGENT_MAX_RHO = 0.999
_SOLVER = "CLARABEL"


@dataclass(frozen=True)
class ConvexResult:
    x: FloatArray  # omega (layer 1) or rho (layer 2)
    status: str
    solves: int


@dataclass(frozen=True)
class _Structure:
    """What fixes the shape of a layer's problem; the cache key."""

    k: int
    n_cap: int
    plain: tuple[int, ...]  # classes whose delay is the plain a g term (all but exact)
    exact: tuple[int, ...]  # class B with a >= b: a g + b |t - g| is convex
    ccp: tuple[int, ...]  # class B with a < b: concave part majorised by a tangent
    kind_a: tuple[int, ...]
    kind_c: tuple[int, ...]

    @staticmethod
    def of(problem: PmqecnProblem) -> _Structure:
        a, b = problem.weight_arrays()
        used = b > 0.0  # a zero second weight drops the term, and its cone

        def pick(kind: QosKind) -> IndexArray:
            return np.flatnonzero(problem.mask(kind) & used)

        jit = pick(QosKind.B)
        exact = jit[a[jit] >= b[jit]]
        return _Structure(
            k=problem.k,
            n_cap=problem.N,
            plain=tuple(int(i) for i in np.setdiff1d(np.arange(problem.k), exact)),
            exact=tuple(int(i) for i in exact),
            ccp=tuple(int(i) for i in jit[a[jit] < b[jit]]),
            kind_a=tuple(int(i) for i in pick(QosKind.A)),
            kind_c=tuple(int(i) for i in pick(QosKind.C)),
        )


class _Template:
    """A compiled-once problem plus its named parameters."""

    def __init__(self, var: cp.Variable, ccp: tuple[int, ...]) -> None:
        self.var = var
        self.ccp = np.asarray(ccp, dtype=np.intp)
        self.params: dict[str, cp.Parameter] = {}
        self.terms: list[cp.Expression] = []
        self.constraints: list[cp.Constraint] = []
        self.problem: cp.Problem | None = None

    def param(self, name: str, shape: int | tuple[()], *, nonneg: bool = False) -> cp.Parameter:
        p = cp.Parameter(shape, name=name, nonneg=nonneg)
        self.params[name] = p
        return p

    def finish(self) -> _Template:
        self.problem = cp.Problem(cp.Minimize(cp.sum(cp.hstack(self.terms))), self.constraints)
        return self

    def set(self, **values: FloatArray) -> None:
        # Values for terms this structure lacks (no such class) are skipped.
        for name, value in values.items():
            if name in self.params:
                self.params[name].value = np.asarray(value, dtype=np.float64)


def _idx(items: tuple[int, ...]) -> IndexArray:
    return np.asarray(items, dtype=np.intp)


def _add_b_terms(t: _Template, st: _Structure, conv: cp.Expression, aff: cp.Expression) -> None:
    """Class B's a g + b |target - g|, with g = g0 + g1 conv and target = tg1 aff + tg0.

    ``conv`` is convex and ``aff`` affine, both parameter-free, and every
    coefficient is a Parameter, so each product is DPP.
    """
    if st.exact:
        e = _idx(st.exact)
        # max((a+b) g - b target, (a-b) g + b target); a >= b keeps both pieces convex.
        up0, up1 = t.param("up0", e.size), t.param("up1", e.size, nonneg=True)
        dn0, dn1 = t.param("dn0", e.size), t.param("dn1", e.size, nonneg=True)
        b_target = cp.multiply(t.param("bt1", e.size), aff[e]) + t.param("bt0", e.size)
        rising = up0 + cp.multiply(up1, conv[e]) - b_target
        falling = dn0 + cp.multiply(dn1, conv[e]) + b_target
        t.terms.append(cp.sum(cp.maximum(rising, falling)))
    if st.ccp:
        c = _idx(st.ccp)
        jit = cp.Variable(c.size)
        g = t.param("g0", c.size) + cp.multiply(t.param("g1", c.size, nonneg=True), conv[c])
        target = cp.multiply(t.param("tg1", c.size), aff[c]) + t.param("tg0", c.size)
        tangent = cp.multiply(t.param("slope", c.size), t.var[c]) + t.param("offset", c.size)
        t.constraints += [jit >= g - target, jit >= target - tangent]
        t.terms.append(t.param("b_ccp", c.size, nonneg=True) @ jit)


@lru_cache(maxsize=32)
def _layer1_template(st: _Structure) -> _Template:
    s = cp.Variable(st.k)  # spare share omega - lam~
    t = _Template(s, st.ccp)
    inv_s = cp.inv_pos(s)
    lam = t.param("lam", st.k, nonneg=True)
    if st.plain:
        p = _idx(st.plain)
        t.terms.append(t.param("a_lam", p.size, nonneg=True) @ inv_s[p])
    _add_b_terms(t, st, inv_s, s)
    if st.kind_a:
        t.terms.append(t.param("resid_b", len(st.kind_a)) @ s[_idx(st.kind_a)])
    if st.kind_c:
        c = _idx(st.kind_c)
        log_coeff = t.param("log_coeff", c.size)
        omega_c = s[c] + t.param("lam_c", c.size, nonneg=True)
        t.terms.append(cp.sum(cp.exp(log_coeff + (1 - st.n_cap) * cp.log(omega_c))))
    t.constraints += [
        cp.sum(s) == t.param("spare", (), nonneg=True),
        s >= t.param("s_lo", st.k, nonneg=True),
        lam @ inv_s <= st.n_cap,
    ]
    return t.finish()


@lru_cache(maxsize=32)
def _layer2_template(st: _Structure) -> _Template:
    rho = cp.Variable(st.k)
    t = _Template(rho, st.ccp)
    slowdown = cp.inv_pos(1.0 - rho)  # omega Gamma W_s under M/M/1
    if st.plain:
        p = _idx(st.plain)
        t.terms.append(t.param("a_plain", p.size, nonneg=True) @ slowdown[p])
    # target = omega Gamma W_i is a constant here: zero affine part, all in tg0 / bt0.
    _add_b_terms(t, st, slowdown, cp.Constant(np.zeros(st.k)))
    mu = t.param("mu", st.k, nonneg=True)
    if st.kind_a:
        # Residual bandwidth with lambda_e ~ lambda: a constant minus w mu.rho / (n C).
        t.terms.append(-(t.param("resid_mu", st.k) @ rho))
    if st.kind_c:
        c = _idx(st.kind_c)
        coeff = t.param("loss_coeff", c.size, nonneg=True)
        t.terms.append(coeff @ cp.power(rho[c], st.n_cap + 1, approx=False))
    t.constraints += [
        rho >= RHO_EPS,
        rho <= 1.0 - RHO_EPS,
        mu @ rho <= t.param("cap", (), nonneg=True),
        cp.sum(slowdown) <= st.n_cap + st.k,  # sum rho/(1-rho) <= N
    ]
    return t.finish()


def _solve(t: _Template, tangent: Tangent, start: FloatArray) -> ConvexResult:
    """Solve; with concave jitter parts, re-linearise until the value settles."""
    assert t.problem is not None
    point, last, solves, status = start, np.inf, 0, ""
    while True:
        if t.ccp.size:
            slope, offset = tangent(point)
            t.set(slope=slope[t.ccp], offset=offset[t.ccp])
        try:
            # warm_start=False: cvxpy's Clarabel warm path updates the solver in
            # place and, on these problems, stopped ~5e-5 (relative) short of
            # the optimum the same data reaches from scratch.
            objective = t.problem.solve(solver=_SOLVER, warm_start=False)
            failure = "" if t.var.value is not None else f"status {t.problem.status!r}"
            if t.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                failure = f"status {t.problem.status!r}"
        except cp.error.SolverError as exc:
            failure = str(exc)
        if failure:
            if not solves:
                raise SolverError(f"{_SOLVER} failed: {failure}")
            # A later CCP step failing leaves the previous point, which is
            # feasible and no worse; report it rather than discard it.
            return ConvexResult(x=point, status=f"{status}, ccp stopped: {failure}", solves=solves)
        solves += 1
        status = str(t.problem.status)
        point = np.asarray(t.var.value, dtype=np.float64)
        settled = abs(last - objective) <= _CCP_REL_TOL * max(1.0, abs(objective))
        if not t.ccp.size or settled or solves >= _CCP_MAX_ITER:
            return ConvexResult(x=point, status=status, solves=solves)
        last = objective


def _b_params(
    problem: PmqecnProblem,
    st: _Structure,
    g0: FloatArray,
    g1: FloatArray,
    tg1: FloatArray,
    tg0: FloatArray,
) -> dict[str, FloatArray]:
    """Parameter values of _add_b_terms for g = g0 + g1 conv, target = tg1 aff + tg0."""
    a, b = problem.weight_arrays()
    e, c = _idx(st.exact), _idx(st.ccp)
    return {
        "up0": (a + b)[e] * g0[e],
        "up1": (a + b)[e] * g1[e],
        "dn0": (a - b)[e] * g0[e],
        "dn1": (a - b)[e] * g1[e],
        "bt1": b[e] * tg1[e],
        "bt0": b[e] * tg0[e],
        "g0": g0[c],
        "g1": g1[c],
        "tg1": tg1[c],
        "tg0": tg0[c],
        "b_ccp": b[c],
    }


def solve_layer1(problem: PmqecnProblem) -> ConvexResult:
    """Service split omega for the measured arrival rates (Algorithm 2, step 2)."""
    st = _Structure.of(problem)
    t = _layer1_template(st)
    lam = problem.lambdas_array / problem.Gamma
    a, b = problem.weight_arrays()
    s_lo = lam * RHO_EPS / (1.0 - RHO_EPS)  # omega >= lam~ / (1 - eps)
    spare = 1.0 - float(lam.sum())
    gw = problem.Gamma * np.asarray(problem.W)
    residual = 1.0 - float(problem.lambdas_array.sum()) / (problem.n * problem.C)
    kc, ka, plain = _idx(st.kind_c), _idx(st.kind_a), _idx(st.plain)
    ones = np.ones(st.k)
    # M/M/1: omega Gamma W_s = 1 + lam~ / s and target omega Gamma W_i = GW s + GW lam~.
    t.set(
        lam=lam,
        a_lam=(a * lam)[plain],
        resid_b=residual * b[ka],
        # omega N_loss / Gamma <= omega lam~ rho^N = exp((N+1) ln lam~ + (1-N) ln omega).
        log_coeff=(st.n_cap + 1) * np.log(lam[kc]) + np.log(b[kc]),
        lam_c=lam[kc],
        spare=np.asarray(spare),
        s_lo=s_lo,
        **_b_params(problem, st, ones, lam, gw, gw * lam),
    )

    def tangent(s: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = np.maximum(s, lam * (1.0 / _TANGENT_MAX_RHO - 1.0))
        slope = -lam / s**2
        return slope, 1.0 + lam / s - slope * s

    # Start the tangents at the split minimising the total M/M/1 queue.
    start = np.maximum(spare * np.sqrt(lam) / np.sqrt(lam).sum(), s_lo)
    res = _solve(t, tangent, start)
    return ConvexResult(x=res.x + lam, status=res.status, solves=res.solves)


def solve_layer2(problem: PmqecnProblem, mu: FloatArray) -> ConvexResult:
    """Load factors rho = lambda*/mu* for the chosen service rates (step 4)."""
    st = _Structure.of(problem)
    t = _layer2_template(st)
    omega = mu / problem.Gamma
    a, b = problem.weight_arrays()
    kc, ka, plain = _idx(st.kind_c), _idx(st.kind_a), _idx(st.plain)
    zeros, ones = np.zeros(st.k), np.ones(st.k)
    weight_a = float(b[ka] @ omega[ka])
    t.set(
        a_plain=a[plain],
        mu=mu,
        resid_mu=weight_a * mu / (problem.n * problem.C),
        # omega N_loss / Gamma <= omega^2 rho^(N+1); power cones stay exact for any N.
        loss_coeff=b[kc] * omega[kc] ** 2,
        cap=np.asarray(problem.target_cap),
        **_b_params(problem, st, zeros, ones, zeros, problem.Gamma * np.asarray(problem.W) * omega),
    )

    def tangent(r: FloatArray) -> tuple[FloatArray, FloatArray]:
        r = np.minimum(r, _TANGENT_MAX_RHO)
        slope = 1.0 / (1.0 - r) ** 2
        return slope, 1.0 / (1.0 - r) - slope * r

    start = np.clip(problem.lambdas_array / mu, RHO_EPS, 1.0 - RHO_EPS)
    return _solve(t, tangent, start)


def clear_compiled() -> None:
    """Forget compiled layer problems, so the next solve pays cvxpy's compile again."""
    _layer1_template.cache_clear()
    _layer2_template.cache_clear()
