# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A full switch's per-port optimiser steps, every port of one class count at once.

solve_many's batched path (models/optimize/pmqecn.py) takes each port's
answer through the projections of solution.py, the floor of problem.py and
the checks of build_solution. Port by port, a full switch's cycle (64 ports
x 8 classes) spent about 4 ms in them, nearly all of it numpy's per-call
cost on 8-element arrays (benchmarks/control_loop.py). Here the ports of one
class count k are the rows of (P, k) arrays, and each function is its
per-port namesake applied to every row, operation for operation: a row's
sums are over the same contiguous k floats in the same order, so each
port's answer is the per-port function's, bit for bit
(tests/models/test_stacked.py). A row the stacked arithmetic cannot take
(non-finite values) goes through the per-port function, which names what is
wrong. solve_many takes this path while models/cycle_speedups.py is on (the
controller's, in the evaluation too), each port alone while it is off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from models.optimize.objective import Evaluation
from models.optimize.problem import (
    _FLOOR_CAP_MARGIN,
    RHO_EPS,
    PmqecnProblem,
    ProblemError,
)
from models.optimize.solution import (
    _C2_SLACK,
    _SUM_SLACK,
    PmqecnSolution,
    build_solution,
    project_lam,
    project_mu,
    shave_factor,
)

FloatArray = npt.NDArray[np.float64]
T = TypeVar("T")
P = ParamSpec("P")
Answer = FloatArray | ProblemError


def by_class_count(problems: Sequence[PmqecnProblem]) -> list[list[int]]:
    """The problems' positions, grouped by class count (one stack each)."""
    groups: dict[int, list[int]] = {}
    for i, problem in enumerate(problems):
        groups.setdefault(problem.k, []).append(i)
    return list(groups.values())


def or_error(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | ProblemError:
    """The per-port function's answer, or the error it names."""
    try:
        return call(*args, **kwargs)
    except ProblemError as exc:
        return exc


def _column(values: Sequence[float]) -> FloatArray:
    return np.array(values, dtype=np.float64)[:, None]


def project_mu_many(problems: Sequence[PmqecnProblem], xs: Sequence[FloatArray]) -> list[Answer]:
    """``project_mu(problem, problem.Gamma * x)`` of each port."""
    out: list[Answer | None] = [None] * len(problems)
    # A row with non-finite values goes to the per-port function, which names it.
    with np.errstate(all="ignore"):
        for at in by_class_count(problems):
            gamma = _column([problems[i].Gamma for i in at])
            mu = gamma * np.array([xs[i] for i in at], dtype=np.float64)
            omega = mu / gamma
            lo = np.array([problems[i].lambdas_array for i in at]) / gamma / (1.0 - RHO_EPS)
            finite = np.asarray(np.isfinite(omega).all(axis=1))
            kept = (omega >= lo).all(axis=1) & (np.abs(omega.sum(axis=1) - 1.0) <= _SUM_SLACK)
            lifted = np.maximum(omega, lo)
            slack = lifted - lo
            slack[slack.sum(axis=1) <= 0.0] = 1.0
            moved = gamma * (
                lo + slack * (1.0 - lo.sum(axis=1))[:, None] / slack.sum(axis=1)[:, None]
            )
            answer = np.where(kept[:, None], mu, moved)
            for row, i in enumerate(at):
                if finite[row]:
                    out[i] = answer[row].copy()
                else:
                    out[i] = or_error(project_mu, problems[i], problems[i].Gamma * xs[i])
    return [a for a in out if a is not None]


def keep_floors(problems: Sequence[PmqecnProblem], mus: Sequence[FloatArray]) -> None:
    """Give each port ``problem.target_floor(mu)`` ahead of its layer 2 and projection.

    Over its cap a port's floor is share_targets' water-filling, here taken
    for all rows one position of the demand order at a time. A row whose mu
    is not finite and positive is left to target_floor, which names it.
    """
    with np.errstate(all="ignore"):
        for at in by_class_count(problems):
            d = np.array([problems[i].lambdas_array for i in at])
            w = np.array([mus[i] for i in at], dtype=np.float64)
            cap = np.array([problems[i].target_cap for i in at])
            floor = d.copy()
            over = np.flatnonzero(d.sum(axis=1) > cap)
            if over.size:
                floor[over] = _water_fill(d[over], w[over], cap[over] * (1.0 - _FLOOR_CAP_MARGIN))
            floor = floor.clip(RHO_EPS * w, (1.0 - RHO_EPS) * w)
            sound = np.asarray((np.isfinite(w) & (w > 0.0)).all(axis=1))
            for row, i in enumerate(at):
                if sound[row]:
                    problems[i].keep_floor(mus[i], floor[row])


def _water_fill(d: FloatArray, w: FloatArray, cap: FloatArray) -> FloatArray:
    """share_targets of each row, every row over its capacity."""
    rows = np.arange(d.shape[0])
    order = np.argsort(d / w, axis=1, kind="stable")
    out = np.empty_like(d)
    room, weight_left = cap.copy(), w.sum(axis=1)
    filling = np.ones(d.shape[0], dtype=bool)  # not yet at the common level
    level = np.zeros(d.shape[0])
    for pos in range(d.shape[1]):
        i = order[:, pos]
        di, wi = d[rows, i], w[rows, i]
        fits = filling & (di * weight_left <= room * wi)
        out[rows[fits], i[fits]] = di[fits]
        room = np.where(fits, room - di, room)
        weight_left = np.where(fits, weight_left - wi, weight_left)
        stops = filling & ~fits
        level[stops] = room[stops] / weight_left[stops]
        filling &= fits
        rest = ~filling
        out[rows[rest], i[rest]] = wi[rest] * level[rest]
    return out


def project_lam_many(
    problems: Sequence[PmqecnProblem],
    mus: Sequence[FloatArray],
    lams: Sequence[FloatArray],
) -> list[Answer]:
    """``project_lam(problem, mu, lam)`` of each port."""
    out: list[Answer | None] = [None] * len(problems)
    # A row with non-finite values goes to the per-port function, which names it.
    with np.errstate(all="ignore"):
        for at in by_class_count(problems):
            mu = np.array([mus[i] for i in at], dtype=np.float64)
            rho = np.array([lams[i] for i in at], dtype=np.float64) / mu
            floors = [or_error(problems[i].target_floor, mus[i]) for i in at]
            sound = np.asarray(np.isfinite(rho).all(axis=1))
            sound &= np.array([not isinstance(f, ProblemError) for f in floors])
            floor = np.array(
                [f if sound[row] else np.zeros(mu.shape[1]) for row, f in enumerate(floors)]
            )
            cap = np.array([problems[i].target_cap for i in at])
            excess = np.maximum(rho.clip(RHO_EPS, 1.0 - RHO_EPS) * mu - floor, 0.0)
            floor_sum = floor.sum(axis=1)
            room = cap - floor_sum
            cut = floor_sum + excess.sum(axis=1) > cap
            excess[cut] *= (room[cut] / excess[cut].sum(axis=1))[:, None]
            lam_c = floor + excess
            total = lam_c.sum(axis=1)
            left = excess.sum(axis=1)
            over = np.flatnonzero(sound & (total > cap) & (left > 0.0))
            while over.size:  # rounding of the scaled sum: a few ulps of the cap
                gaps = zip(total[over] - cap[over], left[over], strict=True)
                factor = [shave_factor(t, e) for t, e in gaps]
                excess[over] *= np.array(factor)[:, None]
                lam_c[over] = floor[over] + excess[over]
                total = lam_c.sum(axis=1)
                left = excess.sum(axis=1)
                over = np.flatnonzero(sound & (total > cap) & (left > 0.0))
            for row, i in enumerate(at):
                if sound[row]:
                    out[i] = lam_c[row]
                else:
                    out[i] = or_error(project_lam, problems[i], mus[i], lams[i])
    return [a for a in out if a is not None]


def build_solutions(
    problems: Sequence[PmqecnProblem],
    mus: Sequence[FloatArray],
    lams: Sequence[FloatArray],
    solver: str,
    statuses: Sequence[str],
    layer1_evs: Sequence[Evaluation],
    final_evs: Sequence[Evaluation],
) -> list[PmqecnSolution | ProblemError]:
    """``build_solution(...)`` of each port, both evaluations given."""
    out: list[PmqecnSolution | ProblemError | None] = [None] * len(problems)
    # A row with non-finite values goes to the per-port function, which names it.
    with np.errstate(all="ignore"):
        for at in by_class_count(problems):
            n_cap = np.array([float(problems[i].N) for i in at])
            gamma = _column([problems[i].Gamma for i in at])
            mu = np.array([mus[i] for i in at], dtype=np.float64)
            lam = np.array([lams[i] for i in at], dtype=np.float64)
            measured = np.array([problems[i].lambdas_array for i in at])
            first = np.array(
                [
                    (float(layer1_evs[i].objective[0]), float(layer1_evs[i].total_queue[0]))
                    for i in at
                ]
            )
            final = np.array(
                [(float(final_evs[i].objective[0]), float(final_evs[i].total_queue[0])) for i in at]
            )
            queues = np.array([final_evs[i].queues[:, 0] for i in at])
            violation = np.maximum(
                np.maximum(0.0, first[:, 1] - n_cap) / n_cap,
                np.maximum(0.0, final[:, 1] - n_cap) / n_cap,
            )
            sound = np.asarray(
                (violation <= _C2_SLACK)
                & (lam > 0.0).all(axis=1)
                & (lam < mu).all(axis=1)
                & (measured < mu).all(axis=1)
                & np.isfinite(queues).all(axis=1)
            )
            omega = mu / gamma
            k_omega_n = _at_least_one_packet_rows(omega * n_cap[:, None])
            k_ls = _at_least_one_packet_rows(queues)
            mu_rows, lam_rows, omega_rows = mu.tolist(), lam.tolist(), omega.tolist()
            for row, i in enumerate(at):
                if not sound[row]:
                    out[i] = or_error(
                        build_solution, problems[i], mus[i], lams[i], solver, statuses[i],
                        layer1_ev=layer1_evs[i], final_ev=final_evs[i],
                    )  # fmt: skip
                    continue
                out[i] = PmqecnSolution(
                    mu=tuple(mu_rows[row]),
                    lam_star=tuple(lam_rows[row]),
                    omega=tuple(omega_rows[row]),
                    k_omega_n_packets=tuple(k_omega_n[row]),
                    k_ls_packets=tuple(k_ls[row]),
                    objective=float(final[row, 0]),
                    layer1_objective=float(first[row, 0]),
                    solver=solver,
                    status=statuses[i],
                )
    return [s for s in out if s is not None]


def _at_least_one_packet_rows(values: FloatArray) -> list[list[int]]:
    """solution._at_least_one_packet of each row (finite values): the same
    float subtraction and ceiling, as ints."""
    ceiled = np.ceil(np.where(np.isfinite(values), values, 0.0) - 1e-9)
    return [[max(1, int(v)) for v in row] for row in ceiled.tolist()]
