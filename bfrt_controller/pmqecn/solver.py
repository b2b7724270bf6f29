"""From one interval's measurements to the optimiser's answer, per egress port.

Classes that share an egress port (`classes[].port`) form one M/M/1/N
system of the paper; each port is solved on its own. A class that sent
nothing this interval has no lambda_i to optimise and keeps its state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from models.optimize import PmqecnProblem, ProblemError, solve

from .config import PmqecnConfig


class SolverRefused(Exception):
    """The measurements make no meaningful problem (e.g. overload); why is in the message."""


@dataclass(frozen=True)
class SolverResult:
    omega: dict[int, float]
    k_packets: dict[int, float]
    lambda_star: dict[int, float]
    method: str


def solve_for(config: PmqecnConfig, samples: Sequence[object]) -> SolverResult:
    opt = config.optimizer
    by_id = {c.id: c for c in config.classes}
    groups: dict[int | None, list[tuple[int, float, float]]] = defaultdict(list)
    for s in samples:
        cid, rate, sojourn_ns = s.class_id, s.rate_pps, s.mean_sojourn_ns  # type: ignore[attr-defined]
        if rate > 0:
            groups[by_id[cid].port].append((cid, rate, sojourn_ns))
    omega: dict[int, float] = {}
    k_packets: dict[int, float] = {}
    lambda_star: dict[int, float] = {}
    methods = set()
    for port, members in groups.items():
        ids = [cid for cid, _, _ in members]
        try:
            problem = PmqecnProblem(
                N=opt.capacity_packets,
                Lambda=opt.arrival_cap_pps,
                Gamma=opt.service_rate_pps,
                C=opt.link_capacity_pps,
                n=opt.links,
                lambdas=[rate for _, rate, _ in members],
                W=[w_ns * 1e-9 for _, _, w_ns in members],  # seconds, the rates' time unit
                kinds=[by_id[cid].qos for cid in ids],
                weights=[by_id[cid].objective_weights for cid in ids],
            )
            solution = solve(problem)
        except ProblemError as exc:
            where = "all classes" if port is None else f"port {port}"
            raise SolverRefused(f"{where}: {exc}") from None
        for i, cid in enumerate(ids):
            omega[cid] = solution.omega[i]
            k_packets[cid] = solution.k_packets[i]
            lambda_star[cid] = solution.lam_star[i]
        methods.add(solution.solver)
    return SolverResult(omega, k_packets, lambda_star, "+".join(sorted(methods)))
