# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Byte-level frames the simulated hosts send and read.

Built with struct, not scapy: a run makes hundreds of thousands of packets.
The layouts are the project's wire formats (models/wire.py has the scapy
view of the feedback header); tests/evaluation/test_frames_and_pipelines.py checks one against
the other.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from models.switch.headers import (
    ECN_CE,
    ETHERTYPE_IPV4,
    FEEDBACK_TYPE_QCN,
    FEEDBACK_VERSION,
    UDP_PORT_TOFCC_FEEDBACK,
    ipv4_checksum,
)

ETH = struct.Struct("!6s6sH")
IPV4 = struct.Struct("!BBHHHBBH4s4s")
UDP = struct.Struct("!HHHH")
# Data payload: flow id, sequence number, send time (for one-way delay).
DATA = struct.Struct("!IIQ")
FEEDBACK = struct.Struct("!BHBBBHII")
CNP = struct.Struct("!I")

IP_PROTO_UDP = 17
ECN_ECT0 = 2
UDP_PORT_DATA = 5000
# RoCEv2's port: DCQCN's congestion notification packets.
UDP_PORT_CNP = 4791
FLOW_PORT_BASE = 10000
HEADERS_LEN = ETH.size + IPV4.size + UDP.size  # 42
MIN_DATA_IP_LEN = IPV4.size + UDP.size + DATA.size


def ip_udp(
    src_mac: bytes,
    dst_mac: bytes,
    src_ip: bytes,
    dst_ip: bytes,
    sport: int,
    dport: int,
    payload: bytes,
    *,
    tos: int = 0,
    ttl: int = 64,
) -> bytes:
    total = IPV4.size + UDP.size + len(payload)
    hdr = IPV4.pack(0x45, tos, total, 0, 0, ttl, IP_PROTO_UDP, 0, src_ip, dst_ip)
    hdr = hdr[:10] + struct.pack("!H", ipv4_checksum(hdr)) + hdr[12:]
    return (
        ETH.pack(dst_mac, src_mac, ETHERTYPE_IPV4)
        + hdr
        + UDP.pack(sport, dport, UDP.size + len(payload), 0)
        + payload
    )


@dataclass(frozen=True)
class Parsed:
    """What a host needs from a frame it receives."""

    src_ip: bytes
    dst_ip: bytes
    ecn: int
    ip_len: int
    sport: int
    dport: int
    payload: bytes


def parse(frame: bytes) -> Parsed | None:
    """None for anything that is not IPv4/UDP without options."""
    if len(frame) < HEADERS_LEN:
        return None
    if frame[12:14] != b"\x08\x00" or frame[14] != 0x45 or frame[23] != IP_PROTO_UDP:
        return None
    ip_len = (frame[16] << 8) | frame[17]
    sport, dport = struct.unpack_from("!HH", frame, 34)
    return Parsed(
        frame[26:30], frame[30:34], frame[15] & 3, ip_len, sport, dport, frame[HEADERS_LEN:]
    )


def data_payload(flow_id: int, seq: int, sent_ns: int, ip_len: int) -> bytes:
    pad = ip_len - MIN_DATA_IP_LEN
    if pad < 0:
        raise ValueError(f"packet_bytes {ip_len} below the {MIN_DATA_IP_LEN} a data packet needs")
    return DATA.pack(flow_id, seq, sent_ns) + bytes(pad)


def read_data(payload: bytes) -> tuple[int, int, int]:
    """(flow_id, seq, sent_ns)."""
    return DATA.unpack_from(payload)  # type: ignore[return-value]


@dataclass(frozen=True)
class Feedback:
    msg_type: int
    class_id: int
    queue_id: int
    flow_protocol: int
    flow_src_port: int
    rate: int
    target_rate: int
    degree: int = 0  # BFCC's congestion degree (backpressure), else 0


def read_feedback(payload: bytes) -> Feedback | None:
    if len(payload) < FEEDBACK.size:
        return None
    vt, cls, qid, deg, proto, fsport, rate, target = FEEDBACK.unpack_from(payload)
    if vt >> 4 != FEEDBACK_VERSION:
        return None
    return Feedback(vt & 0xF, cls, qid, proto, fsport, rate, target, deg)


