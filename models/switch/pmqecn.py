# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/pmqecn/pmqecn.p4, control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths, saturation), same order of decisions.
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
    SourceGuard,
    bridge,
    egress_prefix_parser,
    header_parser,
    rebuild_feedback,
)
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ECN_CE,
    ECN_NOT_ECT,
    FEEDBACK_TYPE_PMQECN_RATE,
    PKT_TYPE_MIRROR_FEEDBACK,
    FbMirror,
    Headers,
    ParsedMd,
    QueueMd,
    emit,
)
from .tna import (
    EgressIntrinsic,
    EgressResult,
    IngressIntrinsic,
    IngressMirror,
    IngressResult,
    TnaProgram,
)

PMQECN_CLASSES = 1024
# Class and virtual-queue ids are 10 bits where they index a register
# (class_slot_t/vq_slot_t in the P4: a slice of the bridged 16-bit id).
SLOT_MASK = PMQECN_CLASSES - 1
PMQECN_VQS = 1024
# ecn_threshold holds an entry per class and ingress pipe: a device port's
# pipe is its bits 8:7 on both chips (ig_intr_md.ingress_port[8:7]).
PIPE_KEY_VALUES = 4
PMQECN_THRESHOLD_ENTRIES = PMQECN_CLASSES * PIPE_KEY_VALUES
PIPE_SHIFT = 7
PMQECN_LOG_ENTRIES = 4096
PMQECN_EXP_ENTRIES = 8192
U32_MAX = 0xFFFFFFFF
# A virtual queue stops growing here; every length, threshold and drain stays
# below 2^31 (the controller writes drains of at most VQ_DRAIN_MAX_BYTES).
VQ_CAP_BYTES = 0x3FFFC000
VQ_NO_THRESHOLD = 0x7FFFFFFF
VQ_DRAIN_MAX_BYTES = 1 << 30
ETHERNET_HEADER_BYTES = 14
MIRROR_TYPE_FEEDBACK = 2


def ingress_pipe(port: int) -> int:
    """ig_intr_md.ingress_port[8:7]: the pipe in ecn_threshold's key."""
    return (port >> PIPE_SHIFT) & (PIPE_KEY_VALUES - 1)


def sojourn_registers(epoch: int) -> tuple[str, str]:
    """The sojourn half `epoch` names: its (sum, departures) registers, each
    indexed by class_id[9:0]."""
    return (f"SwitchEgress.sojourn_sum_ns_{epoch}", f"SwitchEgress.sojourn_pkts_{epoch}")


def sat_add_u32(a: int, b: int) -> int:
    """`|+|` on bit<32>: saturate instead of wrapping."""
    return min(a + b, U32_MAX)


def sat_sub_u32(a: int, b: int) -> int:
    """`|-|` on bit<32>."""
    return max(a - b, 0)


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False
    vq_id: int = 0
    wrr_weight: int = 0
    wrr_last_level: int = 0
    wrr_advance: int = 0
    wrr_level: int = 0
    now_ticks: int = 0
    frame_bytes: int = 0
    vq_elapsed_ticks: int = 0
    vq_rate_log2_q7: int = 0
    vq_log_drain_q7: int = 0
    threshold_bytes: int = 0
    vq_shrink_bytes: int = 0
    vq_len_bytes: int = 0
    k_minus_vq_bytes: int = 0
    mark_original: int = 0
    fb_interval_ticks: int = 0
    fb_wait_ticks: int = 0
    fb_session_on: int = 0
    mirror_session: int = 0
    mirror: bool = False
    fb_queue_id: int = 0
    fb_rate: int = 0
    fb_target_rate: int = 0


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    sojourn_sample_mask: int = 0
    sojourn_seen: int = 0
    sojourn_epoch: int = 0


