# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Convex (cvxpy) stand-ins of the two PMQECN layers; the derivation is in pmqecn.py.

Both layers use scaled variables so the conic solver sees O(1) numbers whatever
the rate unit: layer 1 solves for the spare share s = omega - lam~ (omega =
mu/Gamma, lam~ = lambda/Gamma measured), layer 2 for rho = lambda*/mu*.  In
both, class i's delay is a convex g_i (omega_i Gamma W_s,i under M/M/1) and its
jitter |target_i - g_i| with target_i = omega_i Gamma W_i affine.

Every number that comes from the measurements is a cvxpy Parameter and each
problem is DPP, so a control loop re-solving with new measurements (same
classes, kinds and N) reuses the compiled problem; only the first solve of a
structure pays cvxpy's canonicalisation.  Even compiled, ``Problem.solve``
spends ~95 % of a re-solve in cvxpy/scipy.sparse bookkeeping (parameter
validation, re-stuffing the conic matrices, unpacking) and ~5 % in Clarabel.
So the first solve of a structure also records the conic data Clarabel
receives as an affine map of the parameter values (DPP makes it affine;
cvxpy's ``apply_parameters`` is probed twice per Parameter), checks that
solving that data directly reproduces cvxpy's answer, and from then on every
solve is a matrix-vector product plus one ``clarabel.DefaultSolver`` call.
Should the check ever fail (a cvxpy that stuffs differently), the template
keeps using ``Problem.solve``.  The cached problems hold mutable parameter
values: one solve at a time (not thread-safe).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import clarabel
import cvxpy as cp
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from models.optimize.layer1_dual import spare_shares
from models.optimize.problem import (
    FLOOR_FILLS_CAP,
    RHO_EPS,
    PmqecnProblem,
    QosKind,
    SolverError,
)

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
# Clarabel's defaults (1e-8) except the gap: these problems solve in ~15 interior
# point iterations either way, and a tighter gap lets pmqecn.solve skip the SLSQP
# polish whenever the stand-ins are exact (the conic answer is then the answer).
_CLARABEL_OPTIONS: dict[str, float] = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10}
# The direct path must reproduce cvxpy's solution of the same data this closely
# (same solver, same data up to summation order) or it is not used.
_DIRECT_RTOL, _DIRECT_ATOL = 1e-6, 1e-9
# Clarabel's status names, as cvxpy's statuses (what the rest of the code reads).
_CLARABEL_STATUS = {
    "Solved": cp.OPTIMAL,
    "AlmostSolved": cp.OPTIMAL_INACCURATE,
    "PrimalInfeasible": cp.INFEASIBLE,
    "AlmostPrimalInfeasible": cp.INFEASIBLE_INACCURATE,
    "DualInfeasible": cp.UNBOUNDED,
    "AlmostDualInfeasible": cp.UNBOUNDED_INACCURATE,
}


@dataclass(frozen=True)
class ConvexResult:
    x: FloatArray  # omega (layer 1) or rho (layer 2)
    status: str
    solves: int
    # Layer 2 only: the floor on lambda* fills the cap, so the floor is the
    # one feasible point and neither a solve nor a polish can move it.
    pinned: bool = False


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
        # Cached: a port's kinds, weights and N come from the config, so every
        # cycle asks again for the same few structures, once per port and layer.
        return _structure_of(problem.kinds, problem.weights, problem.N)


@lru_cache(maxsize=4096)
def _structure_of(
    kinds: tuple[QosKind, ...], weights: tuple[tuple[float, float], ...], n_cap: int
) -> _Structure:
    # Plain Python: k is small, and numpy's set operations would cost more.
    used = [b > 0.0 for _, b in weights]  # a zero second weight drops the term

    def pick(kind: QosKind) -> tuple[int, ...]:
        return tuple(i for i, kd in enumerate(kinds) if kd is kind and used[i])

    jit = pick(QosKind.B)
    exact = tuple(i for i in jit if weights[i][0] >= weights[i][1])
    return _Structure(
        k=len(kinds),
        n_cap=n_cap,
        plain=tuple(i for i in range(len(kinds)) if i not in exact),
        exact=exact,
        ccp=tuple(i for i in jit if i not in exact),
        kind_a=pick(QosKind.A),
        kind_c=pick(QosKind.C),
    )


