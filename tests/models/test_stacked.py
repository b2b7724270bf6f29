# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""models/optimize/stacked.py: a switch's ports at once give each port's own
answer bit for bit.

The control loop's speed-up path projects, floors and checks every port of
one class count as the rows of one array; the reference path does each port
alone (models/optimize/solution.py, problem.py). A row must come out as its
port's per-port answer exactly, not to a tolerance: the thresholds and
targets the controller writes are these numbers, rounded, and the two paths
are held to the same writes (tests/controller/test_cycle_speedups.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from models import cycle_speedups
from models.optimize import PmqecnProblem, ProblemError, solve_many
from models.optimize.objective import evaluate_many
from models.optimize.solution import build_solution, project_lam, project_mu
from models.optimize.stacked import (
    build_solutions,
    keep_floors,
    project_lam_many,
    project_mu_many,
)

KINDS = "ABC"


def port(rng: np.random.Generator, k: int, load: float, **extra: Any) -> PmqecnProblem:
    gamma = float(rng.choice([1.25e6, 8.3e6, 3.1e7]))
    lam = rng.uniform(0.05, 2.0, k)
    lam *= load * gamma / lam.sum()
    kwargs: dict[str, Any] = {
        "N": int(rng.choice([12, 200, 1000])),
        "Lambda": 1.2 * gamma,
        "Gamma": gamma,
        "C": gamma,
        "n": 1,
        "lambdas": lam.tolist(),
        "W": rng.uniform(2e-6, 15e-6, k).tolist(),
        "kinds": [KINDS[i % 3] for i in range(k)],
        "weights": [(1.0, 1.0)] * k,
        "target_utilisation": float(rng.choice([0.6, 0.9])),
        "backlog_drain": float(rng.choice([0.0, 0.3 * gamma])),
    }
    return PmqecnProblem(**(kwargs | extra))


def ports(seed: int, count: int = 40) -> list[PmqecnProblem]:
    """Class counts 1-9 mixed, loads under and well over the target (a draw
    too heavy for its buffer is drawn again)."""
    rng = np.random.default_rng(seed)
    out: list[PmqecnProblem] = []
    while len(out) < count:
        try:
            out.append(port(rng, int(rng.integers(1, 10)), float(rng.uniform(0.2, 0.97))))
        except ProblemError:
            continue
    return out


def splits(problems: list[PmqecnProblem], seed: int) -> list[np.ndarray]:
    """Layer-1-like service shares: some already feasible, some below a
    class's arrival rate or not summing to 1 (projection has work to do)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in problems:
        lam = p.lambdas_array / p.Gamma
        x = lam + rng.uniform(0.0, 1.0, p.k) * (1.0 - lam.sum()) / p.k
        if rng.random() < 0.5:
            x *= rng.uniform(0.9, 1.1)
            x[int(rng.integers(p.k))] = lam.min() * 0.5
        out.append(x)
    return out


def same(a: np.ndarray | ProblemError, b: np.ndarray | ProblemError) -> None:
    if isinstance(b, ProblemError):
        assert isinstance(a, type(b)) and str(a) == str(b)
    else:
        assert not isinstance(a, ProblemError)
        assert a.tobytes() == b.tobytes(), (a, b)


def per_port_mu(p: PmqecnProblem, x: np.ndarray) -> np.ndarray | ProblemError:
    try:
        return project_mu(p, p.Gamma * x)
    except ProblemError as exc:
        return exc


@pytest.mark.parametrize("seed", range(4))
def test_projected_service_rates_are_each_ports_own(seed: int) -> None:
    problems = ports(seed)
    xs = splits(problems, seed)
    xs[3] = np.full(problems[3].k, np.nan)  # a solver's non-finite answer
    stacked = project_mu_many(problems, xs)
    for p, x, got in zip(problems, xs, stacked, strict=True):
        same(got, per_port_mu(p, x))
    assert isinstance(stacked[3], ProblemError) and "non-finite" in str(stacked[3])


@pytest.mark.parametrize("seed", range(4))
def test_floors_are_each_ports_own(seed: int) -> None:
    problems = ports(seed)
    mus = [per_port_mu(p, x) for p, x in zip(problems, splits(problems, seed), strict=True)]
    assert not any(isinstance(m, ProblemError) for m in mus)
    expected = [p._target_floor(m) for p, m in zip(problems, mus, strict=True)]
    over = sum(float(p.lambdas_array.sum()) > p.target_cap for p in problems)
    assert 5 <= over < len(problems), "both the water-filling and the measured rates are covered"
    keep_floors(problems, mus)  # type: ignore[arg-type]
    for p, m, want in zip(problems, mus, expected, strict=True):
        assert p.target_floor(m).tobytes() == want.tobytes()  # type: ignore[arg-type]


def test_a_floor_ties_and_a_single_class_port_fill_as_alone() -> None:
    """Equal demand per weight (argsort's stable order decides) and k = 1."""
    tie = PmqecnProblem(
        N=1000, Lambda=1e6, Gamma=1e6, C=1e6, n=1, lambdas=[2e5, 2e5, 4e5, 1e5],
        W=[1e-6] * 4, kinds=list("ABCA"), weights=[(1.0, 1.0)] * 4, target_utilisation=0.5,
    )  # fmt: skip
    one = PmqecnProblem(
        N=1000, Lambda=1e6, Gamma=1e6, C=1e6, n=1, lambdas=[7e5], W=[1e-6], kinds=["C"],
        weights=[(1.0, 1.0)], target_utilisation=0.5,
    )  # fmt: skip
    mus = [np.array([2.5e5, 2.5e5, 2.5e5, 2.5e5]) * 1.0, np.array([1e6])]
    mus[0][2] = 3.5e5
    mus[0][3] = 1.5e5
    expected = [tie._target_floor(mus[0]), one._target_floor(mus[1])]
    keep_floors([tie, one], mus)
    assert tie.target_floor(mus[0]).tobytes() == expected[0].tobytes()
    assert one.target_floor(mus[1]).tobytes() == expected[1].tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_projected_targets_are_each_ports_own(seed: int) -> None:
    problems = ports(seed)
    mus = [per_port_mu(p, x) for p, x in zip(problems, splits(problems, seed), strict=True)]
    rng = np.random.default_rng(seed + 100)
    # Layer 2's rho: inside, at and past both bounds; one non-finite.
    lams = [m * rng.uniform(-0.1, 1.1, m.size) for m in mus]  # type: ignore[union-attr]
    lams[5] = np.full_like(lams[5], np.inf)
    expected = []
    for p, m, lam in zip(problems, mus, lams, strict=True):
        try:
            expected.append(project_lam(p, m, lam))  # type: ignore[arg-type]
        except ProblemError as exc:
            expected.append(exc)
    got = project_lam_many(problems, mus, lams)  # type: ignore[arg-type]
    for a, b in zip(got, expected, strict=True):
        same(a, b)
    assert isinstance(got[5], ProblemError)
    capped = [p for p, g in zip(problems, got, strict=True) if not isinstance(g, ProblemError)]
    assert all(
        float(g.sum()) <= p.target_cap  # type: ignore[union-attr]
        for p, g in zip(capped, [g for g in got if not isinstance(g, ProblemError)], strict=True)
    )


@pytest.mark.parametrize("seed", range(3))
def test_built_answers_are_each_ports_own(seed: int) -> None:
    problems = ports(seed)
    mus = [per_port_mu(p, x) for p, x in zip(problems, splits(problems, seed), strict=True)]
    lams = [project_lam(p, m, 0.5 * m) for p, m in zip(problems, mus, strict=True)]  # type: ignore[arg-type]
    # One answer over its buffer and one breaking lambda < mu: both refused as alone.
    lams[2] = mus[2] * (1.0 - 1e-9)  # type: ignore[operator]
    first = evaluate_many(problems, mus, [p.lambdas_array for p in problems])  # type: ignore[arg-type]
    final = evaluate_many(problems, mus, lams)  # type: ignore[arg-type]
    statuses = [f"status {i}" for i in range(len(problems))]
    got = build_solutions(problems, mus, lams, "solver", statuses, first, final)  # type: ignore[arg-type]
    refused = 0
    for i, p in enumerate(problems):
        try:
            want = build_solution(
                p,
                mus[i],
                lams[i],
                "solver",
                statuses[i],
                layer1_ev=first[i],
                final_ev=final[i],  # type: ignore[arg-type]
            )
        except ProblemError as exc:
            refused += 1
            assert isinstance(got[i], ProblemError) and str(got[i]) == str(exc)
            continue
        assert got[i] == want
        assert all(isinstance(k, int) for k in got[i].k_ls_packets)  # type: ignore[union-attr]
    assert refused >= 1


@pytest.mark.parametrize("seed", range(2))
def test_a_switch_gets_the_same_answers_on_both_paths(seed: int) -> None:
    """Through solve_many: the speed-up path and the reference give equal answers."""
    problems = ports(seed, 24)
    # A structure's first layer-2 solve compiles it and runs alone; later ones
    # join the block solve, whose answers differ within the solver's tolerance.
    solve_many(problems)
    fast = solve_many(problems)
    with cycle_speedups.disabled():
        reference = solve_many(problems)
    assert fast == reference
    assert any("batched" in getattr(a, "status", "") for a in fast)


def test_a_sum_over_the_cap_by_rounding_is_shaved_in_a_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Targets whose excess above the floor is ~1e-7 of the cap and whose
    scaled sum rounds over it: shaving 4 eps of the excess a turn took ~10^8
    turns (a control cycle hung); both paths now take one."""
    from models.optimize import solution

    turns: list[float] = []
    shave = solution.shave_factor

    def counted(over: float, excess: float) -> float:
        turns.append(over / excess)
        return shave(over, excess)

    monkeypatch.setattr(solution, "shave_factor", counted)
    problems = ports(0)
    mus = [per_port_mu(p, x) for p, x in zip(problems, splits(problems, 0), strict=True)]
    lams = [m * np.random.default_rng(100).uniform(-0.1, 1.1, m.size) for m in mus]  # type: ignore[union-attr]
    for p, m, lam in zip(problems, mus, lams, strict=True):
        project_lam(p, m, lam)  # type: ignore[arg-type]
    assert max(turns) > 1e-8, "a tiny excess was shaved"
    assert len(turns) <= 3
