# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCP applications beyond bulk transfer: ns-3's OnOffApplication as the
glue runs it (seed 002's senders), and its fields refused by name."""

from __future__ import annotations

import copy
import importlib.util
from typing import Any

import numpy as np
import pytest

from evaluation.scenario import ScenarioError, parse_scenario
from evaluation.simulate import RunSpec, run_one

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)

PACKET_BYTES = 1000


def onoff_dumbbell(**flow: Any) -> dict[str, Any]:
    """One ON/OFF flow at 4 Mb/s over a 100 Mb/s path: never limited by the
    network, so what arrives is what the application wrote."""
    f = {
        "name": "f",
        "src": "h1",
        "dst": "r1",
        "packet_bytes": PACKET_BYTES,
        "app": "onoff",
        "rate": "4Mbps",
        "on_s": 0.5,
        "off_s": 0.5,
    }
    f.update(flow)
    return {
        "name": "tcp-onoff-test",
        "duration_s": 3.0,
        "transport": "tcp",
        "buffer_packets": 1000,
        "link": {"rate": "100Mbps", "delay_us": 500},
        "hosts": ["h1", "r1"],
        "switches": ["s1"],
        "links": [{"a": "h1", "b": "s1"}, {"a": "s1", "b": "r1"}],
        "flows": [f],
        "monitor": [{"switch": "s1", "toward": "r1"}],
        "schemes": {"none": {}},
    }


def delivered_per_bin(raw: dict[str, Any], bin_s: float) -> np.ndarray:
    s = parse_scenario(raw)
    r = run_one(s, RunSpec("none", ""))
    t = np.array(r.packets.recv_ns, dtype=np.int64)
    n = np.array(r.packets.size, dtype=np.int64)
    bins = round(s.duration_s / bin_s)
    idx = np.minimum(t // int(bin_s * 1e9), bins - 1)
    return np.bincount(idx, weights=n, minlength=bins)


@needs_ns3
def test_onoff_sends_only_while_on_and_at_its_rate() -> None:
    """ON 0.5 s / OFF 0.5 s at 4 Mb/s: each ON half-second (after the
    handshake's ~2 ms) delivers about 4 Mb/s x 0.5 s = 250 kB, never more,
    and the OFF half-seconds deliver (almost) nothing: at most what the
    last ON segment's path delay spills over."""
    per = delivered_per_bin(onoff_dumbbell(), 0.5)
    on, off = per[0::2], per[1::2]
    full = 4e6 / 8 * 0.5
    for b in on:
        assert 0.95 * full <= b <= full + PACKET_BYTES, per
    for b in off:
        assert b <= 2 * PACKET_BYTES, per


@needs_ns3
def test_onoff_is_deterministic_and_exponential_periods_vary() -> None:
    raw = onoff_dumbbell(on_off_dist="exponential")
    a = delivered_per_bin(copy.deepcopy(raw), 0.1)
    b = delivered_per_bin(copy.deepcopy(raw), 0.1)
    assert np.array_equal(a, b)
    # Exponential periods: the ON time is not the constant schedule's.
    c = delivered_per_bin(onoff_dumbbell(), 0.1)
    assert not np.array_equal(a, c)
    assert a.sum() > 0


@pytest.mark.parametrize(
    ("flow", "says"),
    [
        ({"rate": None}, "rate"),
        ({"app": "bulk"}, "rate"),
        ({"on_s": 0}, "on_s"),
        ({"on_off_dist": "pareto"}, "on_off_dist"),
        ({"rate": "fast"}, "rate"),
    ],
)
def test_bad_onoff_fields_are_refused_by_name(flow: dict[str, Any], says: str) -> None:
    raw = onoff_dumbbell(**flow)
    if flow.get("rate", "") is None:
        del raw["flows"][0]["rate"]
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(raw)
    assert says in str(exc.value)


def test_onoff_needs_tcp() -> None:
    raw = onoff_dumbbell()
    raw["transport"] = "udp"
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(raw)
    assert "flows[0].app" in str(exc.value)


@needs_ns3
def test_jain_at_a_time_is_over_the_bytes_delivered_until_then() -> None:
    """Two ON/OFF flows at 4 and 1 Mb/s, never network-limited: by 1 s each
    has delivered its rate x 0.5 s (the first ON period), so Jain's index
    is (4 + 1)^2 / (2 (16 + 1)) = 0.735 there."""
    from evaluation.metrics import compute_metrics

    raw = onoff_dumbbell()
    raw["hosts"] = ["h1", "h2", "r1"]
    raw["links"].append({"a": "h2", "b": "s1"})
    raw["flows"].append({**raw["flows"][0], "name": "g", "src": "h2", "rate": "1Mbps"})
    raw["fairness_at_s"] = [1.0]
    s = parse_scenario(raw)
    r = run_one(s, RunSpec("none", ""))
    jain = compute_metrics(r, s).detail["jain_at"]["1"]
    assert jain == pytest.approx(25 / 34, abs=0.01)


@needs_ns3
def test_parallel_runs_give_the_sequential_results() -> None:
    """`eval run --jobs 2`: each run in its own spawned process gives the
    bytes the same run gives in this one (every run is seeded by itself),
    and runs of two seeds in one pool each keep their own seed."""
    from evaluation.cli import _run_parallel
    from evaluation.simulate import run_specs

    raw = onoff_dumbbell(on_off_dist="exponential")
    raw["schemes"] = {"none": {}, "none-b": {}}
    raw["duration_s"] = 1.0
    raw["repeats"] = 2
    s = parse_scenario(raw)
    jobs_of = [(sk, spec) for sk in s.seeded() for spec in run_specs(sk)]
    parallel = _run_parallel(s.name, jobs_of, 2)
    for (sk, spec), got in zip(jobs_of, parallel, strict=True):
        assert got.seed == sk.seed
        want = run_one(sk, RunSpec(spec.scheme, spec.variant))
        assert got.packets.recv_ns == want.packets.recv_ns
        assert got.packets.size == want.packets.size
    # The seed reaches the hosts' ON/OFF draws: the two seeds' runs differ.
    assert parallel[0].packets.recv_ns != parallel[2].packets.recv_ns


def test_scheme_cc_needs_tcp() -> None:
    raw = onoff_dumbbell()
    raw["transport"] = "udp"
    raw["flows"][0] = {"name": "f", "src": "h1", "dst": "r1"}
    raw["schemes"] = {"none": {}, "none-bbr": {"cc": "bbr"}}
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(raw)
    assert "schemes.none-bbr.cc" in str(exc.value)


@needs_ns3
def test_scheme_cc_overrides_the_flows_cc() -> None:
    """`none-bbr: {cc: bbr}`: plain forwarding whose hosts all run BBR,
    whatever the flows name (a host algorithm as a baseline)."""
    raw = onoff_dumbbell(cc="dctcp")
    raw["duration_s"] = 0.5
    raw["schemes"] = {"none": {}, "none-bbr": {"cc": "bbr"}}
    s = parse_scenario(raw)
    assert [t.cc for t in run_one(s, RunSpec("none-bbr", "")).tcp] == ["bbr"]
    assert [t.cc for t in run_one(s, RunSpec("none", "")).tcp] == ["dctcp"]
