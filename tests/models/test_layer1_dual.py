# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Layer 1 through its multiplier (models/optimize/layer1_dual.py) is the conic layer 1's optimum.

solve_many answers most ports' layer 1 by a root search on one multiplier per
port instead of the conic solver. These tests hold it to the same problem:
the value of the compiled cvxpy stand-in at its answer is never above the
conic answer's, no exchange of service between two classes lowers it, it
agrees with the conic answer, and the ports it cannot answer (a CCP jitter
term, a class without a delay weight, a binding queue constraint) are left to the
conic solver, whose answer solve_layer1_many then gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from models.optimize import PmqecnProblem, ProblemError
from models.optimize import surrogate as sg
from models.optimize.layer1_dual import spare_shares

GAMMA = 1.25e6


def port(rng: np.random.Generator, kinds: str, load: float, **extra: Any) -> PmqecnProblem:
    k = len(kinds)
    lam = rng.uniform(0.3, 1.7, k)
    lam *= load * GAMMA / lam.sum()
    kwargs: dict[str, Any] = {
        "N": 1000, "Lambda": 1.5 * GAMMA, "Gamma": GAMMA, "C": GAMMA, "n": 1,
        "lambdas": list(lam), "W": list(rng.uniform(2e-6, 15e-6, k)), "kinds": list(kinds),
        "weights": [(1.0, 1.0)] * k,
    }  # fmt: skip
    return PmqecnProblem(**(kwargs | extra))


def ports(seed: int) -> list[PmqecnProblem]:
    """Every term the multiplier path handles, over light to heavy load."""
    rng = np.random.default_rng(seed)
    out = [port(rng, "ABCABCAB", float(rng.uniform(0.2, 0.97))) for _ in range(10)]
    out += [port(rng, "AC", 0.6), port(rng, "B", 0.5, weights=[(2.0, 1.0)]), port(rng, "CCC", 0.9)]
    # a > b: both pieces of the exact jitter term have a 1/s part.
    out += [port(rng, "ABB", 0.7, weights=[(1.0, 1.0), (2.0, 0.5), (3.0, 1.0)])]
    # The measured delay far from M/M/1's, on either side: answers on each piece.
    out += [port(rng, "BBB", 0.6, W=[1e-7, 1e-3, 5e-6], weights=[(2.0, 1.0)] * 3)]
    # A small buffer at high load: class C's rho^N term is felt.
    out += [port(rng, "ACB", 0.85, N=40), port(rng, "CC", 0.9, N=60)]
    return out


def stand_in(problem: PmqecnProblem, s: np.ndarray) -> float:
    """Layer 1's compiled cvxpy objective at spare shares s."""
    job = sg._layer1_job(problem)
    t = job.template
    for name, p in t.params.items():
        p.value = job.values[name]
    t.var.value = s
    assert t.problem is not None
    return float(t.problem.objective.value)


def conic(problem: PmqecnProblem) -> np.ndarray:
    return sg.solve_layer1(problem).x - problem.lambdas_array / problem.Gamma


def answers(problems: list[PmqecnProblem]) -> list[np.ndarray | None]:
    """Each port's multiplier answer, found alone (a stack of one)."""
    out = []
    for problem in problems:
        st = sg._Structure.of(problem)
        [(shares, ok)] = spare_shares([(st, sg._stacked_layer1_values(st, [problem]))])
        out.append(shares[0] if ok[0] else None)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_the_multiplier_answer_is_the_conic_optimum(seed: int) -> None:
    problems = ports(seed)
    for problem, s in zip(problems, answers(problems), strict=True):
        assert s is not None, problem
        lam = problem.lambdas_array / problem.Gamma
        assert s.sum() == pytest.approx(1.0 - lam.sum(), rel=1e-12)
        assert np.all(s > 0.0)
        assert float(np.sum(lam / s)) <= problem.N
        ref = conic(problem)
        value, ref_value = stand_in(problem, s), stand_in(problem, ref * s.sum() / ref.sum())
        # Never worse than the conic solver's answer, beyond rounding.
        assert value <= ref_value + 1e-12 * abs(ref_value)
        np.testing.assert_allclose(s + lam, ref + lam, rtol=2e-5)


@pytest.mark.parametrize("seed", range(3))
def test_no_exchange_between_two_classes_lowers_the_value(seed: int) -> None:
    """The optimality condition itself: moving a little service from any
    class to any other (the sum stays the spare) never helps."""
    problems = ports(seed)
    for problem, s in zip(problems, answers(problems), strict=True):
        assert s is not None
        value = stand_in(problem, s)
        for i in range(s.size):
            for j in range(s.size):
                if i == j:
                    continue
                moved = s.copy()
                eps = 1e-5 * min(s[i], s[j])
                moved[i] += eps
                moved[j] -= eps
                assert stand_in(problem, moved) >= value - 1e-13 * abs(value), (problem, i, j)


