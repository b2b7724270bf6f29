# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/p4qcn/p4qcn.p4, control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths), same order of decisions. tna/p4qcn/README.md explains
the choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hw_profiles import HwProfile

from .common import (
    U32_MASK,
    Cursor,
    FeedbackTrust,
    IngressClockHook,
    Ipv4Forward,
    ParserError,
    QueueMetadataHook,
    RandomHook,
    SourceGuard,
    bridge,
    feedback_mirror_parser,
    header_parser,
    rebuild_feedback,
)
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ECN_CE,
    ECN_NOT_ECT,
    FEEDBACK_TYPE_QCN,
    PKT_TYPE_MIRROR_FEEDBACK,
    BridgedMd,
    FbMirror,
    Header,
    Headers,
    ParsedMd,
    QueueMd,
    bits,
    emit,
)
from .tna import (
    EgressIntrinsic,
    EgressMirror,
    EgressResult,
    IngressIntrinsic,
    IngressResult,
    TnaProgram,
)

P4QCN_PORTS = 512
P4QCN_FLOW_SLOTS = 4096
P4QCN_FLOW_SLOT_MASK = P4QCN_FLOW_SLOTS - 1
P4QCN_PROBABILITY_ENTRIES = 4096
# A level of 32768 chooses every packet: the 15-bit random value is below it.
P4QCN_LEVEL_ALWAYS = 0x8000
U16_MASK = 0xFFFF


@dataclass
class P4qcnBridged(Header):
    now_ticks: int = bits(32)


@dataclass
class P4qcnHeaders(Headers):
    """`struct headers_t` with the instance only P4QCN makes valid."""

    p4qcn_bridged: P4qcnBridged = field(default_factory=P4qcnBridged)


def crc16(data: bytes) -> int:
    """bf-utils' crc_16 (HashAlgorithm_t.CRC16): polynomial 0x8005, bits
    reflected, initial value 0, no final xor (CRC-16/ARC)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def flow_hash(src_addr: int, dst_addr: int) -> int:
    """`flow_hasher.get({src_addr, dst_addr})`: the fields MSB first."""
    return crc16(src_addr.to_bytes(4, "big") + dst_addr.to_bytes(4, "big"))


def flow_slot(src_addr: int, dst_addr: int) -> int:
    """The fb_last_tick index of a flow: the hash's low 12 bits."""
    return flow_hash(src_addr, dst_addr) & P4QCN_FLOW_SLOT_MASK


def chosen(random_value: int, level: int) -> bool:
    """`random_margin[15:15] == 1` after draw(): random < level (both <= 32768)."""
    return ((random_value - level) & U16_MASK) >> 15 == 1


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False
    now_ticks: int = 0


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    random: int = 0
    level: int = 0
    random_margin: int = 0
    three_point: int = 0
    interval_ticks: int = 0
    window_start_ticks: int = 0
    flow_hash: int = 0
    send_feedback: int = 0
    mirror_session: int = 0
    mirror: bool = False
    fb_queue_id: int = 0


def egress_parser(pkt: Cursor, hdr: P4qcnHeaders, parsed: ParsedMd) -> None:
    """parser SwitchEgressParser of p4qcn.p4 (eg_intr_md is passed separately)."""
    if feedback_mirror_parser(pkt, hdr, parsed):
        return
    hdr.bridged = pkt.extract(BridgedMd)
    hdr.p4qcn_bridged = pkt.extract(P4qcnBridged)
    header_parser(pkt, hdr, parsed)


