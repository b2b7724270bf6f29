# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/aqm/aqm.p4, the AQM family: per egress queue one
of none, RED, CoDel, PIE, DCTCP, DA-DCTCP and DualPI2 (RFC 9332).

Read it beside the P4: same tables (names, keys, actions, defaults),
registers (widths) and order of decisions. SwitchEgress.aqm_queue and the
verdict are here; each mechanism's state is in its control
(models/switch/aqm_mechanisms.py: SwitchEgress.pi, .dadctcp, and RED's and
CoDel's objects under the names they had before the family, which the P4
keeps with @name). tna/aqm/README.md explains the design and lists every
departure from the papers and RFCs.
"""

from __future__ import annotations

from dataclasses import dataclass

from hw_profiles import HwProfile

from .aqm_mechanisms import (
    PI_COUPLED_SHIFT,
    PI_LEVEL_SHIFT,
    Codel,
    Dadctcp,
    EgMd,
    Pi,
    Red,
)
from .aqm_types import (
    AQM_CODEL_DUE_ENTRIES,
    AQM_L4S_QUEUE_ENTRIES,
    AQM_PORTS,
    AQM_QUEUE_ENTRIES,
    AQM_RED_LEVEL_ENTRIES,
    AQM_SLOTS,
    MODE_CODEL,
    MODE_DADCTCP,
    MODE_DCTCP,
    MODE_DUALPI2_C,
    MODE_DUALPI2_L,
    MODE_PIE,
    MODE_RED,
    SIGN_32,
    AqmBridged,
    AqmHeaders,
    IgMd,
    not_before,
)
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
from .core import Action, Counter, KeyField, Table
from .dadctcp import at_or_above
from .headers import ECN_CE, ECN_NOT_ECT, PKT_TYPE_BRIDGED, BridgedMd, ParsedMd, QueueMd, emit
from .tna import EgressIntrinsic, EgressResult, IngressIntrinsic, IngressResult, TnaProgram

# Names other modules import from the program's model.
__all__ = [
    "AQM_CODEL_DUE_ENTRIES",
    "AQM_RED_LEVEL_ENTRIES",
    "AQM_SLOTS",
    "Aqm",
    "AqmBridged",
    "EgMd",
    "not_before",
]


@dataclass(frozen=True)
class ActionParams:
    """aqm_queue's actions: name (under SwitchEgress) and parameters."""

    mode: int
    params: tuple[tuple[str, int], ...]


AQM_QUEUE_ACTIONS: dict[str, ActionParams] = {
    "set_red": ActionParams(MODE_RED, (("slot", 8), ("curve", 8), ("ecn", 1), ("block_last", 32))),
    "set_codel": ActionParams(
        MODE_CODEL,
        (
            ("slot", 8),
            ("curve", 8),
            ("ecn", 1),
            ("target_ns", 32),
            ("interval_ticks", 32),
            ("tail_step_ticks", 32),
        ),
    ),
    "set_pie": ActionParams(
        MODE_PIE,
        (
            ("slot", 8),
            ("curve", 8),
            ("ecn", 1),
            ("minus_t_update_ticks", 32),
            ("mark_max_level", 16),
        ),
    ),
    "set_dctcp": ActionParams(MODE_DCTCP, (("ecn", 1), ("k_cells", 32))),
    "set_dadctcp": ActionParams(
        MODE_DADCTCP, (("slot", 8), ("ecn", 1), ("k1_cells", 32), ("k2_cells", 32))
    ),
    "set_dualpi2_c": ActionParams(
        MODE_DUALPI2_C, (("slot", 8), ("curve", 8), ("ecn", 1), ("minus_t_update_ticks", 32))
    ),
    "set_dualpi2_l": ActionParams(MODE_DUALPI2_L, (("slot", 8), ("step_ns", 32))),
}


