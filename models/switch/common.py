# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of tna/include/, one class or function per P4 control/parser."""

from __future__ import annotations

import random
from typing import TypeVar

from models import speedups

from .core import Action, Counter, KeyField, P4Objects, Table
from .headers import (
    _LAYOUTS,
    ECN_CE,
    ETHERTYPE_IPV4,
    ETHERTYPE_TOFCC_FEEDBACK,
    FEEDBACK_IPV4_TOTAL_LEN,
    FEEDBACK_TTL,
    FEEDBACK_UDP_LEN,
    FEEDBACK_VERSION,
    IP_PROTO_TCP,
    IP_PROTO_UDP,
    PKT_TYPE_BRIDGED,
    PKT_TYPE_MIRROR_FEEDBACK,
    UDP_PORT_TOFCC_FEEDBACK,
    BridgedMd,
    Ethernet,
    FbMirror,
    Feedback,
    Header,
    Headers,
    Ipv4,
    ParsedMd,
    QueueMd,
    Tcp,
    Udp,
    _layout_of,
)
from .tna import EgressIntrinsic, IngressIntrinsic

H = TypeVar("H", bound=Header)


class ParserError(ValueError):
    """The packet ended inside a header the parser extracts."""


class Cursor:
    """packet_in: extract headers front to back; the rest is payload."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def extract(self, header_type: type[H]) -> H:
        if speedups.ENABLED:
            # One layout lookup, and the slice taken once, instead of a
            # size_bytes() and an unpack() that each look the layout up.
            lay = _LAYOUTS.get(header_type) or _layout_of(header_type)
            end = self.offset + lay.size_bytes
            if end > len(self.data):
                raise ParserError(f"packet too short for {header_type.__name__}")
            hdr: H = lay.unpack(self.data[self.offset : end])
            self.offset = end
            return hdr
        size = header_type.size_bytes()
        if self.offset + size > len(self.data):
            raise ParserError(f"packet too short for {header_type.__name__}")
        hdr = header_type.unpack(self.data[self.offset : self.offset + size])
        self.offset += size
        return hdr

    def lookahead_byte(self) -> int:
        if self.offset >= len(self.data):
            raise ParserError("packet too short for lookahead")
        return self.data[self.offset]

    @property
    def payload(self) -> bytes:
        return self.data[self.offset :]


def header_parser(pkt: Cursor, hdr: Headers, parsed: ParsedMd) -> None:
    """parser HeaderParser."""
    parsed.l4_src_port = 0
    parsed.l4_dst_port = 0
    parsed.ipv4_plain = False
    hdr.ethernet = pkt.extract(Ethernet)
    if hdr.ethernet.ether_type == ETHERTYPE_TOFCC_FEEDBACK:
        hdr.feedback = pkt.extract(Feedback)
        return
    if hdr.ethernet.ether_type != ETHERTYPE_IPV4:
        return
    hdr.ipv4 = pkt.extract(Ipv4)
    if hdr.ipv4.ihl != 5 or hdr.ipv4.frag_offset != 0:
        return
    parsed.ipv4_plain = True
    if hdr.ipv4.protocol == IP_PROTO_TCP:
        hdr.tcp = pkt.extract(Tcp)
        parsed.l4_src_port = hdr.tcp.src_port
        parsed.l4_dst_port = hdr.tcp.dst_port
    elif hdr.ipv4.protocol == IP_PROTO_UDP:
        hdr.udp = pkt.extract(Udp)
        parsed.l4_src_port = hdr.udp.src_port
        parsed.l4_dst_port = hdr.udp.dst_port
        if hdr.udp.dst_port == UDP_PORT_TOFCC_FEEDBACK:
            hdr.feedback = pkt.extract(Feedback)


def egress_prefix_parser(pkt: Cursor, hdr: Headers, parsed: ParsedMd) -> None:
    """parser EgressPrefixParser (eg_intr_md itself is passed separately)."""
    if feedback_mirror_parser(pkt, hdr, parsed):
        return
    hdr.bridged = pkt.extract(BridgedMd)
    header_parser(pkt, hdr, parsed)


def feedback_mirror_parser(pkt: Cursor, hdr: Headers, parsed: ParsedMd) -> bool:
    """The egress parser's state for a mirrored feedback copy (its mirror
    header, Ethernet and IPv4, nothing after): True when the packet is one.
    Every program whose egress sees feedback copies starts with it."""
    if pkt.lookahead_byte() != PKT_TYPE_MIRROR_FEEDBACK:
        return False
    hdr.fb_mirror = pkt.extract(FbMirror)
    hdr.ethernet = pkt.extract(Ethernet)
    hdr.ipv4 = pkt.extract(Ipv4)
    parsed.l4_src_port = 0
    parsed.l4_dst_port = 0
    parsed.ipv4_plain = True
    return True


def bridge(hdr: Headers, ingress_port: int) -> None:
    """Every program's first ingress step: the bridged header with the
    ingress port and the MACs as the packet arrived (routing rewrites the
    Ethernet header; feedback is addressed to the previous hop)."""
    hdr.bridged.set_valid()
    hdr.bridged.pkt_type = PKT_TYPE_BRIDGED
    hdr.bridged.class_id = 0
    hdr.bridged.ingress_port = ingress_port
    hdr.bridged.orig_src_mac = hdr.ethernet.src_addr
    hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr


def rebuild_feedback(hdr: Headers, msg_type: int) -> None:
    """include/feedback.p4's FeedbackRebuild: the mirrored copy turned into
    the one feedback packet toward the flow's source, its message from the
    mirror header; `msg_type` is the program's."""
    m: FbMirror = hdr.fb_mirror
    hdr.ethernet.dst_addr = m.orig_src_mac
    hdr.ethernet.src_addr = m.orig_dst_mac
    source = hdr.ipv4.src_addr
    hdr.ipv4.src_addr = hdr.ipv4.dst_addr
    hdr.ipv4.dst_addr = source
    hdr.ipv4.ecn = ECN_CE
    hdr.ipv4.total_len = FEEDBACK_IPV4_TOTAL_LEN
    hdr.ipv4.identification = 0
    hdr.ipv4.flags = 0
    hdr.ipv4.frag_offset = 0
    hdr.ipv4.ttl = FEEDBACK_TTL
    hdr.ipv4.protocol = IP_PROTO_UDP
    udp = hdr.udp
    udp.set_valid()
    udp.src_port = m.flow_dst_port
    udp.dst_port = UDP_PORT_TOFCC_FEEDBACK
    udp.length = FEEDBACK_UDP_LEN
    udp.checksum = 0
    fb = hdr.feedback
    fb.set_valid()
    fb.version = FEEDBACK_VERSION
    fb.msg_type = msg_type
    fb.class_id = m.class_id
    fb.queue_id = m.queue_id
    fb.degree = 0
    fb.flow_protocol = m.flow_protocol
    fb.flow_src_port = m.flow_src_port
    fb.rate = m.rate
    fb.target_rate = m.target_rate


