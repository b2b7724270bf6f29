# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""M/M/1/N metrics against independent references: the chain itself, high precision, theory."""

from __future__ import annotations

import itertools
import math
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, localcontext

import numpy as np
import pytest

from models.queueing import (
    c_rest,
    jitter,
    mm1n_metrics,
    p_m,
    sojourn_time,
)
from models.queueing.kernel import mm1n_arrays

MU = 3.7  # deliberately not 1, so rate and probability errors cannot hide each other


def chain_distribution(lam: float, mu: float, n: int) -> np.ndarray:
    """Stationary law of the birth-death generator, solved as a linear system."""
    q = np.zeros((n + 1, n + 1))
    for m in range(n):
        q[m, m + 1] = lam
        q[m + 1, m] = mu
    q -= np.diag(q.sum(axis=1))
    # pi Q = 0 has rank n; replace one balance equation by sum(pi) = 1.
    a = q.T.copy()
    a[-1, :] = 1.0
    rhs = np.zeros(n + 1)
    rhs[-1] = 1.0
    return np.linalg.solve(a, rhs)


@pytest.mark.parametrize("n", [1, 2, 7, 50, 200])
@pytest.mark.parametrize("rho", [0.01, 0.3, 0.9, 0.999, 1.0, 1.001, 1.5, 5.0])
def test_matches_birth_death_chain(n: int, rho: float) -> None:
    lam = rho * MU
    pi = chain_distribution(lam, MU, n)
    m = mm1n_metrics(lam, MU, n)
    states = np.arange(n + 1)
    ls = float(states @ pi)
    lq = float(np.maximum(states - 1, 0) @ pi)
    lam_e = lam * (1.0 - pi[-1])
    assert m.p0 == pytest.approx(pi[0], rel=1e-9, abs=1e-13)
    assert m.pn == pytest.approx(pi[-1], rel=1e-9, abs=1e-13)
    assert m.lc == pytest.approx(1.0 - pi[0], rel=1e-9, abs=1e-13)
    assert m.ls == pytest.approx(ls, rel=1e-9, abs=1e-11)
    assert m.lq == pytest.approx(lq, rel=1e-9, abs=1e-11)
    assert m.lambda_e == pytest.approx(lam_e, rel=1e-9)
    assert m.ws == pytest.approx(ls / lam_e, rel=1e-9)
    assert m.n_loss == pytest.approx(lam * pi[-1], rel=1e-9, abs=1e-13)
    for state in {0, 1, n // 2, n}:
        assert p_m(lam, MU, n, state) == pytest.approx(pi[state], rel=1e-9, abs=1e-13)


@pytest.mark.parametrize(("rho", "n"), [(0.2, 5), (0.8, 30), (1.3, 12), (0.99, 200)])
def test_paper_closed_forms(rho: float, n: int) -> None:
    """Eqs. 6-8 as printed (valid for rho != 1) agree with the stable evaluation."""
    lam = rho * MU
    m = mm1n_metrics(lam, MU, n)
    ls = lam / (MU - lam) - (n + 1) * lam ** (n + 1) / (MU ** (n + 1) - lam ** (n + 1))
    ws = 1 / (MU - lam) - n * lam**n / (MU * (MU**n - lam**n))
    loss = lam ** (n + 1) * (MU - lam) / (MU ** (n + 1) - lam ** (n + 1))
    lq = rho / (1 - rho) - (n * rho ** (n + 1) + rho) / (1 - rho ** (n + 1))
    assert m.ls == pytest.approx(ls, rel=1e-9)
    assert m.ws == pytest.approx(ws, rel=1e-9)
    assert m.n_loss == pytest.approx(loss, rel=1e-9)
    assert m.lq == pytest.approx(lq, rel=1e-9)


@pytest.mark.parametrize("n", [1, 3, 100, 10**6])
@pytest.mark.parametrize("rho", [1e-9, 0.5, 1 - 1e-9, 1.0, 1 + 1e-6, 2.0, 50.0])
def test_littles_law(n: int, rho: float) -> None:
    m = mm1n_metrics(rho * MU, MU, n)
    assert m.ls == pytest.approx(m.lambda_e * m.ws, rel=1e-12)
    assert m.lambda_e == pytest.approx(m.lam * (1.0 - m.pn), rel=1e-12)
    assert m.ls == pytest.approx(m.lq + m.lc, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [1, 2, 10, 1000, 10**6])
def test_exact_limit_at_rho_one(n: int) -> None:
    m = mm1n_metrics(MU, MU, n)
    assert m.p0 == pytest.approx(1 / (n + 1), rel=1e-14)
    assert m.pn == pytest.approx(1 / (n + 1), rel=1e-14)
    assert m.ls == pytest.approx(n / 2, rel=1e-14)
    assert p_m(MU, MU, n, n // 2) == pytest.approx(1 / (n + 1), rel=1e-14)


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_continuity_at_rho_one(n: int) -> None:
    at_one = mm1n_metrics(MU, MU, n)
    for rho in (1 - 1e-7, 1 + 1e-7):
        near = mm1n_metrics(rho * MU, MU, n)
        for field in ("p0", "pn", "lq", "lc", "ls", "ws", "lambda_e", "n_loss"):
            assert getattr(near, field) == pytest.approx(getattr(at_one, field), rel=1e-4), field


@pytest.mark.parametrize("n", [10, 10**6])
def test_approach_to_rho_one_is_linear(n: int) -> None:
    """Differences shrink with the step: no jump between the series and the direct branch."""
    ls1 = mm1n_metrics(MU, MU, n).ls
    steps = [1e-5 / n, 1e-7 / n, 1e-9 / n]
    gaps = [abs(mm1n_metrics((1 + h) * MU, MU, n).ls - ls1) for h in steps]
    slope = n * (n + 2) / 12.0  # d L_s / d rho at rho = 1
    for h, gap in zip(steps, gaps, strict=True):
        assert gap == pytest.approx(slope * h, rel=1e-3, abs=1e-9 * n)


def test_series_and_direct_branches_agree_at_the_switch() -> None:
    n = 1000
    for t in (0.1 * (1 - 1e-9), 0.1 * (1 + 1e-9)):
        b = t / (n + 1)
        r = mm1n_arrays(math.exp(-b), 1.0, n)
        reference = decimal_metrics(math.exp(-b), 1.0, n)
        assert float(r.ls) == pytest.approx(reference["ls"], rel=1e-13)


def decimal_metrics(lam: float, mu: float, n: int) -> dict[str, float]:
    """Closed forms in 90-digit decimal: cancellation there costs digits we can spare."""
    ctx = Context(prec=90, Emax=MAX_EMAX, Emin=MIN_EMIN)
    with localcontext(ctx):
        rho = Decimal(lam) / Decimal(mu)
        one = Decimal(1)
        if rho == one:
            p0 = one / (n + 1)
            pn = p0
            ls = Decimal(n) / 2
        else:
            rn = rho**n
            rn1 = rn * rho
            p0 = (one - rho) / (one - rn1)
            pn = p0 * rn
            ls = rho / (one - rho) - (n + 1) * rn1 / (one - rn1)
        lam_e = Decimal(lam) * (one - pn)
        return {
            "p0": float(p0),
            "pn": float(pn),
            "ls": float(ls),
            "lc": float(one - p0),
            "lq": float(ls - (one - p0)),
            "lambda_e": float(lam_e),
            "ws": float(ls / lam_e),
        }


EXTREME_RHOS = [1e-9, 0.5, 1 - 1e-9, 1.0, 1 + 1e-6, 2.0, 50.0]


@pytest.mark.parametrize("rho", EXTREME_RHOS)
def test_extreme_capacity_matches_high_precision(rho: float) -> None:
    n = 10**6
    m = mm1n_metrics(rho, 1.0, n)
    ref = decimal_metrics(rho, 1.0, n)
    for field, value in ref.items():
        assert getattr(m, field) == pytest.approx(value, rel=1e-9, abs=1e-300), field


def test_extreme_capacity_is_finite_bounded_and_monotone() -> None:
    n = 10**6
    rows = [mm1n_metrics(rho * MU, MU, n) for rho in EXTREME_RHOS]
    for m in rows:
        values = [m.p0, m.pn, m.lq, m.lc, m.ls, m.lambda_e, m.ws, m.n_loss]
        assert all(math.isfinite(v) for v in values)
        assert 0.0 <= m.p0 <= 1.0 and 0.0 <= m.pn <= 1.0 and 0.0 <= m.lc <= 1.0
        assert 0.0 <= m.lq <= m.ls <= n
        assert 0.0 < m.lambda_e <= min(m.lam, MU)
    # With mu fixed, more load means fuller queues, more waiting, more loss.
    for field, sign in [("p0", -1), ("pn", 1), ("ls", 1), ("lq", 1), ("lc", 1), ("ws", 1)]:
        seq = [sign * getattr(m, field) for m in rows]
        assert all(a <= b for a, b in itertools.pairwise(seq)), field
    lam_e = [m.lambda_e for m in rows]
    assert all(a <= b for a, b in itertools.pairwise(lam_e))  # saturates at mu
    # Mirror symmetry of the chain: L_s(rho) + L_s(1/rho) = N.
    for rho in (2.0, 50.0, 1 + 1e-6):
        assert mm1n_metrics(rho, 1.0, n).ls + mm1n_metrics(1.0, rho, n).ls == pytest.approx(n)


def test_jitter_and_c_rest() -> None:
    ws = sojourn_time(2.0, MU, 20)
    assert jitter(ws + 0.25, 2.0, MU, 20) == pytest.approx(0.25)
    assert jitter(0.0, 2.0, MU, 20) == pytest.approx(ws)
    queues = [(1.0, 2.0), (2.0, 3.0)]
    expected = 3 * 10.0 - sum(mm1n_metrics(lam, mu, 20).ls for lam, mu in queues)
    assert c_rest(3, 10.0, queues, 20) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"lam": 0.0}, "lam"),
        ({"lam": -1.0}, "lam"),
        ({"lam": float("nan")}, "lam"),
        ({"lam": float("inf")}, "lam"),
        ({"lam": "1"}, "lam"),
        ({"lam": True}, "lam"),
        ({"mu": 0.0}, "mu"),
        ({"mu": float("nan")}, "mu"),
        ({"mu": -2}, "mu"),
        ({"N": 0}, "N"),
        ({"N": 2.5}, "N"),
        ({"N": True}, "N"),
        ({"N": -3}, "N"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"lam": 1.0, "mu": 2.0, "N": 10} | kwargs
    with pytest.raises(ValueError, match=rf"^{name} "):
        mm1n_metrics(**args)  # type: ignore[arg-type]