class P4qcn(TnaProgram):
    name = "p4qcn"

    def __init__(self, profile: HwProfile) -> None:
        super().__init__(profile)
        p4 = self.p4
        mirror_id_bits = profile.mirror_session_max.bit_length()

        # ---- SwitchIngress ------------------------------------------
        ig = "SwitchIngress"
        self.trust = FeedbackTrust(p4, f"{ig}.trust")
        self.source_guard = SourceGuard(p4, f"{ig}.source_guard")
        self.forward = Ipv4Forward(p4, f"{ig}.forward")
        self.clock = IngressClockHook(p4, f"{ig}.clock")
        self.set_class = Action(f"{ig}.set_class", (("qid", profile.queue_id_bits), ("icos", 3)))
        self.traffic_class = p4.table(
            Table(
                f"{ig}.traffic_class",
                [KeyField("hdr.ipv4.dscp", 6, "exact")],
                [self.set_class, Action("NoAction")],
                ("NoAction", {}),
                size=64,
            )
        )

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = QueueMetadataHook(p4, f"{eg}.queue_hook")
        self.random_hook = RandomHook(p4, f"{eg}.random_hook")
        self.chosen = p4.counter(Counter(f"{eg}.chosen", P4QCN_PORTS, "packets"))
        self.feedback_sent = p4.counter(Counter(f"{eg}.feedback_sent", P4QCN_PORTS, "packets"))
        self.feedback_suppressed = p4.counter(
            Counter(f"{eg}.feedback_suppressed", P4QCN_PORTS, "packets")
        )
        self.ce_marked = p4.counter(Counter(f"{eg}.ce_marked", P4QCN_PORTS, "packets"))
        self.fb_last_tick = p4.register(Register(f"{eg}.fb_last_tick", 32, P4QCN_FLOW_SLOTS))
        self.set_level = Action(
            f"{eg}.set_level",
            (("level", 16), ("three_point", 1), ("feedback_interval_ticks", 32)),
        )
        self.no_feedback = Action(f"{eg}.no_feedback")
        self.feedback_probability = p4.table(
            Table(
                f"{eg}.feedback_probability",
                [
                    KeyField("eg_intr_md.egress_port", 9, "exact"),
                    KeyField("eg_intr_md.egress_qid", profile.queue_id_bits, "ternary"),
                    KeyField("eg_md.queue.depth_cells", 32, "ternary"),
                ],
                [self.set_level, self.no_feedback],
                (self.no_feedback.name, {}),
                size=P4QCN_PROBABILITY_ENTRIES,
            )
        )
        self.set_feedback_session = Action(
            f"{eg}.set_feedback_session", (("session_id", mirror_id_bits),)
        )
        self.feedback_session = p4.table(
            Table(
                f"{eg}.feedback_session",
                [KeyField("hdr.bridged.ingress_port", 9, "exact")],
                [self.set_feedback_session, Action("NoAction")],
                ("NoAction", {}),
                size=P4QCN_PORTS,
            )
        )

    # ---- register actions (one per register per packet) ------------
    def fb_gap_check(self, slot: int, now_ticks: int, md: EgMd) -> int:
        """1: send feedback (and the slot takes `now`); 0: the slot's time
        lies in (now - interval, now], so the flow had feedback too recently."""
        last = self.fb_last_tick.read(slot)
        if last > md.window_start_ticks and last <= now_ticks:
            return 0
        self.fb_last_tick.write(slot, now_ticks)
        return 1

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        hdr = P4qcnHeaders()
        md = IgMd()
        pkt = Cursor(data)
        try:
            header_parser(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True)  # TNA drops on an ingress parser error

        bridge(hdr, ig_intr_md.ingress_port)
        md.now_ticks = self.clock.apply(ig_intr_md)
        hdr.p4qcn_bridged.set_valid()
        hdr.p4qcn_bridged.now_ticks = md.now_ticks

        md.forged = self.trust.apply(hdr, ig_intr_md.ingress_port, len(data))
        md.spoofed = self.source_guard.apply(hdr, ig_intr_md.ingress_port, len(data))
        if md.forged or md.spoofed:
            return IngressResult(drop=True)
        drop, egress_port = self.forward.apply(hdr)
        if drop:
            return IngressResult(drop=True)
        qid = icos = 0
        if hdr.ipv4.is_valid():
            r = self.traffic_class.lookup({"hdr.ipv4.dscp": hdr.ipv4.dscp})
            if r.action == self.set_class.name:
                qid, icos = r.data["qid"], r.data["icos"]
        out = emit(
            hdr.bridged, hdr.p4qcn_bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback
        )
        return IngressResult(
            drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload, icos=icos
        )

    # ---- egress -----------------------------------------------------
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        hdr = P4qcnHeaders()
        md = EgMd()
        pkt = Cursor(data)
        egress_parser(pkt, hdr, md.parsed)

        if hdr.fb_mirror.is_valid():
            rebuild_feedback(hdr, FEEDBACK_TYPE_QCN)
        elif hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            self.congestion_point(eg_intr_md, hdr, md, len(data))

        # ---- SwitchEgressDeparser ----
        mirror_out = None
        if md.mirror:
            m = FbMirror(
                pkt_type=PKT_TYPE_MIRROR_FEEDBACK,
                class_id=hdr.bridged.class_id,
                queue_id=md.fb_queue_id,
                flow_protocol=hdr.ipv4.protocol,
                flow_src_port=md.parsed.l4_src_port,
                flow_dst_port=md.parsed.l4_dst_port,
                rate=0,
                target_rate=0,
                orig_src_mac=hdr.bridged.orig_src_mac,
                orig_dst_mac=hdr.bridged.orig_dst_mac,
            )
            mirror_out = EgressMirror(md.mirror_session, m.pack())
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=False, data=out + pkt.payload, mirror=mirror_out)

    def congestion_point(
        self, eg_intr_md: EgressIntrinsic, hdr: P4qcnHeaders, md: EgMd, pkt_len: int
    ) -> None:
        """Eq. 1, the per-flow interval and the feedback or CE mark."""
        port = eg_intr_md.egress_port
        now_ticks = hdr.p4qcn_bridged.now_ticks
        md.queue = self.queue_hook.apply(eg_intr_md)
        md.random = self.random_hook.apply(eg_intr_md)
        md.flow_hash = flow_hash(hdr.ipv4.src_addr, hdr.ipv4.dst_addr)
        r = self.feedback_probability.lookup(
            {
                "eg_intr_md.egress_port": port,
                "eg_intr_md.egress_qid": eg_intr_md.egress_qid,
                "eg_md.queue.depth_cells": md.queue.depth_cells,
            }
        )
        if r.action == self.set_level.name:
            md.level = r.data["level"]
            md.three_point = r.data["three_point"]
            md.interval_ticks = r.data["feedback_interval_ticks"]
        # draw()
        md.random_margin = (md.random - md.level) & U16_MASK
        md.window_start_ticks = (now_ticks - md.interval_ticks) & U32_MASK
        is_chosen = md.random_margin >> 15 == 1
        if is_chosen:
            self.chosen.count(port, pkt_len)
            if md.three_point == 1:
                if hdr.ipv4.ecn != ECN_NOT_ECT:
                    hdr.ipv4.ecn = ECN_CE
                    self.ce_marked.count(port, pkt_len)
            elif md.parsed.ipv4_plain:
                md.send_feedback = self.fb_gap_check(
                    md.flow_hash & P4QCN_FLOW_SLOT_MASK, now_ticks, md
                )
        if md.send_feedback == 1:
            s = self.feedback_session.lookup({"hdr.bridged.ingress_port": hdr.bridged.ingress_port})
            if s.action == self.set_feedback_session.name:
                md.mirror_session = s.data["session_id"]
                md.fb_queue_id = eg_intr_md.egress_qid & 0xFF
                md.mirror = True
            self.feedback_sent.count(port, pkt_len)
        elif is_chosen and md.three_point == 0 and md.parsed.ipv4_plain:
            self.feedback_suppressed.count(port, pkt_len)