class Pmqecn(TnaProgram):
    name = "pmqecn"

    def __init__(self, profile: HwProfile) -> None:
        super().__init__(profile)
        p4 = self.p4
        qid_bits = profile.queue_id_bits
        mirror_id_bits = profile.mirror_session_max.bit_length()

        # ---- SwitchIngress ------------------------------------------
        ig = "SwitchIngress"
        self.trust = FeedbackTrust(p4, f"{ig}.trust")
        self.source_guard = SourceGuard(p4, f"{ig}.source_guard")
        self.forward = Ipv4Forward(p4, f"{ig}.forward")
        self.clock = IngressClockHook(p4, f"{ig}.clock")
        self.class_counters = p4.counter(
            Counter(f"{ig}.class_counters", PMQECN_CLASSES, "packets_and_bytes")
        )
        self.vq_used = p4.register(Register(f"{ig}.vq_used", 16, PMQECN_VQS))
        self.vq_level = p4.register(Register(f"{ig}.vq_level", 8, PMQECN_VQS))
        self.set_class = Action(
            f"{ig}.set_class", (("class_id", 10), ("vq_id", 10), ("qid", qid_bits))
        )
        self.unclassified = Action(f"{ig}.unclassified")
        self.classify = p4.table(
            Table(
                f"{ig}.classify",
                [
                    KeyField("hdr.ipv4.src_addr", 32, "ternary"),
                    KeyField("hdr.ipv4.dst_addr", 32, "ternary"),
                    KeyField("hdr.ipv4.dscp", 6, "ternary"),
                    KeyField("hdr.ipv4.protocol", 8, "ternary"),
                ],
                [self.set_class, self.unclassified],
                (self.unclassified.name, {}),
                size=1024,
            )
        )
        self.wrr = Action(f"{ig}.wrr", (("weight", 16), ("last_level", 8)))
        self.vq_weight = p4.table(
            Table(
                f"{ig}.vq_weight",
                [KeyField("ig_md.vq_id", 10, "exact")],
                [self.wrr, Action("NoAction")],
                ("NoAction", {}),
                size=PMQECN_VQS,
            )
        )
        self.set_priority_queue = Action(f"{ig}.set_priority_queue", (("qid", qid_bits),))
        self.wrr_level_queue = p4.table(
            Table(
                f"{ig}.wrr_level_queue",
                [KeyField("ig_md.wrr_level", 8, "exact")],
                [self.set_priority_queue, Action("NoAction")],
                ("NoAction", {}),
                size=32,
            )
        )

        self.vq_last_tick = p4.register(Register(f"{ig}.vq_last_tick", 32, PMQECN_CLASSES))
        self.vq_bytes = p4.register(Register(f"{ig}.vq_bytes", 32, PMQECN_CLASSES))
        self.class_arrivals = p4.register(Register(f"{ig}.class_arrivals", 32, PMQECN_CLASSES))
        # Initially quiet since ever (saturated): a class's first copy goes out.
        self.feedback_gate = p4.register(
            Register(
                f"{ig}.feedback_gate",
                64,
                PMQECN_CLASSES,
                initial=U32_MAX << 32,
                members=("quiet", "made"),
            )
        )
        self.set_threshold = Action(
            f"{ig}.set_threshold",
            (
                ("threshold_bytes", 32),
                ("mark_original", 1),
                ("rate_log2_q7", 16),
                ("feedback_interval_ticks", 32),
            ),
        )
        self.no_threshold = Action(f"{ig}.no_threshold")
        self.ecn_threshold = p4.table(
            Table(
                f"{ig}.ecn_threshold",
                [
                    KeyField("hdr.bridged.class_id", 16, "exact"),
                    KeyField("ingress_pipe", 2, "exact"),
                ],
                [self.set_threshold, self.no_threshold],
                (self.no_threshold.name, {}),
                size=PMQECN_THRESHOLD_ENTRIES,
            )
        )
        self.log_elapsed = Action(f"{ig}.log_elapsed", (("log_elapsed_q7", 16),))
        self.no_elapsed = Action(f"{ig}.no_elapsed")
        self.vq_log_elapsed = p4.table(
            Table(
                f"{ig}.vq_log_elapsed",
                [KeyField("ig_md.vq_elapsed_ticks", 32, "ternary")],
                [self.log_elapsed, self.no_elapsed],
                (self.no_elapsed.name, {}),
                size=PMQECN_LOG_ENTRIES,
            )
        )
        self.drain = Action(f"{ig}.drain", (("drain_bytes", 32),))
        self.vq_exp_drain = p4.table(
            Table(
                f"{ig}.vq_exp_drain",
                [KeyField("ig_md.vq_log_drain_q7", 16, "exact")],
                [self.drain],
                (self.drain.name, {"drain_bytes": 0}),
                size=PMQECN_EXP_ENTRIES,
            )
        )
        self.set_rates = Action(f"{ig}.set_rates", (("rate", 32), ("target_rate", 32)))
        self.class_rates = p4.table(
            Table(
                f"{ig}.class_rates",
                [KeyField("hdr.bridged.class_id", 16, "exact")],
                [self.set_rates],
                (self.set_rates.name, {"rate": 0, "target_rate": 0}),
                size=PMQECN_CLASSES,
            )
        )
        self.set_feedback_session = Action(
            f"{ig}.set_feedback_session", (("session_id", mirror_id_bits),)
        )
        self.no_feedback_session = Action(f"{ig}.no_feedback_session")
        self.feedback_session = p4.table(
            Table(
                f"{ig}.feedback_session",
                [KeyField("hdr.bridged.ingress_port", 9, "exact")],
                [self.set_feedback_session, self.no_feedback_session],
                (self.no_feedback_session.name, {}),
                size=512,
            )
        )

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = QueueMetadataHook(p4, f"{eg}.queue_hook")
        # One (sum, departures) pair of registers per half, indexed by epoch.
        halves = [sojourn_registers(epoch) for epoch in (0, 1)]
        self.sojourn_sum_ns = tuple(
            p4.register(Register(total, 32, PMQECN_CLASSES)) for total, _ in halves
        )
        self.sojourn_pkts = tuple(
            p4.register(Register(pkts, 32, PMQECN_CLASSES)) for _, pkts in halves
        )
        self.set_sojourn_epoch = Action(f"{eg}.set_sojourn_epoch", (("epoch", 1),))
        self.sojourn_epoch = p4.table(
            Table(
                f"{eg}.sojourn_epoch",
                [],
                [self.set_sojourn_epoch],
                (self.set_sojourn_epoch.name, {"epoch": 0}),
                size=1,
            )
        )
        self.feedback_rebuilt = p4.counter(
            Counter(f"{eg}.feedback_rebuilt", PMQECN_CLASSES, "packets")
        )
        self.set_sojourn_sampling = Action(f"{eg}.set_sojourn_sampling", (("sample_mask", 32),))
        self.sojourn_sampling = p4.table(
            Table(
                f"{eg}.sojourn_sampling",
                [KeyField("hdr.bridged.class_id", 16, "exact")],
                [self.set_sojourn_sampling],
                (self.set_sojourn_sampling.name, {"sample_mask": 0}),
                size=PMQECN_CLASSES,
            )
        )

    # ---- register actions (one per register per packet) ------------
    def vq_used_step(self, index: int, md: IgMd) -> int:
        used = self.vq_used.read(index)
        if used >= md.wrr_weight:
            used, advance = 1, 1
        else:
            used, advance = (used + 1) & self.vq_used.max, 0
        self.vq_used.write(index, used)
        return advance

    def vq_level_step(self, index: int, md: IgMd) -> int:
        level = self.vq_level.read(index)
        if md.wrr_advance == 1:
            level = 0 if level >= md.wrr_last_level else (level + 1) & self.vq_level.max
        self.vq_level.write(index, level)
        return level

    def vq_clock_step(self, index: int, md: IgMd) -> int:
        last = self.vq_last_tick.read(index)
        self.vq_last_tick.write(index, md.now_ticks)
        return (md.now_ticks - last) & U32_MASK

    def vq_grow(self, index: int, md: IgMd) -> int:
        q = self.vq_bytes.read(index)
        if q < VQ_CAP_BYTES:
            q = (q - md.vq_shrink_bytes) & U32_MASK
            self.vq_bytes.write(index, q)
        return q

    def vq_shrink(self, index: int, md: IgMd) -> int:
        q = sat_sub_u32(self.vq_bytes.read(index), md.vq_shrink_bytes)
        self.vq_bytes.write(index, q)
        return q

    def class_arrivals_add(self, index: int) -> None:
        self.class_arrivals.write(index, (self.class_arrivals.read(index) + 1) & U32_MASK)

    def feedback_gate_check(self, index: int, md: IgMd) -> int:
        """The mirror type: a copy if the class has been quiet for the interval."""
        g = self.feedback_gate.split(self.feedback_gate.read(index))
        if g["quiet"] >= md.fb_wait_ticks:
            g["quiet"] = 0
            g["made"] = (g["made"] + 1) & U32_MASK
            mirror_type = MIRROR_TYPE_FEEDBACK
        else:
            g["quiet"] = sat_add_u32(g["quiet"], md.vq_elapsed_ticks)
            mirror_type = 0
        self.feedback_gate.write(index, self.feedback_gate.pack(g))
        return mirror_type

    def feedback_gate_wait(self, index: int, md: IgMd) -> None:
        g = self.feedback_gate.split(self.feedback_gate.read(index))
        g["quiet"] = sat_add_u32(g["quiet"], md.vq_elapsed_ticks)
        self.feedback_gate.write(index, self.feedback_gate.pack(g))

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
        qid = 0

        bridge(hdr, ig_intr_md.ingress_port)
        md.now_ticks = self.clock.apply(ig_intr_md)
        md.frame_bytes = hdr.ipv4.total_len + ETHERNET_HEADER_BYTES

        md.forged = self.trust.apply(hdr, ig_intr_md.ingress_port, len(data))
        md.spoofed = self.source_guard.apply(hdr, ig_intr_md.ingress_port, len(data))
        if md.forged or md.spoofed:
            return IngressResult(drop=True)
        drop, egress_port = self.forward.apply(hdr)
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            r = self.classify.lookup(
                {
                    "hdr.ipv4.src_addr": hdr.ipv4.src_addr,
                    "hdr.ipv4.dst_addr": hdr.ipv4.dst_addr,
                    "hdr.ipv4.dscp": hdr.ipv4.dscp,
                    "hdr.ipv4.protocol": hdr.ipv4.protocol,
                }
            )
            if r.action == self.set_class.name:
                hdr.bridged.class_id = r.data["class_id"]
                md.vq_id = r.data["vq_id"]
                qid = r.data["qid"]
                md.fb_queue_id = qid & 0xFF
            else:
                hdr.bridged.class_id = 0
                md.vq_id = 0
            # Counted where it is classified, whether or not routing dropped it.
            self.class_counters.count(hdr.bridged.class_id & SLOT_MASK, len(data))
            s = self.feedback_session.lookup({"hdr.bridged.ingress_port": hdr.bridged.ingress_port})
            if s.action == self.set_feedback_session.name:
                md.mirror_session = s.data["session_id"]
                md.fb_session_on = 1
            else:
                md.fb_session_on = 0
            # The P4 gates each WRR and virtual-queue step separately so the
            # two chains can share stages; they touch disjoint state, so
            # running one chain after the other here decides the same.
            w = self.vq_weight.lookup({"ig_md.vq_id": md.vq_id})
            if w.hit and w.action == self.wrr.name:
                md.wrr_weight = w.data["weight"]
                md.wrr_last_level = w.data["last_level"]
                md.wrr_advance = self.vq_used_step(md.vq_id, md)
                md.wrr_level = self.vq_level_step(md.vq_id, md)
                q = self.wrr_level_queue.lookup({"ig_md.wrr_level": md.wrr_level})
                if q.action == self.set_priority_queue.name:
                    qid = q.data["qid"]
                    md.fb_queue_id = qid & 0xFF
            if hdr.bridged.class_id != 0:
                self.virtual_queue(hdr, md, ig_intr_md.ingress_port)
        mirror = None
        if md.mirror:
            m = FbMirror(
                pkt_type=PKT_TYPE_MIRROR_FEEDBACK,
                class_id=hdr.bridged.class_id,
                queue_id=md.fb_queue_id,
                flow_protocol=hdr.ipv4.protocol,
                flow_src_port=md.parsed.l4_src_port,
                flow_dst_port=md.parsed.l4_dst_port,
                rate=md.fb_rate,
                target_rate=md.fb_target_rate,
                orig_src_mac=hdr.bridged.orig_src_mac,
                orig_dst_mac=hdr.bridged.orig_dst_mac,
            )
            mirror = IngressMirror(md.mirror_session, m.pack())
        if drop:
            # drop_ctl = 1 leaves the mirror copy alone (TNA).
            return IngressResult(drop=True, mirror=mirror)
        out = emit(hdr.bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return IngressResult(
            drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload, mirror=mirror
        )

    def virtual_queue(self, hdr: Headers, md: IgMd, ingress_port: int) -> None:
        """The class's virtual queue, the arrival-time marking decision and
        the class's feedback gate."""
        cls = hdr.bridged.class_id
        slot = cls & SLOT_MASK
        md.vq_elapsed_ticks = self.vq_clock_step(slot, md)
        self.class_arrivals_add(slot)
        t = self.ecn_threshold.lookup(
            {"hdr.bridged.class_id": cls, "ingress_pipe": ingress_pipe(ingress_port)}
        )
        if t.action == self.set_threshold.name:
            md.threshold_bytes = t.data["threshold_bytes"]
            md.mark_original = t.data["mark_original"]
            md.vq_rate_log2_q7 = t.data["rate_log2_q7"]
            md.fb_interval_ticks = t.data["feedback_interval_ticks"]
        else:
            md.threshold_bytes = VQ_NO_THRESHOLD
            md.mark_original = 0
            md.vq_rate_log2_q7 = 0
            md.fb_interval_ticks = 0
        md.fb_wait_ticks = sat_sub_u32(md.fb_interval_ticks, md.vq_elapsed_ticks)
        e = self.vq_log_elapsed.lookup({"ig_md.vq_elapsed_ticks": md.vq_elapsed_ticks})
        if e.action == self.log_elapsed.name:
            md.vq_log_drain_q7 = (e.data["log_elapsed_q7"] + md.vq_rate_log2_q7) & 0xFFFF
        else:
            md.vq_log_drain_q7 = 0
        d = self.vq_exp_drain.lookup({"ig_md.vq_log_drain_q7": md.vq_log_drain_q7})
        drain_bytes = d.data["drain_bytes"]
        md.vq_shrink_bytes = (drain_bytes - md.frame_bytes) & U32_MASK
        if md.vq_shrink_bytes >> 31 == 1:
            md.vq_len_bytes = self.vq_grow(slot, md)
        else:
            md.vq_len_bytes = self.vq_shrink(slot, md)
        md.k_minus_vq_bytes = (md.threshold_bytes - md.vq_len_bytes) & U32_MASK
        over = md.k_minus_vq_bytes >> 31 == 1
        if over and md.mark_original == 1 and hdr.ipv4.ecn != ECN_NOT_ECT:
            hdr.ipv4.ecn = ECN_CE
        # Every packet of the class runs one of the gate's two actions.
        if over and md.parsed.ipv4_plain and md.fb_session_on == 1:
            rates = self.class_rates.lookup({"hdr.bridged.class_id": cls})
            md.fb_rate = rates.data["rate"]
            md.fb_target_rate = rates.data["target_rate"]
            md.mirror = self.feedback_gate_check(slot, md) == MIRROR_TYPE_FEEDBACK
        else:
            self.feedback_gate_wait(slot, md)

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
        egress_prefix_parser(pkt, hdr, md.parsed)

        if hdr.fb_mirror.is_valid():
            self.feedback_rebuilt.count(hdr.fb_mirror.class_id & SLOT_MASK, len(data))
            rebuild_feedback(hdr, FEEDBACK_TYPE_PMQECN_RATE)
        elif hdr.bridged.class_id != 0 and not hdr.feedback.is_valid():
            md.queue = self.queue_hook.apply(eg_intr_md)
            md.sojourn_epoch = self.sojourn_epoch.lookup({}).data["epoch"]
            slot = hdr.bridged.class_id & SLOT_MASK
            t = self.sojourn_sampling.lookup({"hdr.bridged.class_id": hdr.bridged.class_id})
            md.sojourn_sample_mask = t.data["sample_mask"]
            # sojourn_pkts_add_<epoch>: the departures before this one, then one more.
            pkts = self.sojourn_pkts[md.sojourn_epoch]
            md.sojourn_seen = pkts.read(slot)
            pkts.write(slot, sat_add_u32(md.sojourn_seen, 1))
            md.sojourn_seen &= md.sojourn_sample_mask
            if md.sojourn_seen == 0:
                total = self.sojourn_sum_ns[md.sojourn_epoch]
                total.write(slot, sat_add_u32(total.read(slot), md.queue.sojourn_ns))

        # ---- SwitchEgressDeparser ----
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=False, data=out + pkt.payload)