class _DirectClarabel:
    """A compiled problem's Clarabel data as an affine map of its parameter values.

    With theta the parameters' values in ``order`` (flattened, concatenated),
    ``f = t_map @ [1, theta]`` is Clarabel's data ``min q.x + d  s.t.
    A x + s = b, s in K`` laid out as ``[q, d, b, A.data]``, A on a fixed
    sparsity pattern.  DPP makes the map affine; it is read off cvxpy's
    ``apply_parameters`` (the entry point cvxpylayers uses) by probing.
    """

    def __init__(self, problem: cp.Problem, var: cp.Variable, params: dict[str, cp.Parameter]):
        data, _, _ = problem.get_problem_data(_SOLVER)
        prog = data["param_prob"]
        if "P" in data or prog.lower_bounds is not None or prog.upper_bounds is not None:
            raise ValueError("quadratic objective or variable bounds: not stuffed into A")
        self._prog = prog
        name_of = {p.id: name for name, p in params.items()}
        self.order = [name_of[p.id] for p in prog.parameters]
        self.cones = _cones(data["dims"])
        start = prog.var_id_to_col[var.id]
        self.columns = slice(start, start + var.size)
        _, _, a, _ = prog.apply_parameters(self._zero(), keep_zeros=True)
        m, n = a.shape
        self.shape = (m, n)
        self._slices = (slice(0, n), slice(n, n + 1), slice(n + 1, n + 1 + m))
        self._a_start = n + 1 + m
        coo = sp.coo_array(a)
        self._pattern = np.unique(coo.col.astype(np.int64) * m + coo.row)
        self.rows = (self._pattern % m).astype(np.int64)
        counts = np.bincount(self._pattern // m, minlength=n)
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.t_map = self._probe(fast=True)
        if not self._reproduces_cvxpy():
            self.t_map = self._probe(fast=False)
            if not self._reproduces_cvxpy():
                raise ValueError("the probed affine map does not reproduce cvxpy's data")
        del self._prog
        self.p_zero = sp.csc_array((n, n))
        self.settings = clarabel.DefaultSettings()
        self.settings.verbose = False
        for key, value in _CLARABEL_OPTIONS.items():
            setattr(self.settings, key, value)

    def _zero(self) -> dict[int, FloatArray]:
        return {p.id: np.zeros(p.shape) for p in self._prog.parameters}

    def _stuff(self, values: dict[int, FloatArray]) -> FloatArray:
        """cvxpy's Clarabel data for these parameter values, flattened as [q, d, b, A.data]."""
        q, d, a, b = self._prog.apply_parameters(values, keep_zeros=True)
        coo = sp.coo_array(a)
        linear = coo.col.astype(np.int64) * self.shape[0] + coo.row
        at = np.minimum(np.searchsorted(self._pattern, linear), self._pattern.size - 1)
        if not np.array_equal(self._pattern[at], linear):
            # keep_zeros pins every parameter-dependent entry into the pattern.
            raise ValueError("A's sparsity pattern depends on the parameter values")
        a_values = np.zeros(self._pattern.size)
        # Clarabel's A is cvxpy's -A: A x + s = b rather than A x + b in K.
        np.add.at(a_values, at, -coo.data)
        return np.concatenate([np.ravel(q), [float(d)], np.ravel(b), a_values])

    def _probe(self, *, fast: bool) -> FloatArray:
        """[f(0), df/dtheta_1, ...]: by unit probes, or (fast) two probes per parameter.

        The fast way assumes each data entry depends on at most one element of
        a parameter vector (a class's coefficient meets that class's variable):
        probing with all ones gives the coefficient c, with 1, 2, ..., s gives
        c (j + 1), so the ratio names j.  :meth:`_reproduces_cvxpy` checks it.
        """
        zero = self._zero()
        f0 = self._stuff(zero)
        columns = [f0[:, None]]
        for p in self._prog.parameters:
            cols = np.zeros((f0.size, p.size))
            ones = self._stuff(zero | {p.id: np.ones(p.shape)}) - f0
            if p.size == 1:
                cols[:, 0] = ones
            elif fast:
                ramp = self._stuff(zero | {p.id: np.arange(1.0, p.size + 1).reshape(p.shape)})
                hit = np.flatnonzero(ones)
                ratio = (ramp[hit] - f0[hit]) / ones[hit]
                index = np.clip(np.rint(ratio) - 1, 0, p.size - 1).astype(int)
                cols[hit, index] = ones[hit]
            else:
                for j in range(p.size):
                    unit = np.zeros(p.size)
                    unit[j] = 1.0
                    cols[:, j] = self._stuff(zero | {p.id: unit.reshape(p.shape)}) - f0
            columns.append(cols)
        return np.hstack(columns)

    def _reproduces_cvxpy(self) -> bool:
        """Does the map give cvxpy's data at a generic (random, fixed-seed) theta?"""
        rng = np.random.default_rng(0)
        values = {p.id: rng.uniform(0.5, 2.0, p.shape) for p in self._prog.parameters}
        theta = [np.ravel(values[p.id]) for p in self._prog.parameters]
        mapped = self.t_map @ np.concatenate([[1.0], *theta])
        truth = self._stuff(values)
        return bool(np.allclose(mapped, truth, rtol=1e-9, atol=1e-12 * np.abs(truth).max()))

    def data(self, values: dict[str, FloatArray]) -> FloatArray:
        """Clarabel's data for these values, flattened as [q, d, b, A.data]."""
        return self.t_map @ np.concatenate([[1.0], *(values[name].ravel() for name in self.order)])

    def matrix(self, f: FloatArray) -> sp.csc_array:
        return sp.csc_array((f[self._a_start :], self.rows, self.indptr), shape=self.shape)

    def solve(self, values: dict[str, FloatArray]) -> tuple[str, FloatArray | None, float]:
        f = self.data(values)
        q_at, d_at, b_at = self._slices
        a = self.matrix(f)
        try:
            solver = clarabel.DefaultSolver(
                self.p_zero, f[q_at], a, f[b_at], self.cones, self.settings
            )
            result = solver.solve()
        except BaseException as exc:  # Clarabel reports Rust panics as a BaseException
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            raise cp.error.SolverError(f"Clarabel: {exc}") from None
        status = _CLARABEL_STATUS.get(str(result.status), f"solver_error ({result.status})")
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return status, None, np.inf
        x = np.asarray(result.x, dtype=np.float64)[self.columns]
        return status, x, float(result.obj_val + f[d_at][0])


def _solve_block(items: list[tuple[_DirectClarabel, FloatArray]]) -> list[FloatArray] | None:
    """Solve independent problems (direct path, data ``f`` each) as one block-diagonal one.

    The blocks share no variable or constraint, so the joint optimum is each
    block's optimum; one interior-point run replaces one per block, and the
    per-solve set-up (most of a small solve's time) is paid once. None when
    Clarabel does not report the joint problem solved: the caller then solves
    each block on its own.
    """
    qs, bs, values, rows, indptrs, cones = [], [], [], [], [], []
    m = n = nnz = 0
    for direct, f in items:
        q_at, _, b_at = direct._slices
        qs.append(f[q_at])
        bs.append(f[b_at])
        # A's blocks laid side by side in CSC directly (scipy's block_diag
        # goes through COO and costs more than the solve's set-up it saves).
        values.append(f[direct._a_start :])
        rows.append(direct.rows + m)
        indptrs.append(direct.indptr[1:] + nnz)
        cones += direct.cones
        m += direct.shape[0]
        n += direct.shape[1]
        nnz += direct.rows.size
    a = sp.csc_array(
        (np.concatenate(values), np.concatenate(rows), np.concatenate([[0], *indptrs])),
        shape=(m, n),
    )
    try:
        result = clarabel.DefaultSolver(
            sp.csc_array((n, n)),
            np.concatenate(qs),
            a,
            np.concatenate(bs),
            cones,
            items[0][0].settings,
        ).solve()
    except BaseException as exc:  # Clarabel reports Rust panics as a BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        return None
    if _CLARABEL_STATUS.get(str(result.status)) != cp.OPTIMAL:
        return None
    x = np.asarray(result.x, dtype=np.float64)
    out, at = [], 0
    for direct, _ in items:
        width = direct.shape[1]
        out.append(x[at : at + width][direct.columns])
        at += width
    return out


def _cones(dims: Any) -> list[Any]:
    """Clarabel cones for cvxpy's cone dimensions, in cvxpy's row order."""
    if getattr(dims, "psd", []) or getattr(dims, "pnd", []):
        raise ValueError("PSD or n-dimensional power cones are not used by these layers")
    cones: list[Any] = []
    if dims.zero:
        cones.append(clarabel.ZeroConeT(int(dims.zero)))
    if dims.nonneg:
        cones.append(clarabel.NonnegativeConeT(int(dims.nonneg)))
    cones += [clarabel.SecondOrderConeT(int(d)) for d in dims.soc]
    cones += [clarabel.ExponentialConeT() for _ in range(int(dims.exp))]
    cones += [clarabel.PowerConeT(float(a)) for a in dims.p3d]
    return cones


class _Template:
    """A compiled-once problem plus its named parameters and their current values."""

    def __init__(self, var: cp.Variable, ccp: tuple[int, ...]) -> None:
        self.var = var
        self.ccp = np.asarray(ccp, dtype=np.intp)
        self.params: dict[str, cp.Parameter] = {}
        self.values: dict[str, FloatArray] = {}
        self.terms: list[cp.Expression] = []
        self.constraints: list[cp.Constraint] = []
        self.problem: cp.Problem | None = None
        self.direct: _DirectClarabel | None = None
        self.direct_tried = False

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
                shape = self.params[name].shape
                self.values[name] = np.asarray(value, dtype=np.float64).reshape(shape)

    def chosen(self, **values: FloatArray) -> dict[str, FloatArray]:
        """The values of this structure's parameters among ``values`` (a layer's
        job computes every term's), each already in its parameter's shape:
        per port, :meth:`set`'s copies and reshapes cost more than the solve."""
        return {name: value for name, value in values.items() if name in self.params}

    @property
    def path(self) -> str:
        return "clarabel direct" if self.direct is not None else "cvxpy"

    def solve(self) -> tuple[str, FloatArray | None, float]:
        """(cvxpy status, the variable's value or None, objective) at the current values."""
        if self.direct is not None:
            return self.direct.solve(self.values)
        assert self.problem is not None
        for name, p in self.params.items():
            p.value = self.values[name]
        # warm_start=False: cvxpy's Clarabel warm path updates the solver in
        # place and, on these problems, stopped ~5e-5 (relative) short of the
        # optimum the same data reaches from scratch.
        objective = self.problem.solve(solver=_SOLVER, warm_start=False, **_CLARABEL_OPTIONS)
        status = str(self.problem.status)
        x = None if self.var.value is None else np.asarray(self.var.value, dtype=np.float64)
        if not self.direct_tried and status == cp.OPTIMAL and x is not None:
            self.direct_tried = True
            checked = self._checked_direct(x)
            if checked is not None:
                # Answer from the direct path from the first solve on, so that
                # equal inputs give bit-equal answers whether or not compiled.
                self.direct, answer = checked
                return answer
        return status, x, float(objective)

    def _checked_direct(
        self, x: FloatArray
    ) -> tuple[_DirectClarabel, tuple[str, FloatArray | None, float]] | None:
        """The direct path and its answer, if that reproduces cvxpy's answer ``x``."""
        assert self.problem is not None
        try:
            direct = _DirectClarabel(self.problem, self.var, self.params)
            answer = direct.solve(self.values)
        except (AttributeError, KeyError, TypeError, ValueError, cp.error.SolverError):
            # cvxpy's stuffing is not public API: any surprise means "stay on
            # Problem.solve", which is slower but the reference.
            return None
        status, x_direct, _ = answer
        if status != cp.OPTIMAL or x_direct is None:
            return None
        if not np.allclose(x_direct, x, rtol=_DIRECT_RTOL, atol=_DIRECT_ATOL):
            return None
        return direct, answer


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
        rho >= t.param("rho_lo", st.k, nonneg=True),  # PmqecnProblem.target_floor / mu
        rho <= 1.0 - RHO_EPS,
        mu @ rho <= t.param("cap", (), nonneg=True),
        cp.sum(slowdown) <= st.n_cap + st.k,  # sum rho/(1-rho) <= N
    ]
    return t.finish()