class Ipv4Forward:
    """control Ipv4Forward. Returns (drop, egress_port)."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.route = Action(f"{path}.route", (("port", 9), ("src_mac", 48), ("dst_mac", 48)))
        self.drop = Action(f"{path}.drop")
        self.ipv4_lpm = p4.table(
            Table(
                f"{path}.ipv4_lpm",
                [KeyField("hdr.ipv4.dst_addr", 32, "lpm")],
                [self.route, self.drop],
                (self.drop.name, {}),
                size=4096,
            )
        )

    def apply(self, hdr: Headers) -> tuple[bool, int]:
        if not hdr.ipv4.is_valid():
            return True, 0
        if hdr.ipv4.ihl != 5:
            return True, 0  # checksum would not cover the options
        if hdr.ipv4.ttl <= 1:
            return True, 0
        r = self.ipv4_lpm.lookup({"hdr.ipv4.dst_addr": hdr.ipv4.dst_addr})
        if r.action == self.drop.name:
            return True, 0
        hdr.ethernet.src_addr = r.data["src_mac"]
        hdr.ethernet.dst_addr = r.data["dst_mac"]
        hdr.ipv4.ttl = (hdr.ipv4.ttl - 1) & 0xFF
        return False, r.data["port"]


class FeedbackTrust:
    """control FeedbackTrust. Returns True when the packet is a forgery (dropped)."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.trusted = Action(f"{path}.trusted")
        self.trusted_ports = p4.table(
            Table(
                f"{path}.trusted_ports",
                [KeyField("ig_intr_md.ingress_port", 9, "exact")],
                [self.trusted, Action("NoAction")],
                ("NoAction", {}),
                size=512,
            )
        )
        self.untrusted_feedback_drops: Counter = p4.counter(
            Counter(f"{path}.untrusted_feedback_drops", 512, "packets")
        )

    def apply(self, hdr: Headers, ingress_port: int, pkt_len: int) -> bool:
        if not hdr.feedback.is_valid():
            return False
        if self.trusted_ports.lookup({"ig_intr_md.ingress_port": ingress_port}).hit:
            return False
        self.untrusted_feedback_drops.count(ingress_port, pkt_len)
        return True


