# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/dadctcp/dadctcp.p4, control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths), same order of decisions. tna/dadctcp/README.md explains
the choices (the slope per departure, the two-sample EWMA and its bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hw_profiles import HwProfile

from .common import (
    U32_MASK,
    Cursor,
    DequeueQueueHook,
    FeedbackTrust,
    Ipv4Forward,
    ParserError,
    SourceGuard,
    bridge,
    header_parser,
    ticks,
)
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ECN_CE,
    ECN_NOT_ECT,
    BridgedMd,
    Headers,
    ParsedMd,
    QueueMd,
    emit,
)
from .tna import EgressIntrinsic, EgressResult, IngressIntrinsic, IngressResult, TnaProgram

DADCTCP_PORTS = 512
DADCTCP_QUEUE_SLOTS = 1024
SIGN_BIT = 1 << 31


def to_signed32(value: int) -> int:
    value &= U32_MASK
    return value - (1 << 32) if value & SIGN_BIT else value


def arith_shift_right(value: int, bits: int) -> int:
    """`(bit<32>)(((int<32>)value) >> bits)`: the sign bit is copied in."""
    return (to_signed32(value) >> bits) & U32_MASK


def average_slope(slope_cells: int, prev_slope_cells: int) -> int:
    """halve() then average(): s/2 + s_prev/4 as the P4 computes it (32 bits)."""
    return (arith_shift_right(slope_cells, 1) + arith_shift_right(prev_slope_cells, 2)) & U32_MASK


def at_or_above(depth_cells: int, threshold_cells: int) -> bool:
    """Bit 31 of `depth - threshold` clear: depth >= threshold (both below 2^31)."""
    return (depth_cells - threshold_cells) & SIGN_BIT == 0


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    monitored: int = 0
    slot: int = 0
    k1_cells: int = 0
    k2_cells: int = 0
    use_slope: int = 0
    drop_not_ect: int = 0
    now_ticks: int = 0
    prev_depth_cells: int = 0
    slope_cells: int = 0
    prev_slope_cells: int = 0
    avg_slope: int = 0


def egress_parser(pkt: Cursor, hdr: Headers, parsed: ParsedMd) -> None:
    """parser SwitchEgressParser of dadctcp.p4 (eg_intr_md is passed separately)."""
    hdr.bridged = pkt.extract(BridgedMd)
    header_parser(pkt, hdr, parsed)


