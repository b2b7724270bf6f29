# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The traffic manager drops a packet for a device port no pipe has.

Found by p4testgen (issue 32): its Tofino target treats device port 511 as
the drop port, and the model sent such packets out of port 511. The 9-bit
port field reaches ports no pipe has (511 is pipe 3's port 127; each pipe
has ports_per_pipe of them), so the TM has nowhere to queue them.
"""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from hw_profiles import load_profile
from models.switch.core import Match
from models.switch.registry import PROGRAMS, make_model


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_has_port_follows_pipes_and_ports_per_pipe(chip: str) -> None:
    p = load_profile(chip)
    local_bits = p.port_id_bits - (p.pipes - 1).bit_length()
    assert p.has_port(p.front_panel_port(1))
    assert all(p.has_port(port) for port in p.recirculation_ports)
    assert p.has_port((p.pipes - 1) << local_bits | (p.ports_per_pipe - 1))
    assert not p.has_port(p.ports_per_pipe)  # pipe 0, one past its last port
    assert not p.has_port(0x1FF)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize(("port", "delivered"), [(2, True), (0x1FF, False)])
def test_a_route_to_a_port_no_pipe_has_drops_the_packet(
    program: str, port: int, delivered: bool
) -> None:
    model = make_model(program, load_profile("tofino"))
    model.table("SwitchIngress.forward.ipv4_lpm").add(
        {"hdr.ipv4.dst_addr": Match(0x0A000200, prefix_len=24)},
        "SwitchIngress.forward.route",
        {"port": port, "src_mac": 0x020000000002, "dst_mac": 0x000000000202},
    )
    # Port 3 trusted, so no program's source guard stands in the way.
    model.table("SwitchIngress.trust.trusted_ports").add(
        {"ig_intr_md.ingress_port": Match(3)}, "SwitchIngress.trust.trusted", {}
    )
    pkt = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.2.2")
        / TCP(sport=40000, dport=80)
    )
    out = model.send(3, pkt)
    assert [o.port for o in out] == ([port] if delivered else [])
