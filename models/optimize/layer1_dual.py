# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Layer 1's convex stand-in for many ports at once, through one multiplier per port.

Layer 1 (surrogate._layer1_template) minimises a sum of one-variable convex
terms f_i(s_i) of the spare shares s_i = omega_i - lam~_i subject to

    sum_i s_i = spare,   s_i >= s_lo_i,   sum_i lam~_i / s_i <= N.

Leave the queue constraint aside for a moment. With nu the multiplier of the
equality, s_i(nu) = argmin_{s >= s_lo_i} f_i(s) - nu s is nondecreasing in
nu, so the optimum is the root of sum_i s_i(nu) = spare: one scalar per port.
Every term's s_i(nu) is closed-form except class C's loss bound, which is a
one-variable Newton solve. So the whole layer for a switch is a few dozen
array operations repeated ~10 times (safeguarded Newton on every port's
multiplier at once), where the conic solver needs one interior-point run over
every port's cones. A handled port's optimum is unique (each class's s_i(nu)
is single-valued below the multiplier's upper end), so the answer is the
conic solver's, to its tolerance (tests/models/test_layer1_dual.py checks
both the optimality conditions and the agreement).

If the answer breaks the queue constraint, that constraint binds and its own
multiplier would be needed: such a port (as any port this module does not
handle: a CCP jitter term, a class without a 1/s part (no traffic, no delay
weight), only exact B classes with a = b at the multiplier's upper end, a
spare at or below its floor) is answered None and left to the conic solver.

The terms, per class, in the template's own parameter values (so both solvers
read the same numbers):

* plain (every class but an exact B): a_lam / s, plus resid_b s for class A
  and, for class C, exp(log_coeff + (1 - N) ln(s + lam_c));
* exact B: max(up0 + up1/s - bt1 s - bt0, dn0 + dn1/s + bt1 s + bt0), the
  "rising" (in the delay g) and "falling" pieces of surrogate._add_b_terms;
  the first is the larger below one s_kink, the second above it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_PLAIN, _LOSS, _JITTER = 0, 1, 2
# sum s = spare to this fraction of spare: the conic solver's own accuracy is
# ~1e-9 here, so this is below what either can tell apart.
_ROOT_TOL = 1e-13
_ROOT_MAX_ITER = 100
# Newton on class C's log-stationarity converges from the left in a few steps
# (its left side is convex in s); this bounds the pathological cases.
_LOSS_MAX_ITER = 60


class Layer1Structure(Protocol):
    """The parts of surrogate._Structure this module reads."""

    @property
    def n_cap(self) -> int: ...
    @property
    def plain(self) -> tuple[int, ...]: ...
    @property
    def exact(self) -> tuple[int, ...]: ...
    @property
    def ccp(self) -> tuple[int, ...]: ...
    @property
    def kind_a(self) -> tuple[int, ...]: ...
    @property
    def kind_c(self) -> tuple[int, ...]: ...


_COLUMNS = ("kind", "lam", "s_lo", "d", "d_fall", "lin", "log_x", "lam_c", "n", "s_kink")


def _columns(
    st: Layer1Structure, v: Mapping[str, FloatArray]
) -> tuple[dict[str, FloatArray], npt.NDArray[np.bool_]]:
    """One structure's ports ((P, ...)-shaped values) as (P, k) arrays of this
    module's terms, and which ports it can answer."""
    lam = v["lam"]
    shape = lam.shape
    kind = np.full(shape, float(_PLAIN))
    d, d_fall, lin, lam_c = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape)
    log_x, s_kink = np.full(shape, -np.inf), np.full(shape, np.inf)
    plain, exact = list(st.plain), list(st.exact)
    if plain:
        d[:, plain] = v["a_lam"]
    if st.kind_a:
        lin[:, list(st.kind_a)] = v["resid_b"]
    if st.kind_c and st.n_cap > 1:
        c = list(st.kind_c)
        kind[:, c] = _LOSS
        # -d/ds exp(log_coeff + (1-N) ln(s+lam_c)) = (N-1) exp(log_coeff - N ln(s+lam_c))
        log_x[:, c] = np.log(st.n_cap - 1.0) + v["log_coeff"]
        lam_c[:, c] = v["lam_c"]
    if exact:
        kind[:, exact] = _JITTER
        up1, dn1, bt1 = v["up1"], v["dn1"], v["bt1"]
        d[:, exact], d_fall[:, exact], lin[:, exact] = up1, dn1, bt1
        # Where the pieces cross: 2 bt1 s^2 - beta s - (up1 - dn1) = 0.
        beta = v["up0"] - v["dn0"] - 2.0 * v["bt0"]
        with np.errstate(divide="ignore", invalid="ignore"):
            root = (beta + np.sqrt(beta**2 + 8.0 * bt1 * (up1 - dn1))) / (4.0 * bt1)
        s_kink[:, exact] = np.where(bt1 > 0.0, root, np.inf)
    spare = np.asarray(v["spare"], dtype=np.float64)
    cols = {"kind": kind, "lam": lam, "s_lo": v["s_lo"], "d": d, "d_fall": d_fall, "lin": lin,
            "log_x": log_x, "lam_c": lam_c, "n": np.full(shape, float(st.n_cap)),
            "s_kink": s_kink, "spare": spare}  # fmt: skip
    rows = shape[0]
    finite = np.ones(rows, dtype=bool)
    for x in v.values():
        if np.size(x):
            finite &= np.all(np.isfinite(np.reshape(x, (rows, -1))), axis=1)
    # Every class needs a strictly convex part (c / s, c > 0) for a unique
    # optimum; a zero-traffic or zero-delay-weight class has none.
    handled = (
        np.full(rows, not st.ccp)  # a CCP term is re-linearised: not one problem
        & finite
        & np.all(lam > 0.0, axis=1)
        & np.all(d > 0.0, axis=1)
        & (spare > v["s_lo"].sum(axis=1))
    )
    # The root search needs a class whose share grows without bound as the
    # multiplier nears its upper end; an exact B whose falling piece has no
    # 1/s part (a = b) jumps there instead, and if only such classes reach
    # it, the split among them is not unique: the conic solver picks one.
    unbounded = (lin == lin.min(axis=1, keepdims=True)) & ~((kind == _JITTER) & (d_fall == 0.0))
    return cols, handled & np.any(unbounded, axis=1)


