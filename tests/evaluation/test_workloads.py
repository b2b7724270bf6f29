# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Poisson flows of web-search sizes (seed 004's mix): expanded into sized
flows when the scenario loads, the same flows for the same seed, arrivals
at the rate the load implies, sizes following the CDF, bad fields refused
by name, and FCT by size class in the report."""

from __future__ import annotations

import copy
import importlib.util
from typing import Any

import numpy as np
import pytest

from evaluation.scenario import ScenarioError, parse_scenario
from evaluation.workloads import WEBSEARCH_CDF, mean_bytes, sample_sizes

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


def star(**workload: Any) -> dict[str, Any]:
    w = {"name": "ws", "src": ["a", "b"], "dst": ["c"], "load": 0.3, "load_rate": "1Gbps"}
    w.update(workload)
    return {
        "name": "wl",
        "seed": 7,
        "duration_s": 20.0,
        "transport": "tcp",
        "link": {"rate": "1Gbps", "delay_us": 10},
        "hosts": ["a", "b", "c"],
        "switches": ["s"],
        "links": [{"a": h, "b": "s"} for h in "abc"],
        "flows": [],
        "workloads": [w],
        "schemes": {"none": {}},
    }


def test_same_seed_same_flows_other_seed_other_flows() -> None:
    a = parse_scenario(star()).flows
    b = parse_scenario(star()).flows
    assert a == b
    raw = star()
    raw["seed"] = 8
    assert parse_scenario(raw).flows != a


def test_arrival_rate_matches_the_load() -> None:
    """Each source offers load x rate: lambda = 0.3 x 1 Gb/s / (8 x mean)."""
    flows = parse_scenario(star()).flows
    lam = 0.3 * 1e9 / (8 * mean_bytes(WEBSEARCH_CDF))
    expected = 2 * lam * 20.0
    # Poisson: the count's standard deviation is sqrt(expected).
    assert abs(len(flows) - expected) < 4 * np.sqrt(expected)
    assert all(f.size_bytes is not None and f.dst == "c" for f in flows)
    starts = [f.start_s for f in flows]
    assert starts == sorted(starts) and starts[0] > 0 and starts[-1] < 20.0


def test_sizes_follow_the_cdf() -> None:
    rng = np.random.default_rng(1)
    sizes = sample_sizes(rng, WEBSEARCH_CDF, 200_000)
    for size, p in WEBSEARCH_CDF[1:]:
        assert np.mean(sizes <= size) == pytest.approx(p, abs=0.005), size
    assert sizes.mean() == pytest.approx(mean_bytes(WEBSEARCH_CDF), rel=0.02)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"load": 0}, "workloads[0].load"),
        ({"load_rate": "fast"}, "workloads[0].load_rate"),
        ({"sizes": [[100, 0.5], [50, 1.0]]}, "workloads[0].sizes"),
        ({"sizes": [[100, 0.5], [200, 0.9]]}, "workloads[0].sizes"),
        ({"sizes": "datacenter"}, "workloads[0].sizes"),
        ({"dst": ["nobody"]}, "dst"),
        ({"max_flows": 10}, "workloads[0].max_flows"),
        ({"start_s": 30.0}, "workloads[0].stop_s"),
    ],
)
def test_bad_workload_fields_are_refused_by_name(change: dict[str, Any], says: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(star(**change))
    assert says in str(exc.value)


def test_workloads_need_tcp() -> None:
    raw = star()
    raw["transport"] = "udp"
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(raw)
    assert "workloads" in str(exc.value)


@needs_ns3
def test_report_gives_fct_by_size_class(tmp_path: Any) -> None:
    from evaluation.metrics import compute_metrics
    from evaluation.simulate import RunSpec, run_one

    raw = copy.deepcopy(star(load=0.2))
    raw["duration_s"] = 0.5
    s = parse_scenario(raw)
    r = run_one(s, RunSpec("none", ""))
    classes = compute_metrics(r, s).detail["fct_by_class"]
    assert set(classes) == {"small", "medium", "large"}
    small = classes["small"]
    assert small["flows"] and small["completed"] and small["mean_ms"] is not None
    # A web-search flow under 100 KB on an idle 1 Gb/s path finishes in a few RTTs.
    assert small["mean_ms"] < 20
