# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Vectorised, unvalidated M/M/1/N core (Eqs. 1-8 of the PMQECN paper).

Everything is written in terms of ``b = ln(mu / lam) = -ln(rho)`` rather than
``rho``: powers ``rho**N`` then become ``exp(-N b)``, which never overflows for
``b > 0``, and the ``1 - rho**(N+1)`` denominators become ``expm1`` calls, which
keep full relative precision as ``rho -> 1``.  For ``rho > 1`` the chain is the
mirror image of the chain with ``1 / rho`` (``P_m(rho) = P_{N-m}(1/rho)``), so
only ``b >= 0`` needs careful code.

The optimisers evaluate whole DE populations at once, hence numpy arrays and no
input checks here; :mod:`models.queueing.mm1n` is the validated public face.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from models import cycle_speedups

FloatArray = npt.NDArray[np.float64]

# Below this value of (N+1)*|b| the direct L_s formula subtracts two numbers of
# size ~1/|b| to get ~N/2; the Bernoulli series is used instead.  At 0.1 the
# direct form loses at most a factor ~20 to cancellation and the truncated
# series (5 terms) errs by ~c_6 * 0.1**11 relative, far below double precision.
_SERIES_LIMIT = 0.1
# B_{2k} / (2k)! for k = 1..5: coefficients of 1/expm1(t) = 1/t - 1/2 + sum c_k t^(2k-1).
_BERNOULLI_COEFFS = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0, 1.0 / 47900160.0)


@dataclass(frozen=True)
class KernelResult:
    """Arrays of M/M/1/N quantities, broadcast over the inputs."""

    p0: FloatArray
    pn: FloatArray
    lq: FloatArray | None  # None when not asked for (mm1n_arrays' with_lq)
    lc: FloatArray
    ls: FloatArray
    lambda_e: FloatArray
    ws: FloatArray
    n_loss: FloatArray


def log_ratio(lam: FloatArray, mu: FloatArray) -> FloatArray:
    """``ln(mu / lam)`` without losing the digits that matter near ``mu == lam``."""
    diff = mu - lam
    close = np.abs(diff) < 0.5 * lam
    with np.errstate(divide="ignore", invalid="ignore"):
        # Sterbenz: mu - lam is exact when close, so log1p keeps all digits of b;
        # far from 1 the quotient mu/lam would lose digits to the -1 in log1p.
        if cycle_speedups.ENABLED and close.all():
            return np.log1p(diff / lam)  # what where() takes from every element
        near = np.log1p(diff / lam)
        far = np.log(mu) - np.log(lam)
    return np.where(close, near, far)


def _inv_expm1(t: FloatArray) -> FloatArray:
    """``1 / (e^t - 1)`` for ``t > 0`` without overflow (``e^-t / (1 - e^-t)``)."""
    return np.exp(-t) / -np.expm1(-t)


def _ls_nonneg(c: FloatArray, n: FloatArray) -> FloatArray:
    """Mean number in system for ``b = c >= 0`` (``rho <= 1``), capacity ``n``."""
    m = n + 1.0
    t = m * c
    near = t < _SERIES_LIMIT
    if cycle_speedups.ENABLED and not near.any():
        # No element takes the series (nearly every call: it is for rho
        # within ~0.1/N of 1), so the where() below would return `direct`
        # exactly; its ten power terms per element are most of this call.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return _inv_expm1(c) - m * _inv_expm1(t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        series = 0.5 * n
        for k, coeff in enumerate(_BERNOULLI_COEFFS, start=1):
            # c^(2k-1) (1 - m^(2k)) as c^(2k-1) - m t^(2k-1): m^(2k) alone can overflow.
            series = series + coeff * (c ** (2 * k - 1) - m * t ** (2 * k - 1))
        direct = _inv_expm1(c) - m * _inv_expm1(t)
    return np.where(near, series, direct)


