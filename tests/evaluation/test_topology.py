# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

from evaluation.scenario import load_scenario
from evaluation.topology import Topology


def test_ports_are_numbered_in_link_order_and_routes_follow_shortest_paths() -> None:
    topo = Topology(load_scenario("bfcc-two-receivers"))
    # s3's links in file order: s1, s2, s4, r2.
    assert topo.ports["s3"] == {1: "s1", 2: "s2", 3: "s4", 4: "r2"}
    assert topo.path("g1", "r1") == ["g1", "s1", "s3", "s4", "r1"]
    assert topo.routes("s3") == {"g1": 1, "g2": 2, "g3": 2, "r1": 3, "r2": 4}
    assert topo.next_hop("s1", "r2") == topo.port_to("s1", "s3")


def test_rate_override_sets_every_link() -> None:
    topo = Topology(load_scenario("bfcc-single"), "50Mbps")
    assert {link.rate_bps for link in topo.links} == {50_000_000}


def test_base_rtt_counts_both_ways() -> None:
    topo = Topology(load_scenario("bfcc-smoke"))
    # g1-s1-s3-rx: 3 hops of 10 us plus one 144-byte frame at 10 Mb/s each.
    one_way = 3 * (10_000 + 144 * 8 * 100)
    assert topo.base_rtt_ns("g1", "rx", 128) == 2 * one_way


def test_addresses_are_per_host() -> None:
    topo = Topology(load_scenario("pmqecn-s1"))
    assert topo.ip_text("h1") == "10.0.1.1"
    assert topo.ip_text("h5") == "10.0.5.1"
    assert topo.neighbour_mac("s1", topo.port_to("s1", "h1")) == topo.host_mac("h1")


def test_a_switch_with_many_links_skips_cpu_and_recirculation_ports() -> None:
    """Seed 002's dumbbell gives router1 101 links: the 64th and later go to
    pipe 1 (128...), never Tofino's CPU Ethernet ports 64-67 or the
    recirculation port 68 a P4 model would loop through."""
    from hw_profiles import load_profile

    t = Topology(load_scenario("tcp-dumbbell-s002"))
    ports = sorted(t.ports["router1"])
    assert len(ports) == 101
    assert ports[:63] == list(range(1, 64)) and ports[63:66] == [128, 129, 130]
    profile = load_profile("tofino")
    bad = set(profile.cpu_eth_ports) | set(profile.recirculation_ports)
    assert not bad & set(ports)
    t2 = Topology(load_scenario("tcp-dumbbell-s002").model_copy(update={"chip": "tofino2"}))
    assert sorted(t2.ports["router1"])[:2] == [9, 10]


def test_multipipe_links_alternate_between_the_scenarios_pipes() -> None:
    """`pipes: 2`: s1's links (g1, g2, g3, s2, s3, s4) take pipes 0, 1, 0, 1,
    0, 1, each pipe's ports from its second (Tofino: 1, 2, 3; 129, 130, 131)."""
    topo = Topology(load_scenario("bfcc-three-severe-dc"))
    assert topo.ports["s1"] == {1: "g1", 129: "g2", 2: "g3", 130: "s2", 3: "s3", 131: "s4"}