class Dadctcp(TnaProgram):
    name = "dadctcp"

    def __init__(self, profile: HwProfile) -> None:
        super().__init__(profile)
        p4 = self.p4

        # ---- SwitchIngress ------------------------------------------
        ig = "SwitchIngress"
        self.trust = FeedbackTrust(p4, f"{ig}.trust")
        self.source_guard = SourceGuard(p4, f"{ig}.source_guard")
        self.forward = Ipv4Forward(p4, f"{ig}.forward")
        self.set_queue = Action(f"{ig}.set_queue", (("qid", profile.queue_id_bits),))
        self.queue_select = p4.table(
            Table(
                f"{ig}.queue_select",
                [KeyField("hdr.ipv4.dscp", 6, "exact")],
                [self.set_queue, Action("NoAction")],
                ("NoAction", {}),
                size=64,
            )
        )

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        # The depth as the packet leaves (deq_qdepth), as section 3.1 samples it.
        self.queue_hook = DequeueQueueHook(p4, f"{eg}.queue_hook")
        self.ce_marked = p4.counter(Counter(f"{eg}.ce_marked", DADCTCP_PORTS, "packets"))
        self.not_ect_dropped = p4.counter(
            Counter(f"{eg}.not_ect_dropped", DADCTCP_PORTS, "packets")
        )
        self.last_depth = p4.register(Register(f"{eg}.last_depth", 32, DADCTCP_QUEUE_SLOTS))
        self.last_slope = p4.register(Register(f"{eg}.last_slope", 32, DADCTCP_QUEUE_SLOTS))
        # The slot's latest departure in 64 ns ticks, for the controller's idle test.
        self.last_departure = p4.register(Register(f"{eg}.last_departure", 32, DADCTCP_QUEUE_SLOTS))
        self.set_threshold = Action(
            f"{eg}.set_threshold",
            (
                ("slot", 10),
                ("k1_cells", 32),
                ("k2_cells", 32),
                ("use_slope", 1),
                ("drop_not_ect", 1),
            ),
        )
        self.not_monitored = Action(f"{eg}.not_monitored")
        self.queue_threshold = p4.table(
            Table(
                f"{eg}.queue_threshold",
                [
                    KeyField("eg_intr_md.egress_port", 9, "exact"),
                    KeyField("eg_intr_md.egress_qid", profile.queue_id_bits, "ternary"),
                ],
                [self.set_threshold, self.not_monitored],
                (self.not_monitored.name, {}),
                size=DADCTCP_QUEUE_SLOTS,
            )
        )

    # ---- register actions (one per register per packet) ------------
    def depth_swap(self, slot: int, depth_cells: int) -> int:
        previous = self.last_depth.read(slot)
        self.last_depth.write(slot, depth_cells)
        return previous

    def stamp_departure(self, slot: int, now_ticks: int) -> None:
        self.last_departure.write(slot, now_ticks)

    def slope_swap(self, slot: int, slope_cells: int) -> int:
        previous = self.last_slope.read(slot)
        self.last_slope.write(slot, slope_cells)
        return previous

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        core = self.native_core()
        if core is not None:
            done: IngressResult | None = core.ingress(core.binding, ig_intr_md, data)
            if done is not None:
                return done
        hdr = Headers()
        md = IgMd()
        pkt = Cursor(data)
        try:
            header_parser(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True)  # TNA drops on an ingress parser error

        bridge(hdr, ig_intr_md.ingress_port)

        md.forged = self.trust.apply(hdr, ig_intr_md.ingress_port, len(data))
        md.spoofed = self.source_guard.apply(hdr, ig_intr_md.ingress_port, len(data))
        if md.forged or md.spoofed:
            return IngressResult(drop=True)
        drop, egress_port = self.forward.apply(hdr)
        if drop:
            return IngressResult(drop=True)
        qid = 0
        if hdr.ipv4.is_valid():
            r = self.queue_select.lookup({"hdr.ipv4.dscp": hdr.ipv4.dscp})
            if r.action == self.set_queue.name:
                qid = r.data["qid"]
        out = emit(hdr.bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return IngressResult(drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload)

    # ---- egress -----------------------------------------------------
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        core = self.native_core()
        if core is not None:
            done: EgressResult | None = core.egress(core.binding, eg_intr_md, data)
            if done is not None:
                return done
        hdr = Headers()
        md = EgMd()
        pkt = Cursor(data)
        egress_parser(pkt, hdr, md.parsed)

        drop = False
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            drop = self.marking_point(eg_intr_md, hdr, md, len(data))

        # ---- SwitchEgressDeparser ----
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=drop, data=out + pkt.payload)

    def marking_point(
        self, eg_intr_md: EgressIntrinsic, hdr: Headers, md: EgMd, pkt_len: int
    ) -> bool:
        """Eq. 6 with the two-sample slope EWMA; True: drop the packet."""
        port = eg_intr_md.egress_port
        md.queue = self.queue_hook.apply(eg_intr_md)
        r = self.queue_threshold.lookup(
            {"eg_intr_md.egress_port": port, "eg_intr_md.egress_qid": eg_intr_md.egress_qid}
        )
        if r.action != self.set_threshold.name:
            return False
        md.monitored = 1
        md.slot = r.data["slot"]
        md.k1_cells = r.data["k1_cells"]
        md.k2_cells = r.data["k2_cells"]
        md.use_slope = r.data["use_slope"]
        md.drop_not_ect = r.data["drop_not_ect"]
        md.now_ticks = ticks(eg_intr_md.global_tstamp_ns)
        depth = md.queue.depth_cells
        md.prev_depth_cells = self.depth_swap(md.slot, depth)
        self.stamp_departure(md.slot, md.now_ticks)
        md.slope_cells = (depth - md.prev_depth_cells) & U32_MASK  # take_slope()
        md.prev_slope_cells = self.slope_swap(md.slot, md.slope_cells)
        md.avg_slope = average_slope(md.slope_cells, md.prev_slope_cells)
        congested = at_or_above(depth, md.k2_cells) or (
            md.use_slope == 1 and at_or_above(depth, md.k1_cells) and md.avg_slope & SIGN_BIT == 0
        )
        if not congested:
            return False
        if hdr.ipv4.ecn != ECN_NOT_ECT:
            hdr.ipv4.ecn = ECN_CE
            self.ce_marked.count(port, pkt_len)
            return False
        if md.drop_not_ect == 1:
            self.not_ect_dropped.count(port, pkt_len)
            return True
        return False
