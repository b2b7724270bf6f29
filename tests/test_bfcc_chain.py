# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC end to end on two model switches: S1 (reaction point) -> S2 (congestion point).

Hosts A (10.0.1.1, group 1) and B (10.0.1.2, group 2) sit on S1 port 1;
S1 port 3 is wired to S2 port 1; the receiver 10.0.2.2 is on S2 port 2,
whose queue the test sets through S2's queue-metadata hook.
"""

from __future__ import annotations

from typing import Any

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hw_profiles import load_profile
from models.switch.bfcc import ETHERTYPE_TOFCC_FAKE, Bfcc
from models.switch.chain import Chain, ChainOutput
from models.switch.core import Match, P4ModelError
from models.switch.target import ModelTarget
from models.vectors.format import Setup
from models.vectors.runner import apply_setup
from models.wire import TofccFeedback

S1_PORT3_MAC = "02:00:00:00:01:03"
S2_PORT1_MAC = "02:00:00:00:02:01"
RECEIVER_MAC = "00:00:00:00:02:02"


def _route(prefix: str, port: int, src_mac: str, dst_mac: str) -> dict[str, Any]:
    return {
        "table": "SwitchIngress.forward.ipv4_lpm",
        "key": {"hdr.ipv4.dst_addr": prefix},
        "action": "SwitchIngress.forward.route",
        "data": {"port": port, "src_mac": src_mac, "dst_mac": dst_mac},
    }


GROUPS = [
    {
        "table": "SwitchIngress.sender_group",
        "key": {"hdr.ipv4.src_addr": f"10.0.1.{g}/32"},
        "action": "SwitchIngress.set_group",
        "data": {"group": g},
    }
    for g in (1, 2)
]


def _upstream_setup(expiry_ns: int) -> Setup:
    return Setup.model_validate(
        {
            "tables": [
                _route("10.0.1.0/24", 1, "02:00:00:00:01:01", "00:00:00:00:01:01"),
                _route("10.0.2.0/24", 3, S1_PORT3_MAC, S2_PORT1_MAC),
                {
                    "table": "SwitchIngress.trust.trusted_ports",
                    "key": {"ig_intr_md.ingress_port": 3},
                    "action": "SwitchIngress.trust.trusted",
                },
                *GROUPS,
                {
                    "table": "SwitchIngress.reaction_point",
                    "key": {"ig_tm_md.ucast_egress_port": 3},
                    "action": "SwitchIngress.react",
                    "data": {
                        "high_qid": 2,
                        "low_qid": 1,
                        "bp_expiry_ns": expiry_ns,
                        "named_group_only": 0,
                    },
                },
                *(
                    {
                        "table": "SwitchEgress.rate_threshold",
                        "key": {"hdr.bfcc_bridged.bp_degree": degree},
                        "action": "SwitchEgress.set_rate_threshold",
                        "data": {"rt_packets": rt},
                    }
                    for degree, rt in ((1, 9), (2, 3), (3, 1))
                ),
                {
                    "table": "SwitchEgress.recirculation",
                    "key": {"eg_intr_md.egress_port": 3},
                    "action": "SwitchEgress.recirculate",
                    "data": {"session": 20, "level_cells": 1000},
                },
            ],
            "mirror_sessions": [{"sid": 20, "port": "recirculation"}],
        }
    )


def _downstream_setup(refresh_mask: int) -> Setup:
    return Setup.model_validate(
        {
            "tables": [
                _route("10.0.2.0/24", 2, "02:00:00:00:02:02", RECEIVER_MAC),
                _route("10.0.1.0/24", 1, S2_PORT1_MAC, S1_PORT3_MAC),
                {
                    "table": "SwitchIngress.trust.trusted_ports",
                    "key": {"ig_intr_md.ingress_port": 1},
                    "action": "SwitchIngress.trust.trusted",
                },
                *GROUPS,
                {
                    "table": "SwitchEgress.congestion_point",
                    "key": {"eg_intr_md.egress_port": 2},
                    "action": "SwitchEgress.monitor",
                    "data": {
                        "cp_id": 0,
                        "congestion_threshold_cells": 15,
                        "t_min_ns": 80000,
                        "t_max_ns": 150000,
                        "window_packets": 100,
                        "refresh_mask": refresh_mask,
                    },
                },
                *(
                    {
                        "table": "SwitchEgress.bp_upstream",
                        "key": {"eg_md.bp_group": g},
                        "action": "SwitchEgress.to_upstream",
                        "data": {
                            "session_id": 11,
                            "src_mac": S2_PORT1_MAC,
                            "dst_mac": S1_PORT3_MAC,
                        },
                    }
                    for g in (1, 2)
                ),
            ],
            "mirror_sessions": [{"sid": 11, "port": 1, "max_pkt_len": 14}],
        }
    )


def make_chain(chip: str = "tofino", expiry_ns: int = 0, refresh_mask: int = 0) -> Chain:
    s1, s2 = Bfcc(load_profile(chip)), Bfcc(load_profile(chip))
    apply_setup(ModelTarget(s1), _upstream_setup(expiry_ns))
    apply_setup(ModelTarget(s2), _downstream_setup(refresh_mask))
    return Chain({"s1": s1, "s2": s2}, [(("s1", 3), ("s2", 1))])


def set_queue(chain: Chain, depth_cells: int, sojourn_ns: int) -> None:
    table = chain.switches["s2"].table("SwitchEgress.queue_hook.queue_md_override")
    table.add_or_modify(
        {"eg_intr_md.egress_port": Match(2)},
        "SwitchEgress.queue_hook.inject",
        {"depth_cells": depth_cells, "sojourn_ns": sojourn_ns},
    )


def host_packet(host: int, seq: int) -> bytes:
    return bytes(
        Ether(dst="02:00:00:00:01:01", src=f"00:00:00:00:01:0{host}")
        / IP(src=f"10.0.1.{host}", dst="10.0.2.2", id=seq)
        / UDP(sport=5000 + host, dport=6000)
        / bytes(64)
    )


def received(outputs: list[ChainOutput]) -> list[tuple[str, int, int]]:
    """(source, IP id, TTL) of every packet the receiver got."""
    got = []
    for o in outputs:
        assert (o.switch, o.port) == ("s2", 2), o
        pkt = Ether(o.data)
        assert pkt.type == 0x0800 and pkt.dst == RECEIVER_MAC
        got.append((pkt[IP].src, pkt[IP].id, pkt[IP].ttl))
    return got


def messages(chain: Chain) -> list[tuple[int, int, int]]:
    """(msg_type, group, degree) of every message S2 sent S1."""
    out = []
    for c in chain.crossings:
        pkt = Ether(c.data)
        if c.src == ("s2", 1) and TofccFeedback in pkt:
            fb = pkt[TofccFeedback]
            out.append((fb.msg_type, fb.class_id, fb.degree))
    return out


def fakes_on_link(chain: Chain) -> int:
    return sum(
        1
        for c in chain.crossings
        if c.src == ("s1", 3) and Ether(c.data).type == ETHERTYPE_TOFCC_FAKE
    )


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_backpressure_queues_the_named_group_low_and_cuts_the_port(chip: str) -> None:
    chain = make_chain(chip)
    s1, s2 = chain.switches["s1"], chain.switches["s2"]
    set_queue(chain, depth_cells=40, sojourn_ns=100000)  # moderate: RT 3

    out = chain.send("s1", 1, host_packet(1, 0))
    assert received(out) == [("10.0.1.1", 0, 62)]
    assert messages(chain) == [(2, 1, 2)]
    assert s1.register("SwitchIngress.bp_state").read(3) == 0x0102

    out = []
    for seq in range(1, 31):
        out += chain.send("s1", 1, host_packet(1, seq))
    # Every real packet arrives exactly once, with two hops' TTL, recirculated or not.
    assert sorted(received(out)) == [("10.0.1.1", seq, 62) for seq in range(1, 31)]
    # 30 packets at RT 3: the 4th, 7th, ..., 28th leave as fakes (each one's
    # recirculated real opens the next window); S2 drops every fake.
    assert fakes_on_link(chain) == 9
    assert s1.counter("SwitchEgress.fakes_sent").read(3)[0] == 9
    assert s2.counter("SwitchIngress.fake_drops").read(1)[0] == 9
    assert s1.counter("SwitchIngress.admitted_by_qid").read(1)[0] == 30 + 9
    # Still group 1 at degree 2: no repeated message.
    assert messages(chain) == [(2, 1, 2)]

    # B keeps the high queue but shares the port's cut (Algorithms 1-2 flag
    # every packet to the port): after A's last 3 real packets B's packet
    # leaves as the fake and its real copy follows.
    out = chain.send("s1", 1, host_packet(2, 99))
    assert received(out) == [("10.0.1.2", 99, 62)]
    # High queue: A's first packet (before any backpressure), B's, B's recirculated.
    assert s1.counter("SwitchIngress.admitted_by_qid").read(2)[0] == 3
    assert fakes_on_link(chain) == 10


def test_degree_change_and_recovery_travel_upstream() -> None:
    chain = make_chain()
    s1 = chain.switches["s1"]
    set_queue(chain, depth_cells=40, sojourn_ns=10000)
    chain.send("s1", 1, host_packet(1, 0))
    set_queue(chain, depth_cells=40, sojourn_ns=200000)
    chain.send("s1", 1, host_packet(1, 1))
    assert s1.register("SwitchIngress.bp_state").read(3) == 0x0103
    set_queue(chain, depth_cells=2, sojourn_ns=0)
    chain.send("s1", 1, host_packet(2, 2))
    assert messages(chain) == [(2, 1, 1), (2, 1, 3), (3, 1, 0)]
    assert s1.register("SwitchIngress.bp_state").read(3) == 0
    before = fakes_on_link(chain)
    for seq in range(3, 23):
        chain.send("s1", 1, host_packet(1, seq))
    assert fakes_on_link(chain) == before
    assert len(messages(chain)) == 3


def test_dominant_group_is_the_one_named() -> None:
    chain = make_chain()
    set_queue(chain, depth_cells=40, sojourn_ns=100000)
    chain.send("s1", 1, host_packet(2, 0))
    assert messages(chain)[-1] == (2, 2, 2)
    # A overtakes B in the congested queue: the message moves to group 1 and
    # S1 stops slowing B.
    for seq in range(1, 3):
        chain.send("s1", 1, host_packet(1, seq))
    assert messages(chain)[-1] == (2, 1, 2)
    assert chain.switches["s1"].register("SwitchIngress.bp_state").read(3) == 0x0102


def test_refresh_outlives_expiry_and_silence_expires() -> None:
    # Refresh epochs of 2^19 ns (524 us): clock bits 24..19.
    chain = make_chain(expiry_ns=1_000_000, refresh_mask=0x1F80000)
    s1 = chain.switches["s1"]
    set_queue(chain, depth_cells=40, sojourn_ns=100000)
    for step in range(10):
        chain.now_ns = step * 300_000
        chain.send("s1", 1, host_packet(1, step))
    # Repeated once per 524 us epoch, so S1 never went 1 ms without hearing it.
    assert len(messages(chain)) >= 3
    assert s1.register("SwitchIngress.bp_state").read(3) == 0x0102
    # S2's messages stop (its upstream entries are gone, as if lost on the
    # link); 1 ms after the last one S1 lets group 1 go at full rate.
    s2_upstream = chain.switches["s2"].table("SwitchEgress.bp_upstream")
    s2_upstream.clear()
    chain.now_ns += 1_000_000
    chain.send("s1", 1, host_packet(1, 100))
    assert s1.register("SwitchIngress.bp_state").read(3) == 0
    fakes = fakes_on_link(chain)
    for seq in range(101, 111):
        chain.send("s1", 1, host_packet(1, seq))
    assert fakes_on_link(chain) == fakes


def test_chain_rejects_bad_wiring() -> None:
    s = Bfcc(load_profile("tofino"))
    with pytest.raises(P4ModelError, match="no switch"):
        Chain({"a": s}, [(("a", 1), ("b", 1))])
    with pytest.raises(P4ModelError, match="wired twice"):
        Chain(
            {"a": s, "b": Bfcc(load_profile("tofino"))},
            [(("a", 1), ("b", 1)), (("a", 1), ("b", 2))],
        )
