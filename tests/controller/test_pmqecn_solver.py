"""solve_for: one M/M/1/N problem per egress port, at that port's speed."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.pmqecn.solver import solve_for


@dataclass
class Sample:
    class_id: int
    rate_pps: float
    mean_sojourn_ns: float


def config(port_rates: dict[int, float]) -> object:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
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
    # Port 4's classes are solved exactly as before ...
    for cid in (1, 2):
        assert slow5.lambda_star[cid] == shared.lambda_star[cid]
        assert slow5.k_packets[cid] == shared.k_packets[cid]
    # ... bulk's port is 10x slower than optimizer.service_rate_pps, so its
    # queue is busier and its optimal arrival rate lower.
    assert slow5.lambda_star[3] < shared.lambda_star[3]
    assert slow5.lambda_star[3] <= 125_000


def test_an_idle_class_is_left_out() -> None:
    result = solve_for(config({}), [SAMPLES[0], Sample(2, 0, 0), SAMPLES[2]])  # type: ignore[arg-type]
    assert set(result.k_packets) == {1, 3}
