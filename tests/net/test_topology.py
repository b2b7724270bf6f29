from __future__ import annotations

from models.net.scenario import load_scenario
from models.net.topology import Topology


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