def _solve(t: _Template, tangent: Tangent, start: FloatArray) -> ConvexResult:
    """Solve; with concave jitter parts, re-linearise until the value settles."""
    point, last, solves, status = start, np.inf, 0, ""
    while True:
        if t.ccp.size:
            slope, offset = tangent(point)
            t.set(slope=slope[t.ccp], offset=offset[t.ccp])
        try:
            status_now, x, objective = t.solve()
            failure = "" if x is not None else f"status {status_now!r}"
            if status_now not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                failure = f"status {status_now!r}"
        except cp.error.SolverError as exc:
            failure = str(exc)
        if failure:
            if not solves:
                raise SolverError(f"{_SOLVER} failed: {failure}")
            # A later CCP step failing leaves the previous point, which is
            # feasible and no worse; report it rather than discard it.
            return ConvexResult(x=point, status=f"{status}, ccp stopped: {failure}", solves=solves)
        assert x is not None
        solves += 1
        status = status_now
        point = x
        settled = abs(last - objective) <= _CCP_REL_TOL * max(1.0, abs(objective))
        if not t.ccp.size or settled or solves >= _CCP_MAX_ITER:
            return ConvexResult(x=point, status=f"{status} via {t.path}", solves=solves)
        last = objective


def _b_params(
    st: _Structure,
    a: FloatArray,
    b: FloatArray,
    g0: FloatArray,
    g1: FloatArray,
    tg1: FloatArray,
    tg0: FloatArray,
) -> dict[str, FloatArray]:
    """Parameter values of _add_b_terms for g = g0 + g1 conv, target = tg1 aff + tg0.

    Every array is (..., k): one port's or, stacked, many ports'.
    """
    e, c = _idx(st.exact), _idx(st.ccp)
    return {
        "up0": (a + b)[..., e] * g0[..., e],
        "up1": (a + b)[..., e] * g1[..., e],
        "dn0": (a - b)[..., e] * g0[..., e],
        "dn1": (a - b)[..., e] * g1[..., e],
        "bt1": b[..., e] * tg1[..., e],
        "bt0": b[..., e] * tg0[..., e],
        "g0": g0[..., c],
        "g1": g1[..., c],
        "tg1": tg1[..., c],
        "tg0": tg0[..., c],
        "b_ccp": b[..., c],
    }


