# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/aqm/aqm.p4 (RED and CoDel), control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths), same order of decisions. tna/aqm/README.md explains the
choices and lists every departure from Floyd & Jacobson 1993 and RFC 8289.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hw_profiles import HwProfile

from .common import (
    CLOCK_TICK_SHIFT,
    U32_MASK,
    Cursor,
    FeedbackTrust,
    IngressClockHook,
    Ipv4Forward,
    ParserError,
    RandomHook,
    SourceGuard,
    TimestampQueueHook,
    header_parser,
)
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ECN_CE,
    ECN_NOT_ECT,
    PKT_TYPE_BRIDGED,
    BridgedMd,
    Header,
    Headers,
    ParsedMd,
    QueueMd,
    bits,
    emit,
)
from .tna import EgressIntrinsic, EgressResult, IngressIntrinsic, IngressResult, TnaProgram

AQM_PORTS = 512
AQM_SLOTS = 256
AQM_QUEUE_ENTRIES = 512
AQM_RED_LEVEL_ENTRIES = 4096
AQM_CODEL_DUE_ENTRIES = 4096
AQM_MODE_NONE = 0
AQM_MODE_RED = 1
AQM_MODE_CODEL = 2
# A level of 32768 drops every packet: the 15-bit random value is below it.
AQM_LEVEL_ALWAYS = 0x8000
U16_MASK = 0xFFFF
SIGN_32 = 0x80000000


def not_before(t_ticks: int, deadline_ticks: int) -> bool:
    """`t - deadline < 0x80000000`: t at or after the deadline, on a clock
    that wraps (the sign of the 32-bit difference)."""
    return (t_ticks - deadline_ticks) & U32_MASK < SIGN_32


@dataclass
class AqmBridged(Header):
    now_ticks: int = bits(32)
    arrival_ns: int = bits(32)


@dataclass
class AqmHeaders(Headers):
    """`struct headers_t` with the instance only the AQM program makes valid."""

    aqm_bridged: AqmBridged = field(default_factory=AqmBridged)


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
    mode: int = AQM_MODE_NONE
    slot: int = 0
    curve: int = 0
    ecn: int = 0
    hard: int = 0
    block_last: int = 0
    block_limit: int = 0
    block_end: int = 0
    block_sum_cells: int = 0
    avg_sum_cells: int = 0
    level: int = 0
    random_margin: int = 0
    target_ns: int = 0
    target_margin_ns: int = 0
    interval_ticks: int = 0
    tail_step_ticks: int = 0
    sojourn_ticks: int = 0
    deq_ticks: int = 0
    deadline_base_ticks: int = 0
    deadline_ticks: int = 0
    tail_base_ticks: int = 0
    tail_next_ticks: int = 0
    ok_to_drop: int = 0
    elapsed_ticks: int = 0
    due_count: int = 0
    tail: int = 0
    codel_drop: int = 0