class SourceGuard:
    """control SourceGuard. Returns True when the packet's source is outside
    its ingress port's binding (dropped and counted); a port without entries
    is not checked, and only IPv4 data (no feedback header) is."""

    SIZE = 1024

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.bound = Action(f"{path}.bound")
        self.spoofed_source = Action(f"{path}.spoofed_source")
        self.unbound = Action(f"{path}.unbound")
        self.source_bindings = p4.table(
            Table(
                f"{path}.source_bindings",
                [
                    KeyField("ig_intr_md.ingress_port", 9, "exact"),
                    KeyField("hdr.ipv4.src_addr", 32, "lpm"),
                ],
                [self.bound, self.spoofed_source, self.unbound],
                (self.unbound.name, {}),
                size=self.SIZE,
            )
        )
        self.spoofed_source_drops: Counter = p4.counter(
            Counter(f"{path}.spoofed_source_drops", 512, "packets")
        )

    def apply(self, hdr: Headers, ingress_port: int, pkt_len: int) -> bool:
        if not hdr.ipv4.is_valid() or hdr.feedback.is_valid():
            return False
        r = self.source_bindings.lookup(
            {"ig_intr_md.ingress_port": ingress_port, "hdr.ipv4.src_addr": hdr.ipv4.src_addr}
        )
        if r.action != self.spoofed_source.name:
            return False
        self.spoofed_source_drops.count(ingress_port, pkt_len)
        return True