@dataclass(frozen=True)
class _Job:
    """One port's layer, set up: its template's values as set for this port."""

    template: _Template
    values: dict[str, FloatArray]
    tangent: Tangent
    start: FloatArray
    offset: FloatArray | None = None  # added to the answer (layer 1 solves omega - lam~)

    def run(self) -> ConvexResult:
        # Templates are shared by every port of one structure: put this port's values back.
        self.template.values = dict(self.values)
        res = _solve(self.template, self.tangent, self.start)
        return self.done(res.x, res.status, res.solves)

    def done(self, x: FloatArray, status: str, solves: int) -> ConvexResult:
        if self.offset is not None:
            x = x + self.offset
        return ConvexResult(x=x, status=status, solves=solves)

    @property
    def batchable(self) -> bool:
        """One solve on the direct path (no CCP re-linearisation)."""
        return self.template.direct is not None and not self.template.ccp.size


def _run_jobs(jobs: list[_Job | ConvexResult]) -> list[ConvexResult]:
    """Every job's answer; the one-solve, direct-path jobs as one block solve."""
    out: list[ConvexResult | None] = [j if isinstance(j, ConvexResult) else None for j in jobs]
    batch = [i for i, j in enumerate(jobs) if isinstance(j, _Job) and j.batchable]
    if len(batch) > 1:
        items = []
        for i in batch:
            job = jobs[i]
            assert isinstance(job, _Job) and job.template.direct is not None
            items.append((job.template.direct, job.template.direct.data(job.values)))
        xs = _solve_block(items)
        if xs is not None:
            for i, x in zip(batch, xs, strict=True):
                job = jobs[i]
                assert isinstance(job, _Job)
                out[i] = job.done(x, f"{cp.OPTIMAL} via clarabel direct, batched", 1)
    for i, job in enumerate(jobs):
        if out[i] is None:
            assert isinstance(job, _Job)
            out[i] = job.run()
    return [r for r in out if r is not None]