def test_the_ports_it_cannot_answer_go_to_the_conic_solver() -> None:
    rng = np.random.default_rng(5)
    ccp = port(rng, "ABC", 0.5, weights=[(1.0, 1.0), (0.2, 3.0), (1.0, 1.0)])  # b > a in class B
    # No delay weight for class A: its term is linear, the split not unique.
    idle = port(rng, "ABC", 0.5, weights=[(0.0, 1.0), (1.0, 1.0), (1.0, 1.0)])
    # Binding queue constraint: the delay weights favour class 0 so much that,
    # unconstrained, the split would queue ~90 packets; the least total queue
    # (equal shares here) is 36, so N = 60 is feasible and binds.
    tight = port(
        rng, "AAAA", 0.9, N=60, lambdas=[0.225 * GAMMA] * 4,
        weights=[(10.0, 1.0), (0.1, 1.0), (0.1, 1.0), (0.1, 1.0)],
    )  # fmt: skip
    # Only B classes with a = b: their terms are linear above the kink, so
    # the multiplier alone does not fix the split.
    flat = port(rng, "BB", 0.5)
    free = port(rng, "ABC", 0.5)
    problems = [ccp, idle, tight, flat, free]
    shares = answers(problems)
    assert [s is None for s in shares] == [True, True, True, True, False]
    results = sg.solve_layer1_many(problems)
    for problem, result in zip(problems[:4], results[:4], strict=True):
        assert "multiplier" not in result.status
        np.testing.assert_allclose(result.x, sg.solve_layer1(problem).x, rtol=1e-6)
    assert "multiplier" in results[4].status
    # The binding port's conic answer does sit on the queue constraint.
    lam = tight.lambdas_array / tight.Gamma
    assert float(np.sum(lam / (results[2].x - lam))) == pytest.approx(tight.N, rel=1e-6)


def test_ports_stacked_get_the_answers_they_get_alone() -> None:
    """solve_layer1_many stacks every port of a structure; each port's search
    is its own, so stacking must not move any answer beyond rounding, nor a port the
    multiplier cannot answer take its stack-mates to the conic solver."""
    rng = np.random.default_rng(9)
    problems = [port(rng, "ABCABCAB", float(rng.uniform(0.2, 0.97))) for _ in range(12)]
    problems += ports(0)
    problems.insert(5, port(rng, "ABC", 0.5, weights=[(0.0, 1.0), (1.0, 1.0), (1.0, 1.0)]))
    alone = answers(problems)
    results = sg.solve_layer1_many(problems)
    for problem, s, result in zip(problems, alone, results, strict=True):
        lam = problem.lambdas_array / problem.Gamma
        if s is None:
            assert "multiplier" not in result.status
        else:
            assert "multiplier" in result.status
            # (Sums over a stack's rows may round differently: ~1 ulp.)
            np.testing.assert_allclose(result.x, s + lam, rtol=1e-13)
    assert sum(s is None for s in alone) == 1


def test_no_ports() -> None:
    assert spare_shares([]) == []
    assert sg.solve_layer1_many([]) == []


def test_a_loss_share_that_has_not_settled_sends_its_port_to_the_conic_solver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The outer sum can look right while a class C share is still moving;
    such a port must not be answered from it."""
    import models.optimize.layer1_dual as dual

    rng = np.random.default_rng(13)
    with_loss, without = port(rng, "ABC", 0.6), port(rng, "AB", 0.6)
    monkeypatch.setattr(dual, "_LOSS_MAX_ITER", 0)
    shares = answers([with_loss, without])
    assert shares[0] is None and shares[1] is not None


@st.composite
def any_port(draw: st.DrawFn) -> PmqecnProblem:
    """Any port PmqecnProblem accepts: 1-8 classes of any kind and weights,
    light to nearly full, small to large buffers, delays far from M/M/1's."""
    k = draw(st.integers(1, 8))
    kinds = "".join(draw(st.sampled_from("ABC")) for _ in range(k))
    load = draw(st.floats(0.05, 0.98))
    shares = np.array([draw(st.floats(0.05, 1.0)) for _ in range(k)])
    delay, qos = st.sampled_from([0.3, 1.0, 4.0]), st.sampled_from([0.0, 0.5, 1.0, 2.0])
    weights = [(draw(delay), draw(qos)) for _ in range(k)]
    if draw(st.integers(0, 3)) == 0:  # now and then a class without a delay weight
        weights[0] = (0.0, weights[0][1])
    try:
        return PmqecnProblem(
            N=draw(st.sampled_from([8, 40, 200, 1000, 5000])), Lambda=1.5 * GAMMA, Gamma=GAMMA,
            C=GAMMA, n=1, lambdas=list(shares * load * GAMMA / shares.sum()),
            W=[draw(st.sampled_from([1e-7, 2e-6, 1e-5, 1e-3])) for _ in range(k)],
            kinds=list(kinds), weights=weights,
        )  # fmt: skip
    except ProblemError:
        assume(False)
        raise


@given(problem=any_port())
def test_any_port_the_multiplier_answers_is_answered_at_the_conic_optimum(
    problem: PmqecnProblem,
) -> None:
    """Wherever the multiplier path answers, its value on the stand-in is
    not above the conic solver's; where it does not, solve_layer1_many falls
    back to that solver."""
    (s,) = answers([problem])
    try:
        ref = conic(problem)
    except ProblemError:
        assume(False)
        raise
    if s is None:
        (result,) = sg.solve_layer1_many([problem])
        assert "multiplier" not in result.status
        return
    lam = problem.lambdas_array / problem.Gamma
    assert s.sum() == pytest.approx(1.0 - lam.sum(), rel=1e-11)
    assert np.all(s > 0.0) and float(np.sum(lam / s)) <= problem.N
    ref_value = stand_in(problem, ref * s.sum() / ref.sum())
    assert stand_in(problem, s) <= ref_value + 1e-9 * max(1.0, abs(ref_value))