class AqmQueueHook(TimestampQueueHook):
    """control AqmQueueHook (tna/aqm/): TimestampQueueHook's table and
    actions, and also the depth as the packet leaves (deq_qdepth) for
    DCTCP's and DA-DCTCP's step; an injected depth stands for both."""

    def apply_both(self, eg_intr_md: EgressIntrinsic, arrival_ns: int) -> tuple[QueueMd, int]:
        q = self.apply(eg_intr_md, arrival_ns)
        r = self.queue_md_override.lookup({"eg_intr_md.egress_port": eg_intr_md.egress_port})
        deq = q.depth_cells if r.action == self.inject.name else eg_intr_md.deq_qdepth
        return q, deq


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
        self.set_l4s_queue = Action(f"{ig}.set_l4s_queue", (("qid", profile.queue_id_bits),))
        self.l4s_queue = p4.table(
            Table(
                f"{ig}.l4s_queue",
                [
                    KeyField("ig_tm_md.ucast_egress_port", 9, "exact"),
                    KeyField("hdr.ipv4.ecn", 2, "exact"),
                ],
                [self.set_l4s_queue, Action("NoAction")],
                ("NoAction", {}),
                size=AQM_L4S_QUEUE_ENTRIES,
            )
        )

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = AqmQueueHook(p4, f"{eg}.queue_hook", profile.chip == "tofino2")
        self.random_hook = RandomHook(p4, f"{eg}.random_hook")
        self.random2_hook = RandomHook(p4, f"{eg}.random2_hook", seed=1)
        self.aqm_drops = p4.counter(Counter(f"{eg}.aqm_drops", AQM_PORTS, "packets"))
        self.aqm_marks = p4.counter(Counter(f"{eg}.aqm_marks", AQM_PORTS, "packets"))
        self.actions = {
            f"{eg}.{name}": (Action(f"{eg}.{name}", spec.params), spec.mode)
            for name, spec in AQM_QUEUE_ACTIONS.items()
        }
        self.no_aqm = Action(f"{eg}.no_aqm")
        self.aqm_queue = p4.table(
            Table(
                f"{eg}.aqm_queue",
                [
                    KeyField("eg_intr_md.egress_port", 9, "exact"),
                    KeyField("eg_intr_md.egress_qid", profile.queue_id_bits, "ternary"),
                ],
                [*(a for a, _ in self.actions.values()), self.no_aqm],
                (self.no_aqm.name, {}),
                size=AQM_QUEUE_ENTRIES,
            )
        )
        # RED's and CoDel's objects keep the names they had before the
        # family (SwitchEgress.red_level, ...): aqm.p4 gives them with @name.
        self.red = Red(p4, eg)
        self.codel = Codel(p4, eg)
        self.pi = Pi(p4, f"{eg}.pi")
        self.dadctcp = Dadctcp(p4, f"{eg}.dadctcp")

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
        # RFC 9332 2.5.1.1: ECT(1) and CE to the pair's L queue, Not-ECT and
        # ECT(0) to its classic queue (the controller writes all four).
        qid = 0
        r = self.l4s_queue.lookup(
            {"ig_tm_md.ucast_egress_port": egress_port, "hdr.ipv4.ecn": hdr.ipv4.ecn}
        )
        if r.action == self.set_l4s_queue.name:
            qid = r.data["qid"]
        out = emit(
            hdr.bridged, hdr.aqm_bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback
        )
        return IngressResult(drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload)

    # ---- egress -----------------------------------------------------
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        hdr = AqmHeaders()
        md = EgMd()
        pkt = Cursor(data)
        hdr.bridged = pkt.extract(BridgedMd)
        hdr.aqm_bridged = pkt.extract(AqmBridged)
        header_parser(pkt, hdr, ParsedMd())

        drop = False
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            drop = self.aqm(eg_intr_md, hdr, md, len(data))

        # ---- SwitchEgressDeparser ----
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=drop, data=out + pkt.payload)

    def configure(self, eg_intr_md: EgressIntrinsic, md: EgMd) -> None:
        """aqm_queue: the queue's mechanism, slot, curve and settings."""
        r = self.aqm_queue.lookup(
            {
                "eg_intr_md.egress_port": eg_intr_md.egress_port,
                "eg_intr_md.egress_qid": eg_intr_md.egress_qid,
            }
        )
        if r.action == self.no_aqm.name:
            return
        md.mode = self.actions[r.action][1]
        for name, value in r.data.items():
            # DCTCP's one threshold is DA-DCTCP's K2: one field, one comparison.
            setattr(md, "k2_cells" if name == "k_cells" else name, value)

    def aqm(self, eg_intr_md: EgressIntrinsic, hdr: AqmHeaders, md: EgMd, n: int) -> bool:
        """The queue's mechanism, then the verdict; True when dropped."""
        md.queue, md.deq_depth_cells = self.queue_hook.apply_both(
            eg_intr_md, hdr.aqm_bridged.arrival_ns
        )
        md.random = self.random_hook.apply(eg_intr_md)
        md.random2 = self.random2_hook.apply(eg_intr_md)
        self.configure(eg_intr_md, md)
        now_ticks = hdr.aqm_bridged.now_ticks
        # times(): CoDel's (aqm.p4's codel_times)
        md.target_margin_ns = (md.queue.sojourn_ns - md.target_ns) & U32_MASK
        md.sojourn_ticks = md.queue.sojourn_ns >> CLOCK_TICK_SHIFT
        md.deadline_base_ticks = (now_ticks + md.interval_ticks) & U32_MASK
        md.tail_base_ticks = (now_ticks + md.tail_step_ticks) & U32_MASK

        may_mark = md.ecn == 1
        if md.mode == MODE_RED:
            self.red.apply(md)
            may_mark = may_mark and md.hard == 0
        elif md.mode == MODE_CODEL:
            self.codel.apply(md, now_ticks)
        elif md.mode == MODE_PIE:
            self.pi.step(md, now_ticks)
            md.level = md.prob >> PI_LEVEL_SHIFT
            md.chosen = int(md.random < md.level)
            # RFC 8033 5.1: ECN-capable packets are marked only while p is
            # below mark_ecnth; above it they are dropped.
            md.hard = int(md.level >= md.mark_max_level)
            may_mark = may_mark and md.hard == 0
        elif md.mode == MODE_DUALPI2_C:
            self.pi.step(md, now_ticks)
            md.level = md.prob >> PI_LEVEL_SHIFT
            # p'^2: both draws below p'.
            md.chosen = int(md.random < md.level and md.random2 < md.level)
            # Overload (p_C = p'^2 >= 1/4): dropped even when ECN-capable.
            md.hard = md.prob >> 31
            may_mark = may_mark and md.hard == 0
        elif md.mode == MODE_DUALPI2_L:
            self.pi.read(md)
            md.level = md.prob >> PI_COUPLED_SHIFT  # k p', k = 2
            at_step = (md.queue.sojourn_ns - md.step_ns) & SIGN_32 == 0
            md.chosen = int(at_step or md.random < md.level)
            may_mark = True  # L4S packets are marked; a Not-ECT one is dropped
        elif md.mode == MODE_DCTCP:
            md.chosen = int(at_or_above(md.deq_depth_cells, md.k2_cells))
        elif md.mode == MODE_DADCTCP:
            self.dadctcp.apply(md)
        if md.chosen == 0:
            return False
        return self.verdict(hdr, may_mark, eg_intr_md.egress_port, n)

    def verdict(self, hdr: AqmHeaders, may_mark: bool, port: int, pkt_len: int) -> bool:
        """mark_ce() for an ECN-capable packet when marking is allowed, else
        drop_packet(); True when dropped."""
        if may_mark and hdr.ipv4.ecn != ECN_NOT_ECT:
            hdr.ipv4.ecn = ECN_CE
            self.aqm_marks.count(port, pkt_len)
            return False
        self.aqm_drops.count(port, pkt_len)
        return True