def solve_layer1(problem: PmqecnProblem) -> ConvexResult:
    """Service split omega for the measured arrival rates (Algorithm 2, step 2)."""
    return _layer1_job(problem).run()


def solve_layer1_many(problems: list[PmqecnProblem]) -> list[ConvexResult]:
    """:func:`solve_layer1` for independent ports, all at once.

    Ports of one structure are set up as one stack and answered through
    their multipliers (models/optimize/layer1_dual.py); the rest (CCP jitter,
    a binding queue constraint, a split the multiplier does not fix) are
    solved as one block conic problem.
    """
    by_structure: dict[_Structure, list[int]] = {}
    for i, problem in enumerate(problems):
        by_structure.setdefault(_Structure.of(problem), []).append(i)
    stacks = list(by_structure.items())
    answers = spare_shares(
        [(st, _stacked_layer1_values(st, [problems[i] for i in at])) for st, at in stacks]
    )
    out: list[_Job | ConvexResult | None] = [None] * len(problems)
    for (_, at), (shares, ok) in zip(stacks, answers, strict=True):
        for row, i in enumerate(at):
            if ok[row]:
                lam = problems[i].lambdas_array / problems[i].Gamma
                status = f"{cp.OPTIMAL} via the multiplier, batched"
                out[i] = ConvexResult(x=shares[row] + lam, status=status, solves=1)
    return _run_jobs(
        [_layer1_job(p) if r is None else r for p, r in zip(problems, out, strict=True)]
    )


