# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""From one interval's measurements to the optimiser's answer, per egress port.

Classes that share an egress port (`classes[].port`) form one M/M/1/N
system of the paper; each port is solved on its own. A class that sent
nothing this interval has no lambda_i to optimise and keeps its state.

A port the model cannot describe (overloaded: sum(lambda) >= Gamma, or
queues longer than N at the best split) is exactly when the senders must
slow down, so it is not skipped: its classes get lambda_i* = their weighted
max-min share of u Gamma (u = optimizer.target_utilisation, weights the
classes' current scheduling weights), the same rule the optimiser's floor
follows (models.optimize.share_targets); K_i and weights stay as they are
until the model applies again.  Either way a standing queue (the classes'
backlogs, see measure.backlog_packets) that the 1 - u headroom cannot clear
within one interval lowers the port's total
(models.optimize.problem.port_target).
"""

from __future__ import annotations

import atexit
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from models.optimize import (
    PmqecnProblem,
    PmqecnSolution,
    ProblemError,
    share_targets,
    solve_many,
)
from models.optimize.parallel import Answer, ParallelSolver
from models.optimize.problem import port_target

from .config import PmqecnConfig

# One pool per process count, shared by every app in this process (a fleet's
# switches, the app a reload builds): helper processes outlive any one app.
_POOLS: dict[int, ParallelSolver] = {}


def _port_solver(processes: int) -> Callable[[Sequence[PmqecnProblem]], list[Answer]]:
    if processes == 1:
        return solve_many
    if not _POOLS:
        # Stopped before the interpreter tears down the executor's pipes (left
        # to itself its exit hook can write to one already closed).
        atexit.register(_close_pools)
    return _POOLS.setdefault(processes, ParallelSolver(processes))


def _close_pools() -> None:
    for pool in _POOLS.values():
        pool.close(wait=True)
    _POOLS.clear()


class SolverRefused(Exception):
    """The measurements make no meaningful problem (e.g. overload); why is in the message."""


@dataclass(frozen=True)
class SolverResult:
    omega: dict[int, float]
    k_packets: dict[int, float]
    lambda_star: dict[int, float]
    method: str


def solve_for(
    config: PmqecnConfig, samples: Sequence[object], weights: Mapping[int, int] | None = None
) -> SolverResult:
    """``weights``: each class's current scheduling weight (default: the
    config's), which splits an overloaded port's capacity."""
    opt = config.optimizer
    by_id = {c.id: c for c in config.classes}
    groups: dict[int | None, list[tuple[int, float, float]]] = defaultdict(list)
    backlog: dict[int, float] = {}
    for s in samples:
        cid, rate, sojourn_ns = s.class_id, s.rate_pps, s.mean_sojourn_ns  # type: ignore[attr-defined]
        # Little's law where the sample carries no estimate of its own.
        backlog[cid] = getattr(s, "backlog_packets", rate * sojourn_ns * 1e-9)
        if rate > 0:
            groups[by_id[cid].port].append((cid, rate, sojourn_ns))
    omega: dict[int, float] = {}
    k_packets: dict[int, float] = {}
    lambda_star: dict[int, float] = {}
    methods = set()
    port_rate = {ps.port: ps.service_rate_pps for ps in config.ports if ps.service_rate_pps}
    refusals = []
    # Every port's problem first, then one batched solve (models.optimize.solve_many):
    # the ports are independent, and solving them together is what keeps a
    # full switch's cycle short (benchmarks/control_loop.py).
    ports: list[tuple[int | None, list[int], list[float], float, float, float]] = []
    problems: list[PmqecnProblem] = []
    answers: list[PmqecnSolution | ProblemError | None] = []  # None: solve_many's
    for port, members in groups.items():
        ids = [cid for cid, _, _ in members]
        gamma = (port_rate.get(port) if port is not None else None) or opt.service_rate_pps
        c_pps = port_rate.get(port, opt.link_capacity_pps) if port is not None else None
        c_pps = c_pps or opt.link_capacity_pps
        rates = [rate for _, rate, _ in members]
        # Clearing the port's standing queue within one interval takes the
        # classes' backlogs over the interval (PmqecnApp.sample estimates them).
        drain = sum(backlog[cid] for cid in ids) / opt.interval_s
        ports.append((port, ids, rates, gamma, c_pps, drain))
        try:
            problems.append(
                PmqecnProblem(
                    N=opt.capacity_packets,
                    Lambda=opt.arrival_cap_pps,
                    Gamma=gamma,
                    C=c_pps,
                    n=opt.links,
                    lambdas=rates,
                    W=[w_ns * 1e-9 for _, _, w_ns in members],  # seconds, the rates' time unit
                    kinds=[by_id[cid].qos for cid in ids],
                    weights=[by_id[cid].objective_weights for cid in ids],
                    target_utilisation=opt.target_utilisation,
                    backlog_drain=drain,
                )
            )
            answers.append(None)
        except ProblemError as exc:
            answers.append(exc)
    solved = iter(_port_solver(opt.solver_processes)(problems))
    for (port, ids, rates, gamma, c_pps, drain), given in zip(ports, answers, strict=True):
        answer = next(solved) if given is None else given
        if isinstance(answer, ProblemError):
            where = "all classes" if port is None else f"port {port}"
            port_cap = port_target(gamma, opt.target_utilisation, drain)
            cap = min(port_cap, opt.arrival_cap_pps, opt.links * c_pps)
            if sum(rates) <= cap:
                refusals.append(f"{where}: {answer}")
                continue
            shares = [(weights or {}).get(cid, by_id[cid].weight) for cid in ids]
            for cid, target in zip(ids, share_targets(rates, shares, cap), strict=True):
                lambda_star[cid] = float(target)
            methods.add("overload-share")
            continue
        omega.update(zip(ids, answer.omega, strict=True))
        k_packets.update(zip(ids, answer.k_packets(opt.threshold_rule), strict=True))
        lambda_star.update(zip(ids, answer.lam_star, strict=True))
        methods.add(answer.solver)
    if not lambda_star and refusals:
        raise SolverRefused("; ".join(refusals))
    return SolverResult(omega, k_packets, lambda_star, "+".join(sorted(methods)))