def qcn_feedback(data_frame: bytes, switch_mac: bytes, quantized_fb: int) -> bytes:
    """The P4QCN congestion point's message for the flow `data_frame` belongs
    to: ECN=11, addressed back to its source (seed 003, Fig. 2), in the
    project's feedback header with msg_type QCN and |Fb| in `rate`."""
    p = parse(data_frame)
    assert p is not None
    fb = FEEDBACK.pack(
        (FEEDBACK_VERSION << 4) | FEEDBACK_TYPE_QCN,
        0,
        0,
        0,
        IP_PROTO_UDP,
        p.sport,
        quantized_fb,
        0,
    )
    return ip_udp(
        switch_mac,
        data_frame[6:12],
        p.dst_ip,
        p.src_ip,
        p.dport,
        UDP_PORT_TOFCC_FEEDBACK,
        fb,
        tos=ECN_CE,
    )


def cnp(src_mac: bytes, dst_mac: bytes, src_ip: bytes, dst_ip: bytes, flow_id: int) -> bytes:
    return ip_udp(src_mac, dst_mac, src_ip, dst_ip, UDP_PORT_CNP, UDP_PORT_CNP, CNP.pack(flow_id))


# IEEE 802.1Qbb priority-based flow control: a MAC control frame (EtherType
# 0x8808, opcode 0x0101) to the reserved multicast address, with a class-enable
# vector and one pause time per priority in quanta of 512 bit times.
ETHERTYPE_MAC_CONTROL = 0x8808
PFC_OPCODE = 0x0101
PFC_DST_MAC = bytes.fromhex("0180c2000001")
PFC = struct.Struct("!HH8H")
PFC_MAX_QUANTA = 0xFFFF
PFC_QUANTUM_BITS = 512
PFC_PRIORITIES = 8
MIN_FRAME_BYTES = 60  # Ethernet minimum without the FCS


@dataclass(frozen=True)
class PfcFrame:
    # Pause time by priority, only the priorities whose class-enable bit is set.
    quanta: dict[int, int]


def pfc_frame(src_mac: bytes, quanta: dict[int, int]) -> bytes:
    """A PFC frame pausing (quanta > 0) or resuming (quanta 0) each priority given."""
    times = [0] * PFC_PRIORITIES
    enable = 0
    for prio, q in quanta.items():
        if not 0 <= prio < PFC_PRIORITIES:
            raise ValueError(f"PFC priority must be 0..7, got {prio}")
        if not 0 <= q <= PFC_MAX_QUANTA:
            raise ValueError(f"PFC quanta must be 0..{PFC_MAX_QUANTA}, got {q}")
        enable |= 1 << prio
        times[prio] = q
    frame = ETH.pack(PFC_DST_MAC, src_mac, ETHERTYPE_MAC_CONTROL) + PFC.pack(
        PFC_OPCODE, enable, *times
    )
    return frame + bytes(max(0, MIN_FRAME_BYTES - len(frame)))


def read_pfc(frame: bytes) -> PfcFrame | None:
    """The pause times of a PFC frame; None for any other frame (802.3x
    global PAUSE, opcode 0x0001, is not PFC)."""
    if len(frame) < ETH.size + PFC.size:
        return None
    if struct.unpack_from("!H", frame, 12)[0] != ETHERTYPE_MAC_CONTROL:
        return None
    opcode, enable, *times = PFC.unpack_from(frame, ETH.size)
    if opcode != PFC_OPCODE:
        return None
    return PfcFrame({p: times[p] for p in range(PFC_PRIORITIES) if enable >> p & 1})


def pfc_pause_ns(quanta: int, rate_bps: int) -> int:
    """How long `quanta` pauses a link of `rate_bps` (512 bit times each)."""
    return -(-quanta * PFC_QUANTUM_BITS * 1_000_000_000 // rate_bps)