def test_bad_state_and_measurement() -> None:
    with pytest.raises(ValueError, match=r"^m "):
        p_m(1.0, 2.0, 10, 11)
    with pytest.raises(ValueError, match=r"^m "):
        p_m(1.0, 2.0, 10, -1)
    with pytest.raises(ValueError, match=r"^w_measured "):
        jitter(float("nan"), 1.0, 2.0, 10)
    with pytest.raises(ValueError, match=r"^queues\[1\]\.mu "):
        c_rest(2, 5.0, [(1.0, 2.0), (1.0, 0.0)], 10)
    with pytest.raises(ValueError, match=r"^n "):
        c_rest(0, 5.0, [], 10)


def test_the_fast_kernel_is_the_reference_to_the_bit() -> None:
    """The control loop's kernel (models/cycle_speedups.py on) skips the
    L_s series where no element needs it, L_q where it is not asked for,
    and every rho >= 1 branch when all rho < 1;
    every other array is the reference's, bit for bit, on rates on both
    sides of rho = 1, at it, and close enough to it that the series runs
    for some elements of a call and not others."""
    from models import cycle_speedups

    rng = np.random.default_rng(7)
    lam = rng.uniform(1e2, 1e6, (3, 9))
    far = lam * np.exp(rng.choice([-2.0, -0.1, 0.3, 4.0], (3, 9)))
    mixed = lam * np.exp(rng.choice([-2.0, -0.1, -1e-6, 0.0, 1e-9, 1e-5, 0.3, 4.0], (3, 9)))
    # Every rho < 1 (the optimiser's points: a path of its own), far from 1
    # and so close that log_ratio's log1p serves every element.
    below = lam * np.exp(rng.choice([1e-9, 1e-5, 0.3, 4.0], (3, 9)))
    close = lam * np.exp(rng.choice([1e-9, 1e-5, 0.01, 0.3], (3, 9)))
    sizes = (1.0, 7.0, 1000.0, np.array([[2.0], [50.0], [4000.0]]))
    for mu, n in itertools.product((far, mixed, below, close), sizes):
        fast = mm1n_arrays(lam, mu, n, with_lq=False)
        full = mm1n_arrays(lam, mu, n)
        with cycle_speedups.disabled():
            ref = mm1n_arrays(lam, mu, n)
        for name in ("p0", "pn", "lc", "ls", "lambda_e", "ws", "n_loss"):
            for got in (getattr(fast, name), getattr(full, name)):
                assert getattr(ref, name).tobytes() == got.tobytes(), name
        assert full.lq is not None and ref.lq is not None and fast.lq is None
        assert full.lq.tobytes() == ref.lq.tobytes()