def mm1n_arrays(
    lam: npt.ArrayLike, mu: npt.ArrayLike, n: npt.ArrayLike, with_lq: bool = True
) -> KernelResult:
    """All M/M/1/N steady-state metrics for positive ``lam``, ``mu`` and ``n >= 1``.

    ``with_lq=False`` leaves out L_q (a second L_s series, a quarter of the
    work), which the optimiser's objective does not read; the other arrays
    are the same to the bit."""
    lam_a = np.asarray(lam, dtype=np.float64)
    mu_a = np.asarray(mu, dtype=np.float64)
    n_a = np.asarray(n, dtype=np.float64)
    if cycle_speedups.ENABLED and n_a.ndim == 0 and lam_a.shape == mu_a.shape:
        # The optimiser's call (one capacity for every class and point):
        # the capacity as an array of its own, the same values
        # broadcast_arrays would give, for a sixth of this call's time.
        n_a = np.full(lam_a.shape, n_a)
    else:
        lam_a, mu_a, n_a = np.broadcast_arrays(lam_a, mu_a, n_a)
    m = n_a + 1.0
    b = log_ratio(lam_a, mu_a)
    if cycle_speedups.ENABLED and b.min() > 0.0:
        return _below_one(lam_a, mu_a, n_a, m, b, with_lq)
    c = np.abs(b)
    below = b > 0.0  # rho < 1
    at_one = c == 0.0

    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # Probability of the empty state of the rho<=1 chain with b=c, as a log.
        log_p0_pos = np.log(-np.expm1(-c)) - np.log(-np.expm1(-m * c))
        log_p0_pos = np.where(at_one, -np.log(m), log_p0_pos)
        log_pn_pos = log_p0_pos - n_a * c
        log_p0 = np.where(below | at_one, log_p0_pos, log_pn_pos)
        p0 = np.exp(log_p0)
        pn = np.exp(np.where(below | at_one, log_pn_pos, log_p0_pos))

        # 1 - P0 as rho (1 - rho^N) / (1 - rho^(N+1)): for tiny rho, 1 - P0 would
        # cancel to nothing, and this product keeps every digit.
        frac = np.expm1(-n_a * c) / np.expm1(-m * c)
        lc_below = np.exp(-c) * frac
        lc = np.where(below, lc_below, np.where(at_one, n_a / m, -np.expm1(log_p0)))

        ls_pos = _ls_nonneg(c, n_a)
        ls = np.where(b >= 0.0, ls_pos, n_a - ls_pos)

        # L_q = rho * L_s(N-1) * P0(N) / P0(N-1): L_s - L_c cancels to zero for
        # tiny rho (both ~rho), this product does not.  Above rho=1, L_s >= N/2
        # dominates L_c < 1, so the plain difference is accurate there.
        lq = None
        if with_lq:
            lq_below = np.exp(-c) * _ls_nonneg(c, n_a - 1.0) * frac
            # max(): for N=1 above rho=1, L_s and L_c are equal and may differ by an ulp.
            lq = np.where(below, lq_below, np.maximum(ls - lc, 0.0))

    # Eq. 3, lam (1 - P_N), below rho=1 (P_N <= 1/2 there, no cancellation); above
    # it the flow-balance form mu (1 - P_0) avoids 1 - P_N ~ 1/rho cancelling.
    # Each form is bounded by its own rate, so lambda_e <= min(lam, mu) exactly.
    with np.errstate(under="ignore"):
        lambda_e = np.where(below, lam_a * (1.0 - pn), mu_a * lc)
    ws = ls / lambda_e  # Little's law on the admitted traffic, Eq. 7.
    n_loss = lam_a * pn  # Eq. 8.
    return KernelResult(p0=p0, pn=pn, lq=lq, lc=lc, ls=ls, lambda_e=lambda_e, ws=ws, n_loss=n_loss)


def _below_one(
    lam: FloatArray, mu: FloatArray, n: FloatArray, m: FloatArray, c: FloatArray, with_lq: bool
) -> KernelResult:
    """mm1n_arrays when every rho < 1 (c = b > 0), as the optimiser's points
    nearly always are: each where() of the general path then takes its
    rho < 1 branch, computed here alone, the same expressions in the same
    order, so every array is the general path's to the bit."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        em1_m = np.expm1(-m * c)
        log_p0 = np.log(-np.expm1(-c)) - np.log(-em1_m)
        log_pn = log_p0 - n * c
        p0 = np.exp(log_p0)
        pn = np.exp(log_pn)
        frac = np.expm1(-n * c) / em1_m
        e_c = np.exp(-c)
        lc = e_c * frac
        ls = _ls_nonneg(c, n)
        lq = e_c * _ls_nonneg(c, n - 1.0) * frac if with_lq else None
        lambda_e = lam * (1.0 - pn)
    return KernelResult(p0, pn, lq, lc, ls, lambda_e, ls / lambda_e, lam * pn)


def log_pm(lam: float, mu: float, n: int, m: int) -> float:
    """``ln P_m`` (Eq. 2, M/M/1/N form) for one state, via the mirror for rho > 1."""
    b = float(log_ratio(np.asarray(lam, dtype=np.float64), np.asarray(mu, dtype=np.float64)))
    if b == 0.0:
        return -float(np.log1p(float(n)))
    if b < 0.0:
        b, m = -b, n - m
    log_p0 = float(np.log(-np.expm1(-b)) - np.log(-np.expm1(-(n + 1) * b)))
    return log_p0 - m * b