class Aqm(TnaProgram):
    name = "aqm"

    def __init__(self, profile: HwProfile) -> None:
        super().__init__(profile)
        p4 = self.p4

        # ---- SwitchIngress ------------------------------------------
        ig = "SwitchIngress"
        self.trust = FeedbackTrust(p4, f"{ig}.trust")
        self.source_guard = SourceGuard(p4, f"{ig}.source_guard")
        self.forward = Ipv4Forward(p4, f"{ig}.forward")
        self.clock = IngressClockHook(p4, f"{ig}.clock")

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = TimestampQueueHook(p4, f"{eg}.queue_hook", profile.chip == "tofino2")
        self.random_hook = RandomHook(p4, f"{eg}.random_hook")
        self.aqm_drops = p4.counter(Counter(f"{eg}.aqm_drops", AQM_PORTS, "packets"))
        self.aqm_marks = p4.counter(Counter(f"{eg}.aqm_marks", AQM_PORTS, "packets"))

        self.set_red = Action(
            f"{eg}.set_red", (("slot", 8), ("curve", 8), ("ecn", 1), ("block_last", 32))
        )
        self.set_codel = Action(
            f"{eg}.set_codel",
            (
                ("slot", 8),
                ("curve", 8),
                ("ecn", 1),
                ("target_ns", 32),
                ("interval_ticks", 32),
                ("tail_step_ticks", 32),
            ),
        )
        self.no_aqm = Action(f"{eg}.no_aqm")
        self.aqm_queue = p4.table(
            Table(
                f"{eg}.aqm_queue",
                [
                    KeyField("eg_intr_md.egress_port", 9, "exact"),
                    KeyField("eg_intr_md.egress_qid", profile.queue_id_bits, "ternary"),
                ],
                [self.set_red, self.set_codel, self.no_aqm],
                (self.no_aqm.name, {}),
                size=AQM_QUEUE_ENTRIES,
            )
        )

        # RED
        self.red_block_packets = p4.register(Register(f"{eg}.red_block_packets", 32, AQM_SLOTS))
        self.red_block_sum_cells = p4.register(Register(f"{eg}.red_block_sum_cells", 32, AQM_SLOTS))
        self.red_avg_sum_cells = p4.register(Register(f"{eg}.red_avg_sum_cells", 32, AQM_SLOTS))
        self.set_level = Action(f"{eg}.set_level", (("level", 16), ("hard", 1)))
        self.no_drop = Action(f"{eg}.no_drop")
        self.red_level = p4.table(
            Table(
                f"{eg}.red_level",
                [
                    KeyField("eg_md.curve", 8, "exact"),
                    KeyField("eg_md.avg_sum_cells", 32, "ternary"),
                ],
                [self.set_level, self.no_drop],
                (self.no_drop.name, {}),
                size=AQM_RED_LEVEL_ENTRIES,
            )
        )

        # CoDel
        self.codel_first_above_ticks = p4.register(
            Register(f"{eg}.codel_first_above_ticks", 32, AQM_SLOTS)
        )
        self.codel_drop_start_ticks = p4.register(
            Register(f"{eg}.codel_drop_start_ticks", 32, AQM_SLOTS)
        )
        self.codel_count = p4.register(Register(f"{eg}.codel_count", 32, AQM_SLOTS))
        self.codel_tail_next_ticks = p4.register(
            Register(f"{eg}.codel_tail_next_ticks", 32, AQM_SLOTS)
        )
        self.set_due = Action(f"{eg}.set_due", (("due_count", 32), ("tail", 1)))
        self.no_due = Action(f"{eg}.no_due")
        self.codel_due = p4.table(
            Table(
                f"{eg}.codel_due",
                [
                    KeyField("eg_md.curve", 8, "exact"),
                    KeyField("eg_md.elapsed_ticks", 32, "ternary"),
                ],
                [self.set_due, self.no_due],
                (self.no_due.name, {}),
                size=AQM_CODEL_DUE_ENTRIES,
            )
        )

    # ---- RED register actions (one per register per packet) ---------
    def red_block_count(self, slot: int, md: EgMd) -> int:
        n = self.red_block_packets.read(slot)
        if n >= md.block_limit:
            self.red_block_packets.write(slot, 0)
            return 1
        self.red_block_packets.write(slot, (n + 1) & U32_MASK)
        return 0

    def red_sum_add(self, slot: int, md: EgMd) -> None:
        s = self.red_block_sum_cells.read(slot)
        self.red_block_sum_cells.write(slot, (s + md.queue.depth_cells) & U32_MASK)

    def red_sum_close(self, slot: int, md: EgMd) -> int:
        closed = (self.red_block_sum_cells.read(slot) + md.queue.depth_cells) & U32_MASK
        self.red_block_sum_cells.write(slot, 0)
        return closed

    def red_avg_set(self, slot: int, md: EgMd) -> int:
        self.red_avg_sum_cells.write(slot, md.block_sum_cells)
        return md.block_sum_cells

    def red_avg_read(self, slot: int) -> int:
        return self.red_avg_sum_cells.read(slot)

    # ---- CoDel register actions --------------------------------------
    def codel_below_target(self, slot: int) -> None:
        self.codel_first_above_ticks.write(slot, 0)

    def codel_above_target(self, slot: int, md: EgMd) -> int:
        first_above = self.codel_first_above_ticks.read(slot)
        if first_above == 0:
            self.codel_first_above_ticks.write(slot, md.deadline_ticks)
            return 0
        return int(not_before(md.deq_ticks, first_above))

    def codel_leave(self, slot: int) -> None:
        self.codel_drop_start_ticks.write(slot, 0)

    def codel_dropping(self, slot: int, md: EgMd) -> int:
        start = self.codel_drop_start_ticks.read(slot)
        if start == 0:
            self.codel_drop_start_ticks.write(slot, md.deq_ticks)
            return 0
        return (md.deq_ticks - start) & U32_MASK

    def codel_count_reset(self, slot: int) -> None:
        self.codel_count.write(slot, 0)

    def codel_count_step(self, slot: int, md: EgMd) -> int:
        count = self.codel_count.read(slot)
        if count < md.due_count:
            self.codel_count.write(slot, (count + 1) & U32_MASK)
            return 1
        return 0

    def codel_tail_reset(self, slot: int) -> None:
        self.codel_tail_next_ticks.write(slot, 0)

    def codel_tail_step(self, slot: int, md: EgMd) -> int:
        nxt = self.codel_tail_next_ticks.read(slot)
        if nxt == 0 or not_before(md.deq_ticks, nxt):
            self.codel_tail_next_ticks.write(slot, md.tail_next_ticks)
            return 1
        return 0

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        hdr = AqmHeaders()
        md = IgMd()
        pkt = Cursor(data)
        try:
            header_parser(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True)  # TNA drops on an ingress parser error

        hdr.bridged.set_valid()
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED
        hdr.bridged.class_id = 0
        hdr.bridged.ingress_port = ig_intr_md.ingress_port
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr
        md.now_ticks = self.clock.apply(ig_intr_md)
        hdr.aqm_bridged.set_valid()
        hdr.aqm_bridged.now_ticks = md.now_ticks
        hdr.aqm_bridged.arrival_ns = ig_intr_md.ingress_mac_tstamp_ns & U32_MASK

        md.forged = self.trust.apply(hdr, ig_intr_md.ingress_port, len(data))
        md.spoofed = self.source_guard.apply(hdr, ig_intr_md.ingress_port, len(data))
        if md.forged or md.spoofed:
            return IngressResult(drop=True)
        drop, egress_port = self.forward.apply(hdr)
        if drop:
            return IngressResult(drop=True)
        out = emit(
            hdr.bridged, hdr.aqm_bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback
        )
        return IngressResult(drop=False, egress_port=egress_port, data=out + pkt.payload)

    # ---- egress -----------------------------------------------------
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        hdr = AqmHeaders()
        md = EgMd()
        pkt = Cursor(data)
        hdr.bridged = pkt.extract(BridgedMd)
        hdr.aqm_bridged = pkt.extract(AqmBridged)
        header_parser(pkt, hdr, md.parsed)

        drop = False
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            drop = self.aqm(eg_intr_md, hdr, md, len(data))

        # ---- SwitchEgressDeparser ----
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=drop, data=out + pkt.payload)

    def aqm(self, eg_intr_md: EgressIntrinsic, hdr: AqmHeaders, md: EgMd, pkt_len: int) -> bool:
        """The queue's mechanism; True when the packet is dropped."""
        port = eg_intr_md.egress_port
        md.queue = self.queue_hook.apply(eg_intr_md, hdr.aqm_bridged.arrival_ns)
        md.random = self.random_hook.apply(eg_intr_md)
        r = self.aqm_queue.lookup(
            {"eg_intr_md.egress_port": port, "eg_intr_md.egress_qid": eg_intr_md.egress_qid}
        )
        if r.action == self.set_red.name:
            md.mode = AQM_MODE_RED
            md.slot = r.data["slot"]
            md.curve = r.data["curve"]
            md.ecn = r.data["ecn"]
            md.block_last = r.data["block_last"]
        elif r.action == self.set_codel.name:
            md.mode = AQM_MODE_CODEL
            md.slot = r.data["slot"]
            md.curve = r.data["curve"]
            md.ecn = r.data["ecn"]
            md.target_ns = r.data["target_ns"]
            md.interval_ticks = r.data["interval_ticks"]
            md.tail_step_ticks = r.data["tail_step_ticks"]
        # codel_times()
        now_ticks = hdr.aqm_bridged.now_ticks
        md.target_margin_ns = (md.queue.sojourn_ns - md.target_ns) & U32_MASK
        md.sojourn_ticks = md.queue.sojourn_ns >> CLOCK_TICK_SHIFT
        md.deadline_base_ticks = (now_ticks + md.interval_ticks) & U32_MASK
        md.tail_base_ticks = (now_ticks + md.tail_step_ticks) & U32_MASK

        if md.mode == AQM_MODE_RED:
            return self.red(hdr, md, port, pkt_len)
        if md.mode == AQM_MODE_CODEL:
            return self.codel(hdr, md, port, pkt_len, now_ticks)
        return False

    def red(self, hdr: AqmHeaders, md: EgMd, port: int, pkt_len: int) -> bool:
        slot = md.slot
        md.block_limit = 0 if md.queue.depth_cells == 0 else md.block_last
        md.block_end = self.red_block_count(slot, md)
        if md.block_end == 1:
            md.block_sum_cells = self.red_sum_close(slot, md)
            md.avg_sum_cells = self.red_avg_set(slot, md)
        else:
            self.red_sum_add(slot, md)
            md.avg_sum_cells = self.red_avg_read(slot)
        r = self.red_level.lookup(
            {"eg_md.curve": md.curve, "eg_md.avg_sum_cells": md.avg_sum_cells}
        )
        if r.action == self.set_level.name:
            md.level = r.data["level"]
            md.hard = r.data["hard"]
        md.random_margin = (md.random - md.level) & U16_MASK
        if md.random_margin >> 15 == 1:
            return self.verdict(hdr, md.ecn == 1 and md.hard == 0, port, pkt_len)
        return False

    def codel(self, hdr: AqmHeaders, md: EgMd, port: int, pkt_len: int, now_ticks: int) -> bool:
        slot = md.slot
        # codel_dequeue_times()
        md.deq_ticks = (now_ticks + md.sojourn_ticks) & U32_MASK
        md.deadline_ticks = (md.deadline_base_ticks + md.sojourn_ticks) & U32_MASK
        md.tail_next_ticks = (md.tail_base_ticks + md.sojourn_ticks) & U32_MASK
        if md.target_margin_ns >> 31 == 1:
            self.codel_below_target(slot)
            md.ok_to_drop = 0
        else:
            md.ok_to_drop = self.codel_above_target(slot, md)
        if md.ok_to_drop == 0:
            self.codel_leave(slot)
            self.codel_count_reset(slot)
            self.codel_tail_reset(slot)
            return False
        md.elapsed_ticks = self.codel_dropping(slot, md)
        r = self.codel_due.lookup(
            {"eg_md.curve": md.curve, "eg_md.elapsed_ticks": md.elapsed_ticks}
        )
        if r.action == self.set_due.name:
            md.due_count = r.data["due_count"]
            md.tail = r.data["tail"]
        if md.tail == 1:
            md.codel_drop = self.codel_tail_step(slot, md)
        else:
            md.codel_drop = self.codel_count_step(slot, md)
        if md.codel_drop == 1:
            return self.verdict(hdr, md.ecn == 1, port, pkt_len)
        return False

    def verdict(self, hdr: AqmHeaders, may_mark: bool, port: int, pkt_len: int) -> bool:
        """mark_ce() for an ECN-capable packet when marking is allowed, else
        drop_packet(); True when dropped."""
        if may_mark and hdr.ipv4.ecn != ECN_NOT_ECT:
            hdr.ipv4.ecn = ECN_CE
            self.aqm_marks.count(port, pkt_len)
            return False
        self.aqm_drops.count(port, pkt_len)
        return True
