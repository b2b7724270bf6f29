# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PacketSpec -> wire bytes, built with scapy (lengths and checksums by scapy)."""

from __future__ import annotations

from typing import Any

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from models.wire import TofccFeedback

from .format import PacketSpec


def build_scapy(spec: PacketSpec) -> Packet:
    if spec.hex is not None:
        return Raw(bytes.fromhex(spec.hex))
    assert spec.eth is not None
    eth_kwargs: dict[str, Any] = {"dst": spec.eth.dst, "src": spec.eth.src}
    if spec.eth.type is not None:
        eth_kwargs["type"] = spec.eth.type
    pkt: Packet = Ether(**eth_kwargs)
    if spec.ipv4 is not None:
        ip = spec.ipv4
        ip_kwargs: dict[str, Any] = {
            "src": ip.src,
            "dst": ip.dst,
            "tos": (ip.dscp << 2) | ip.ecn,
            "ttl": ip.ttl,
            "id": ip.id,
            "flags": ip.flags,
            "frag": ip.frag,
        }
        if ip.proto is not None:
            ip_kwargs["proto"] = ip.proto
        if ip.ihl is not None:
            ip_kwargs["ihl"] = ip.ihl
        if ip.options is not None:
            ip_kwargs["options"] = [Raw(bytes.fromhex(ip.options))]
        if ip.chksum is not None:
            ip_kwargs["chksum"] = ip.chksum
        pkt = pkt / IP(**ip_kwargs)
    if spec.tcp is not None:
        t = spec.tcp
        pkt = pkt / TCP(
            sport=t.sport, dport=t.dport, flags=t.flags, seq=t.seq, ack=t.ack, window=t.window
        )
    if spec.udp is not None:
        u = spec.udp
        udp_kwargs: dict[str, Any] = {"sport": u.sport, "dport": u.dport}
        if u.chksum is not None:
            udp_kwargs["chksum"] = u.chksum
        pkt = pkt / UDP(**udp_kwargs)
    if spec.feedback is not None:
        pkt = pkt / TofccFeedback(**spec.feedback.model_dump())
    if spec.payload is not None:
        pkt = pkt / Raw(bytes.fromhex(spec.payload))
    elif spec.payload_len:
        pkt = pkt / Raw(bytes(i & 0xFF for i in range(spec.payload_len)))
    return pkt


def build_bytes(spec: PacketSpec) -> bytes:
    return bytes(build_scapy(spec))
