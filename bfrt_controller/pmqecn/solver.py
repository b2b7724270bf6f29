"""From one interval's measurements to the optimiser's answer, per egress port.

Classes that share an egress port (`classes[].port`) form one M/M/1/N
system of the paper; each port is solved on its own. A class that sent
nothing this interval has no lambda_i to optimise and keeps its state.

A port the model cannot describe (overloaded: sum(lambda) >= Gamma, or
queues longer than N at the best split) is exactly when the senders must
slow down, so it is not skipped: its classes get lambda_i* =
lambda_i * max(f, u * Gamma / sum(lambda)), the proportional cut that would
bring the port to utilisation u, no deeper than the optimiser's own floor f
per cycle; K_i and weights stay as they are until the model applies again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from models.optimize import PmqecnProblem, ProblemError, solve

from .config import PmqecnConfig

# Utilisation an overloaded port's classes are cut towards.
OVERLOAD_TARGET_UTILISATION = 0.9


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
    port_rate = {ps.port: ps.service_rate_pps for ps in config.ports if ps.service_rate_pps}
    refusals = []
    for port, members in groups.items():
        ids = [cid for cid, _, _ in members]
        gamma = (port_rate.get(port) if port is not None else None) or opt.service_rate_pps
        try:
            problem = PmqecnProblem(
                N=opt.capacity_packets,
                Lambda=opt.arrival_cap_pps,
                Gamma=gamma,
                C=port_rate.get(port, opt.link_capacity_pps)
                if port is not None
                else opt.link_capacity_pps,
                n=opt.links,
                lambdas=[rate for _, rate, _ in members],
                W=[w_ns * 1e-9 for _, _, w_ns in members],  # seconds, the rates' time unit
                kinds=[by_id[cid].qos for cid in ids],
                weights=[by_id[cid].objective_weights for cid in ids],
            )
            solution = solve(problem)
        except ProblemError as exc:
            where = "all classes" if port is None else f"port {port}"
            total = sum(r for _, r, _ in members)
            factor = max(
                PmqecnProblem.min_target_fraction,
                min(1.0, OVERLOAD_TARGET_UTILISATION * gamma / total),
            )
            if factor >= 1.0:
                refusals.append(f"{where}: {exc}")
                continue
            for cid, r, _ in members:
                lambda_star[cid] = r * factor
            methods.add("overload-cut")
            continue
        for i, cid in enumerate(ids):
            omega[cid] = solution.omega[i]
            k_packets[cid] = solution.k_packets[i]
            lambda_star[cid] = solution.lam_star[i]
        methods.add(solution.solver)
    if not lambda_star and refusals:
        raise SolverRefused("; ".join(refusals))
    return SolverResult(omega, k_packets, lambda_star, "+".join(sorted(methods)))