class _Classes:
    """Every handled port's classes, flattened; ``port`` says whose each is."""

    def __init__(self, groups: list[dict[str, FloatArray]]) -> None:
        flat = {name: np.concatenate([g[name].ravel() for g in groups]) for name in _COLUMNS}
        k = [g["lam"].shape[1] for g in groups]
        rows = [g["lam"].shape[0] for g in groups]
        self.count = sum(rows)
        self.port = np.repeat(np.arange(self.count), np.repeat(k, rows))
        self.kind = flat["kind"].astype(np.intp)
        self.lam, self.s_lo, self.s_kink = flat["lam"], flat["s_lo"], flat["s_kink"]
        self.d, self.d_fall, self.lin = flat["d"], flat["d_fall"], flat["lin"]
        self.log_x, self.lam_c, self.n = flat["log_x"], flat["lam_c"], flat["n"]
        self.spare = np.concatenate([g["spare"] for g in groups])
        # The multiplier's upper end: past it some class's share is unbounded
        # (a plain class's linear coefficient, an exact B's falling-piece slope bt1).
        nu_hi = np.full(self.count, np.inf)
        np.minimum.at(nu_hi, self.port, self.lin)
        # With y = 1 / sqrt(nu_hi - nu), each class's c(nu) = lin - nu is
        # off + 1/y^2 with off >= 0, computed without cancellation near nu_hi.
        self.off = self.lin - nu_hi[self.port]
        # The exact B's rising piece has -bt1 - nu = (off - 2 bt1) + 1/y^2.
        self.off_rise = self.off - 2.0 * self.lin
        self.is_loss = np.flatnonzero(self.kind == _LOSS)
        self.is_jitter = np.flatnonzero(self.kind == _JITTER)
        self.is_plain = np.flatnonzero(self.kind == _PLAIN)

    # Ports whose class C shares had not settled at the last shares() call.
    unsettled: npt.NDArray[np.bool_]

    def sum(self, values: FloatArray) -> FloatArray:
        # bincount with weights sums in float64 (numpy's stubs say int).
        out: FloatArray = np.bincount(self.port, weights=values, minlength=self.count)  # type: ignore[assignment]
        return out

    def shares(self, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        """s_i at each port's y, and ds_i/dy."""
        inv_y2 = 1.0 / y**2
        dy = 2.0 * inv_y2 / y  # d(1/y^2)/dy, negated
        c = self.off + inv_y2[self.port]  # lin - nu > 0
        s = np.empty_like(c)
        ds = np.empty_like(c)
        # d / s^2 = c
        p = self.is_plain
        s[p] = np.sqrt(self.d[p] / c[p])
        ds[p] = s[p] / (2.0 * c[p]) * dy[self.port[p]]
        self.unsettled = np.zeros(self.count, dtype=bool)
        if self.is_loss.size:
            self._loss(c, dy, s, ds)
        if self.is_jitter.size:
            self._jitter(inv_y2, dy, c, s, ds)
        low = s < self.s_lo
        s[low] = self.s_lo[low]
        ds[low] = 0.0
        return s, ds

    def _loss(self, c: FloatArray, dy: FloatArray, s: FloatArray, ds: FloatArray) -> None:
        """d / s^2 + x(s) = c, x(s) = exp(log_x - N ln(s + lam_c)): Newton on the log.

        psi(s) = ln(d/s^2 + x(s)) is convex and falling (a sum of log-convex
        terms), so Newton from sqrt(d/c), where psi >= ln c, climbs to the root
        without overshooting it.
        """
        i = self.is_loss
        d, log_x, n, lam_c, log_c = self.d[i], self.log_x[i], self.n[i], self.lam_c[i], np.log(c[i])
        x = np.sqrt(d / c[i])
        settled = np.zeros(i.size, dtype=bool)
        for _ in range(_LOSS_MAX_ITER):
            t_delay = np.log(d) - 2.0 * np.log(x)
            t_loss = log_x - n * np.log(x + lam_c)
            psi = np.logaddexp(t_delay, t_loss)
            slope = 2.0 * np.exp(t_delay - psi) / x + n * np.exp(t_loss - psi) / (x + lam_c)
            step = (psi - log_c) / slope
            x = x + step
            settled = np.abs(step) <= 1e-15 * x
            if np.all(settled):
                break
        # A share still moving would make the outer root wrong while the sum
        # looks right: its port goes to the conic solver.
        self.unsettled[self.port[i][~settled]] = True
        s[i] = x
        phi_slope = 2.0 * d / x**3 + n * np.exp(log_x - n * np.log(x + lam_c)) / (x + lam_c)
        ds[i] = dy[self.port[i]] / phi_slope

    def _jitter(
        self, inv_y2: FloatArray, dy: FloatArray, c: FloatArray, s: FloatArray, ds: FloatArray
    ) -> None:
        """The rising piece's root below s_kink, the kink, or the falling piece's above it."""
        i = self.is_jitter
        kink, up1, dn1 = self.s_kink[i], self.d[i], self.d_fall[i]
        c_rise = self.off_rise[i] + inv_y2[self.port[i]]  # -bt1 - nu
        c_fall = c[i]  # bt1 - nu
        with np.errstate(divide="ignore", invalid="ignore"):
            rising = c_rise > up1 / kink**2
            falling = ~rising & (dn1 > 0.0) & (c_fall < dn1 / kink**2)
            out = np.where(
                rising, np.sqrt(up1 / c_rise), np.where(falling, np.sqrt(dn1 / c_fall), kink)
            )
            slope = np.where(
                rising, out / (2.0 * c_rise), np.where(falling, out / (2.0 * c_fall), 0.0)
            )
        s[i] = out
        ds[i] = slope * dy[self.port[i]]


def spare_shares(
    stacks: Sequence[tuple[Layer1Structure, Mapping[str, FloatArray]]],
) -> list[tuple[FloatArray, npt.NDArray[np.bool_]]]:
    """Per stack (one structure's ports, values stacked along a first axis of
    P ports): the optimal spare shares (P, k), and which ports they answer
    (the others' rows are NaN: the conic solver must answer those)."""
    columns = [_columns(st, v) for st, v in stacks]
    out = [
        (np.full(c["lam"].shape, np.nan), np.zeros(c["lam"].shape[0], dtype=bool))
        for c, _ in columns
    ]
    kept = [keep for _, keep in columns]
    groups = [{name: value[keep] for name, value in c.items()} for c, keep in columns]
    if not any(np.any(keep) for keep in kept):
        return out
    cl = _Classes([g for g in groups if g["lam"].shape[0]])
    s, converged = _roots(cl)
    queue = cl.sum(cl.lam / s)
    at = first = 0
    for (st, _), g, keep, (shares, ok) in zip(stacks, groups, kept, out, strict=True):
        rows, k = g["lam"].shape
        if not rows:
            continue
        good = converged[at : at + rows] & (queue[at : at + rows] <= st.n_cap)
        rows_s = s[first : first + rows * k].reshape(rows, k)
        where = np.flatnonzero(keep)[good]
        shares[where] = rows_s[good]
        ok[where] = True
        at += rows
        first += rows * k
    return out


def _roots(cl: _Classes) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Safeguarded Newton on every port's y for sum_i s_i(y) = spare: the
    shares there, and which ports' search converged."""
    root_d = cl.sum(np.sqrt(cl.d))
    # First guess: the root were every class plain (s_i = sqrt(d_i) y).
    y = cl.spare / root_d
    lo = np.zeros(cl.count)
    hi = np.full(cl.count, np.inf)
    done = np.zeros(cl.count, dtype=bool)
    for _ in range(_ROOT_MAX_ITER):
        s, ds = cl.shares(y)
        gap = cl.sum(s) - cl.spare
        done |= np.abs(gap) <= _ROOT_TOL * cl.spare
        if np.all(done):
            break
        lo = np.where(gap < 0.0, np.maximum(lo, y), lo)
        hi = np.where(gap > 0.0, np.minimum(hi, y), hi)
        # A bracket that floating point can no longer shrink is as close as it gets.
        done |= np.isfinite(hi) & (hi - lo <= 4.0 * np.finfo(float).eps * hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = y - gap / cl.sum(ds)
        inside = (newton > lo) & (newton < hi)
        fallback = np.where(np.isfinite(hi), 0.5 * (lo + hi), 2.0 * y)
        y = np.where(done, y, np.where(inside, newton, fallback))
    else:
        s, _ = cl.shares(y)
    return s, done & ~cl.unsettled
