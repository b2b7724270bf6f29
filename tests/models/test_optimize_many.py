# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""solve_many: every port solved together gives each port solve()'s answer.

The ports of a switch are independent problems; solve_many solves layer 1
through one multiplier per port (every port at once) and each layer's
remaining one-solve convex problems as one block-diagonal problem, evaluates the
exact model for all ports in one call, and sends a port that needs the CCP or
the SLSQP polish down solve()'s own path. What must not change is the answer.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import pytest

from models.optimize import PmqecnProblem, ProblemError, SolverError, solve, solve_many
from models.optimize.objective import evaluate, evaluate_many

KINDS = "ABC"


def port(rng: np.random.Generator, k: int, load: float, **extra: Any) -> PmqecnProblem:
    """k classes cycling through A, B, C on a 10 Gb/s port of 1000-byte packets."""
    gamma = 1.25e6
    lam = rng.uniform(0.5, 1.5, k)
    lam *= load * gamma / lam.sum()
    kwargs: dict[str, Any] = {
        "N": 1000,
        "Lambda": 1.5e6,
        "Gamma": gamma,
        "C": gamma,
        "n": 1,
        "lambdas": list(lam),
        "W": list(rng.uniform(2e-6, 15e-6, k)),
        "kinds": [KINDS[i % 3] for i in range(k)],
        "weights": [(1.0, 1.0)] * k,
    }
    return PmqecnProblem(**(kwargs | extra))


def mixed_ports(seed: int) -> list[PmqecnProblem]:
    """Ports of every kind solve() handles differently, shuffled."""
    rng = np.random.default_rng(seed)
    ports = [port(rng, int(rng.integers(2, 9)), float(rng.uniform(0.3, 0.55))) for _ in range(12)]
    ports += [port(rng, 8, 0.95) for _ in range(3)]  # over the cap: layer 2 is the floor
    ports += [port(rng, 3, 0.4, weights=[(1.0, 1.0), (0.2, 3.0), (1.0, 1.0)])]  # B: b > a, CCP
    ports += [port(rng, 3, 0.5, N=12, target_utilisation=0.9)]  # small N: the polish runs
    ports += [port(rng, 4, 0.5, target_utilisation=0.9)]  # under the cap: layer 2 solves
    order = rng.permutation(len(ports))
    return [ports[i] for i in order]


@pytest.mark.parametrize("seed", range(3))
def test_every_port_gets_solves_answer(seed: int) -> None:
    ports = mixed_ports(seed)
    # solve() first: a structure's first solve compiles it (always alone), and
    # only compiled structures can join the block solve.
    answers = [solve(problem) for problem in ports]
    together = solve_many(ports)
    assert len(together) == len(ports)
    paths = set()
    for alone, many in zip(answers, together, strict=True):
        assert not isinstance(many, ProblemError)
        np.testing.assert_allclose(many.mu, alone.mu, rtol=1e-5)
        np.testing.assert_allclose(many.lam_star, alone.lam_star, rtol=1e-5)
        # Layer 1 of solve_many is the multiplier search, solve()'s the conic
        # solver: both the stand-in's optimum, to ~1e-11 of its value
        # (tests/models/test_layer1_dual.py). A floor-pinned layer 2 carries
        # that difference into F amplified, to ~5e-7 at 95 % load.
        assert many.objective == pytest.approx(alone.objective, rel=2e-6)
        assert many.k_ls_packets == alone.k_ls_packets
        assert many.k_omega_n_packets == alone.k_omega_n_packets
        assert many.solver == alone.solver
        paths.add("batched" if "batched" in many.status else "alone")
    # Both paths were taken: the test covers the block solve and the fallback.
    assert paths == {"batched", "alone"}


@pytest.mark.parametrize("stacked", [True, False], ids=["stacked", "port-by-port"])
def test_a_failing_port_gets_its_error_and_the_others_their_answers(
    monkeypatch: pytest.MonkeyPatch, stacked: bool
) -> None:
    """A solver's non-finite layer-1 answer for one port: that port gets
    solve()'s error, the others their answers, on both projection paths
    (models/optimize/stacked.py, or each port's own)."""
    import dataclasses

    import models.optimize.pmqecn as pmqecn
    from models import cycle_speedups

    rng = np.random.default_rng(7)
    good = [port(rng, 3, 0.5), port(rng, 5, 0.4)]
    bad = port(rng, 3, 0.5)
    one, many = pmqecn.solve_layer1, pmqecn.solve_layer1_many

    def broken(result: Any) -> Any:
        return dataclasses.replace(result, x=np.full_like(result.x, np.nan))

    def one_nan(problem: PmqecnProblem) -> Any:
        return broken(one(problem)) if problem is bad else one(problem)

    def many_nan(problems: list[PmqecnProblem]) -> Any:
        return [broken(r) if p is bad else r for p, r in zip(problems, many(problems), strict=True)]

    monkeypatch.setattr(pmqecn, "solve_layer1", one_nan)
    monkeypatch.setattr(pmqecn, "solve_layer1_many", many_nan)
    with pytest.raises(SolverError) as alone:
        solve(bad)
    assert "non-finite" in str(alone.value)
    with contextlib.nullcontext() if stacked else cycle_speedups.disabled():
        together = solve_many([good[0], bad, good[1]])
    assert isinstance(together[1], SolverError)
    assert str(together[1]) == str(alone.value)
    for problem, answer in zip(good, (together[0], together[2]), strict=True):
        assert not isinstance(answer, ProblemError)
        np.testing.assert_allclose(answer.lam_star, solve(problem).lam_star, rtol=1e-5)


def test_no_ports_no_answers() -> None:
    assert solve_many([]) == []
    assert evaluate_many([], [], []) == []


def test_evaluate_many_is_each_ports_evaluate() -> None:
    ports = mixed_ports(1)
    rng = np.random.default_rng(3)
    mus = [p.Gamma * rng.dirichlet(np.ones(p.k)) + p.lambdas_array for p in ports]
    mus = [mu * p.Gamma / mu.sum() for p, mu in zip(ports, mus, strict=True)]
    lams = [p.lambdas_array * rng.uniform(0.5, 1.0, p.k) for p in ports]
    for p, mu, lam, ev in zip(ports, mus, lams, evaluate_many(ports, mus, lams), strict=True):
        one = evaluate(p, mu, lam)
        for field in ("objective", "total_queue", "throughput", "smooth", "deviation", "queues"):
            np.testing.assert_allclose(getattr(ev, field), getattr(one, field), rtol=1e-12)
        assert math.isfinite(float(ev.objective[0]))


def test_a_conic_failure_inside_the_batch_falls_back_to_each_ports_own_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A port whose conic solve fails raises SolverError in solve(); inside a
    batch that must not take the other ports' answers with it."""
    import models.optimize.pmqecn as pmqecn

    rng = np.random.default_rng(11)
    ports = [port(rng, 3, 0.5), port(rng, 4, 0.4)]
    answers = [solve(p) for p in ports]

    def failing(problems: list[PmqecnProblem]) -> list[Any]:
        raise SolverError("CLARABEL failed: status 'infeasible'")

    monkeypatch.setattr(pmqecn, "solve_layer1_many", failing)
    together = solve_many(ports)
    for alone, many in zip(answers, together, strict=True):
        assert not isinstance(many, ProblemError)
        assert many.lam_star == alone.lam_star  # the per-port path itself