def _stacked_layer1_values(st: _Structure, problems: list[PmqecnProblem]) -> dict[str, FloatArray]:
    """:func:`_layer1_values` for ports of one structure, as (P, k) arrays."""
    gamma = np.array([p.Gamma for p in problems])
    rates = np.array([p.lambdas for p in problems], dtype=np.float64)
    # Equal structures may still differ in weights (a delay weight is not in it).
    weights = np.array([p.weights for p in problems], dtype=np.float64)
    a, b = weights[..., 0], weights[..., 1]
    residual = 1.0 - rates.sum(axis=1) / np.array([p.n * p.C for p in problems])
    gw = gamma[:, None] * np.array([p.W for p in problems], dtype=np.float64)
    return _layer1_values(st, rates / gamma[:, None], a, b, gw, residual)


def _layer1_values(
    st: _Structure,
    lam: FloatArray,
    a: FloatArray,
    b: FloatArray,
    gw: FloatArray,
    residual: FloatArray,
) -> dict[str, FloatArray]:
    """Layer 1's parameter values, for one port (lam~, weights a and b,
    gw = Gamma W: (k,); residual: ()) or for a structure's ports stacked
    ((P, k) and (P,)).

    M/M/1: omega Gamma W_s = 1 + lam~ / s and target omega Gamma W_i = GW s + GW lam~.
    """
    kc, ka, plain = _idx(st.kind_c), _idx(st.kind_a), _idx(st.plain)
    return {
        "lam": lam,
        "a_lam": (a * lam)[..., plain],
        "resid_b": residual[..., None] * b[..., ka],
        # omega N_loss / Gamma <= omega lam~ rho^N = exp((N+1) ln lam~ + (1-N) ln omega).
        "log_coeff": (st.n_cap + 1) * np.log(lam[..., kc]) + np.log(b[..., kc]),
        "lam_c": lam[..., kc],
        "spare": 1.0 - lam.sum(axis=-1),
        "s_lo": lam * RHO_EPS / (1.0 - RHO_EPS),  # omega >= lam~ / (1 - eps)
        **_b_params(st, a, b, np.ones_like(lam), lam, gw, gw * lam),
    }


