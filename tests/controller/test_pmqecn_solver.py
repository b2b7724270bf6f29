# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""solve_for: one M/M/1/N problem per egress port, at that port's speed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import yaml

from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.pmqecn.solver import solve_for


@dataclass
class Sample:
    class_id: int
    rate_pps: float
    mean_sojourn_ns: float


def config(port_rates: dict[int, float], interval_s: float = 1.0) -> object:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["optimizer"]["interval_s"] = interval_s
    # These tests reason about loads just under and over u = 0.9.
    raw["optimizer"]["target_utilisation"] = 0.9
    # Voice and video leave through port 4, bulk through port 5.
    for c in raw["classes"]:
        c["port"] = 5 if c["name"] == "bulk" else 4
    raw["ports"] = [
        {
            "port": 4,
            "feedback_session": 14,
            **({"service_rate_pps": port_rates[4]} if 4 in port_rates else {}),
        },
        {
            "port": 5,
            "feedback_session": 15,
            **({"service_rate_pps": port_rates[5]} if 5 in port_rates else {}),
        },
    ]
    return parse_config(raw)


SAMPLES = [Sample(1, 60_000, 20_000), Sample(2, 60_000, 20_000), Sample(3, 60_000, 20_000)]


def test_a_slower_port_gets_lower_targets_than_the_shared_rate_gives() -> None:
    shared = solve_for(config({}), SAMPLES)  # type: ignore[arg-type]
    slow5 = solve_for(config({5: 125_000}), SAMPLES)  # type: ignore[arg-type]
    # Port 4's classes are solved as before (to the conic solver's tolerance:
    # the ports are solved as one block problem, models.optimize.solve_many) ...
    for cid in (1, 2):
        assert slow5.lambda_star[cid] == pytest.approx(shared.lambda_star[cid], rel=1e-6)
        assert slow5.k_packets[cid] == shared.k_packets[cid]
    # ... bulk's port is 10x slower than optimizer.service_rate_pps, so its
    # queue is busier and its optimal arrival rate lower.
    assert slow5.lambda_star[3] < shared.lambda_star[3]
    assert slow5.lambda_star[3] <= 125_000


def test_an_idle_class_is_left_out() -> None:
    result = solve_for(config({}), [SAMPLES[0], Sample(2, 0, 0), SAMPLES[2]])  # type: ignore[arg-type]
    assert set(result.k_packets) == {1, 3}


def test_a_standing_queue_cuts_an_underloaded_port() -> None:
    """Voice and video at 40k pps each on a 125k pps port: 64 %, under u = 90 %,
    so lambda* >= lambda.  With 20 ms of queueing they hold ~1,600 packets:
    within a 100 ms interval the 10 % headroom still clears that (no cut);
    within 10 ms (the shortest cycle, issue 44) it cannot, and their targets
    fall to what leaves room to clear it (never below a quarter of u Gamma)."""

    def run(interval_s: float, sojourn_ns: float) -> dict[int, float]:
        cfg = config({4: 125_000}, interval_s)
        samples = [Sample(1, 40_000, sojourn_ns), Sample(2, 40_000, sojourn_ns)]
        return solve_for(cfg, samples).lambda_star  # type: ignore[arg-type]

    for calm in (run(0.1, 200_000), run(0.1, 20_000_000)):
        assert calm[1] >= 40_000 and calm[2] >= 40_000
    cut = run(0.01, 20_000_000)
    assert cut[1] + cut[2] == pytest.approx(0.25 * 0.9 * 125_000, rel=1e-6)


def test_solver_processes_split_the_ports_and_keep_the_answers() -> None:
    """optimizer.solver_processes: 2 solves half the ports in a helper
    process (models/optimize/parallel.py); each class's answer is the one
    the single process gives, to the conic solver's tolerance."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    template = raw["classes"][0]
    raw["classes"], samples = [], []
    for p in range(12):  # twelve egress ports of two classes each
        for q in range(2):
            cid = 2 * p + q + 1
            raw["classes"].append(
                template
                | {"id": cid, "name": f"c{cid}", "priority": cid, "vq": cid, "queue": q,
                   "qos": "AB"[q], "port": 10 + p,
                   "match": {"dscp": cid}}
            )  # fmt: skip
            samples.append(Sample(cid, 200_000 + 10_000 * p + 50_000 * q, 5_000 + 500 * cid))
    one = solve_for(parse_config(raw), samples)  # type: ignore[arg-type]
    raw["optimizer"]["solver_processes"] = 2
    two = solve_for(parse_config(raw), samples)  # type: ignore[arg-type]
    assert set(two.lambda_star) == set(one.lambda_star) == {s.class_id for s in samples}
    for cid, target in one.lambda_star.items():
        assert two.lambda_star[cid] == pytest.approx(target, rel=1e-5)
        assert two.k_packets[cid] == one.k_packets[cid]
        assert two.omega[cid] == pytest.approx(one.omega[cid], rel=1e-5)