class QueueOverride:
    """The queue_md_override table every queue hook of test_hooks.p4 has
    (built with test hooks, as tofino-model runs it); the hooks differ in
    the real state they fall back to."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.use_real = Action(f"{path}.use_real")
        self.inject = Action(f"{path}.inject", (("depth_cells", 32), ("sojourn_ns", 32)))
        self.queue_md_override = p4.table(
            Table(
                f"{path}.queue_md_override",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.use_real, self.inject],
                (self.use_real.name, {}),
                size=512,
            )
        )

    def injected(self, eg_intr_md: EgressIntrinsic) -> QueueMd | None:
        """The queue state an override entry injects for the port, if any."""
        r = self.queue_md_override.lookup({"eg_intr_md.egress_port": eg_intr_md.egress_port})
        if r.action == self.inject.name:
            return QueueMd(r.data["depth_cells"], r.data["sojourn_ns"])
        return None


class QueueMetadataHook(QueueOverride):
    """control QueueMetadataHook: the depth as the packet was queued."""

    def apply(self, eg_intr_md: EgressIntrinsic) -> QueueMd:
        md = self.injected(eg_intr_md)
        if md is not None:
            return md
        return QueueMd(eg_intr_md.enq_qdepth, eg_intr_md.deq_timedelta)


class DequeueQueueHook(QueueMetadataHook):
    """control DequeueQueueHook (test_hooks.p4): QueueMetadataHook's table,
    but the real depth is the one the queue has as the packet leaves it
    (deq_qdepth)."""

    def apply(self, eg_intr_md: EgressIntrinsic) -> QueueMd:
        md = self.injected(eg_intr_md)
        if md is not None:
            return md
        return QueueMd(eg_intr_md.deq_qdepth, eg_intr_md.deq_timedelta)


# Bits 37..6 of the 48-bit nanosecond timestamp: the clock in 64 ns ticks.
CLOCK_TICK_SHIFT = 6
U32_MASK = 0xFFFFFFFF


class TimestampQueueHook(QueueOverride):
    """control TimestampQueueHook (test_hooks.p4): QueueMetadataHook's table, but the
    real sojourn on Tofino is global_tstamp - arrival (deq_timedelta
    saturates near 262 us there); Tofino2's 32-bit deq_timedelta as is."""

    def __init__(self, p4: P4Objects, path: str, tofino2: bool) -> None:
        super().__init__(p4, path)
        self.tofino2 = tofino2

    def apply(self, eg_intr_md: EgressIntrinsic, arrival_ns: int) -> QueueMd:
        md = self.injected(eg_intr_md)
        if md is not None:
            return md
        if self.tofino2:
            sojourn_ns = eg_intr_md.deq_timedelta
        else:
            sojourn_ns = (eg_intr_md.global_tstamp_ns - arrival_ns) & U32_MASK
        return QueueMd(eg_intr_md.enq_qdepth, sojourn_ns)


def ticks(tstamp_ns: int) -> int:
    """`tstamp[37:6]`: 64 ns ticks, 32 bits (wraps after 275 s)."""
    return (tstamp_ns >> CLOCK_TICK_SHIFT) & U32_MASK


class IngressClockHook:
    """control IngressClockHook (built with test hooks, as tofino-model runs it)."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.use_real = Action(f"{path}.use_real")
        self.inject = Action(f"{path}.inject", (("tstamp_ns", 48),))
        self.ingress_tstamp_override = p4.table(
            Table(
                f"{path}.ingress_tstamp_override",
                [KeyField("ig_intr_md.ingress_port", 9, "exact")],
                [self.use_real, self.inject],
                (self.use_real.name, {}),
                size=512,
            )
        )

    def apply(self, ig_intr_md: IngressIntrinsic) -> int:
        """now_ticks."""
        r = self.ingress_tstamp_override.lookup(
            {"ig_intr_md.ingress_port": ig_intr_md.ingress_port}
        )
        if r.action == self.inject.name:
            return ticks(r.data["tstamp_ns"])
        return ticks(ig_intr_md.ingress_mac_tstamp_ns)


# RandomHook's value is 15 bits: a probability level runs 0..32768.
RANDOM_MASK = 0x7FFF


class RandomHook:
    """control RandomHook (built with test hooks, as tofino-model runs it).

    Without an override entry the value is a fresh draw; the model draws
    from its own seeded generator (the chip's is not reproducible either,
    so no vector depends on it)."""

    def __init__(self, p4: P4Objects, path: str, seed: int = 0) -> None:
        self.inject = Action(f"{path}.inject", (("random_value", 16),))
        self.random_override = p4.table(
            Table(
                f"{path}.random_override",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.inject, Action("NoAction")],
                ("NoAction", {}),
                size=512,
            )
        )
        self.rng = random.Random(seed)

    def apply(self, eg_intr_md: EgressIntrinsic) -> int:
        value = self.rng.getrandbits(16) & RANDOM_MASK
        r = self.random_override.lookup({"eg_intr_md.egress_port": eg_intr_md.egress_port})
        if r.action == self.inject.name:
            value = r.data["random_value"] & RANDOM_MASK
        return value