def _layer1_job(problem: PmqecnProblem) -> _Job:
    st = _Structure.of(problem)
    t = _layer1_template(st)
    lam = problem.lambdas_array / problem.Gamma
    a, b = problem.weight_arrays()
    residual = 1.0 - float(problem.lambdas_array.sum()) / (problem.n * problem.C)
    gw = problem.Gamma * np.asarray(problem.W)
    values = t.chosen(**_layer1_values(st, lam, a, b, gw, np.asarray(residual)))
    s_lo, spare = values["s_lo"], float(values["spare"])

    def tangent(s: FloatArray) -> tuple[FloatArray, FloatArray]:
        s = np.maximum(s, lam * (1.0 / _TANGENT_MAX_RHO - 1.0))
        slope = -lam / s**2
        return slope, 1.0 + lam / s - slope * s

    # Start the tangents at the split minimising the total M/M/1 queue.
    start = np.maximum(spare * np.sqrt(lam) / np.sqrt(lam).sum(), s_lo)
    return _Job(t, values, tangent, start, offset=lam)


def solve_layer2(problem: PmqecnProblem, mu: FloatArray) -> ConvexResult:
    """Load factors rho = lambda*/mu* for the chosen service rates (step 4).

    ``solves == 0`` means the convex layer was not solved: the floor on
    lambda* (PmqecnProblem.target_floor) already breaks the M/M/1 stand-in of
    C2 (possible for small N, where M/M/1 overstates the queue), so the
    stand-in has no feasible point; ``x`` is then the floor itself, which meets
    the exact C2 whenever mu* does at the measured rates.
    """
    job = _layer2_job(problem, mu)
    return job if isinstance(job, ConvexResult) else job.run()


def solve_layer2_many(problems: list[PmqecnProblem], mus: list[FloatArray]) -> list[ConvexResult]:
    """:func:`solve_layer2` for independent ports, their single solves as one."""
    return _run_jobs([_layer2_job(p, mu) for p, mu in zip(problems, mus, strict=True)])


def _layer2_job(problem: PmqecnProblem, mu: FloatArray) -> _Job | ConvexResult:
    st = _Structure.of(problem)
    floor = problem.target_floor(mu)
    rho_lo = floor / mu
    if float(floor.sum()) >= problem.target_cap * (1.0 - FLOOR_FILLS_CAP):
        # An over-target port: lambda* >= floor and sum(lambda*) <= cap leave
        # room of ~1e-9 cap, so the answer is the floor (one shared point for
        # every solver); solving would only return it more slowly.
        return ConvexResult(x=rho_lo, status="floor fills the cap", solves=0, pinned=True)
    if float((rho_lo / (1.0 - rho_lo)).sum()) > st.n_cap:
        return ConvexResult(x=rho_lo, status="floor outside the M/M/1 bound on C2", solves=0)
    t = _layer2_template(st)
    omega = mu / problem.Gamma
    a, b = problem.weight_arrays()
    kc, ka, plain = _idx(st.kind_c), _idx(st.kind_a), _idx(st.plain)
    zeros, ones = np.zeros(st.k), np.ones(st.k)
    weight_a = float(b[ka] @ omega[ka])
    values = t.chosen(
        a_plain=a[plain],
        mu=mu,
        resid_mu=weight_a * mu / (problem.n * problem.C),
        # omega N_loss / Gamma <= omega^2 rho^(N+1); power cones stay exact for any N.
        loss_coeff=b[kc] * omega[kc] ** 2,
        cap=np.asarray(problem.target_cap),
        rho_lo=rho_lo,
        **_b_params(st, a, b, zeros, ones, zeros, problem.Gamma * np.asarray(problem.W) * omega),
    )

    def tangent(r: FloatArray) -> tuple[FloatArray, FloatArray]:
        r = np.minimum(r, _TANGENT_MAX_RHO)
        slope = 1.0 / (1.0 - r) ** 2
        return slope, 1.0 / (1.0 - r) - slope * r

    start = (problem.lambdas_array / mu).clip(rho_lo, 1.0 - RHO_EPS)
    return _Job(t, values, tangent, start)


def clear_compiled() -> None:
    """Forget compiled layer problems, so the next solve pays cvxpy's compile again."""
    _layer1_template.cache_clear()
    _layer2_template.cache_clear()
