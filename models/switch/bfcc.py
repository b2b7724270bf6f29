# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/bfcc/bfcc.p4, control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths, saturation, one action per register per packet), same
order of decisions. tna/bfcc/README.md explains the design.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hw_profiles import HwProfile

from .common import (
    Cursor,
    DequeueQueueHook,
    FeedbackTrust,
    Ipv4Forward,
    ParserError,
    QueueMetadataHook,
    SourceGuard,
    bridge,
)
from .common import header_parser as parse_headers
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ETHERTYPE_IPV4,
    ETHERTYPE_TOFCC_FEEDBACK,
    FEEDBACK_TYPE_BACKPRESSURE,
    FEEDBACK_TYPE_BACKPRESSURE_CLEAR,
    FEEDBACK_VERSION,
    BridgedMd,
    Ethernet,
    Feedback,
    Header,
    Headers,
    Ipv4,
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
    IngressMirror,
    IngressResult,
    TnaProgram,
)

# Constants of tna/include/defines.p4 that only BFCC uses
# (tests/test_bfcc_model.py holds them to the P4 source).
ETHERTYPE_TOFCC_FAKE = 0x88B5
PKT_TYPE_MIRROR_BACKPRESSURE = 3
PKT_TYPE_MIRROR_RECIRCULATE = 4
MIRROR_TYPE_BACKPRESSURE = 3
MIRROR_TYPE_RECIRCULATE = 4

# Constants of tna/bfcc/bfcc.p4, its sizes those of tna/include/size.p4
# (BFCC_PORTS is its TOFCC_PORTS).
BFCC_PORTS = 512
BFCC_GROUPS = 256
BFCC_CONGESTION_POINTS = 16
BFCC_VQ_SLOTS = 4096
BFCC_QIDS = 128
BFCC_SENDER_NOTIFY_ENTRIES = 512
BFCC_SENDER_GROUP_ENTRIES = 1024
BFCC_DEGREES = 4
BFCC_DEGREE_MILD = 1
BFCC_DEGREE_MODERATE = 2
BFCC_DEGREE_SEVERE = 3
BFCC_WINDOW_CLOSED = 0xFF
BFCC_KEY_FIRST_COUNT = 0xFE
BFCC_KEY_ONE_COUNT = 0x100
# Backpressure copied to the other pipes (tna/bfcc/messages.p4, bp_replicate).
PKT_TYPE_MIRROR_BP_REPLICA = 6
MIRROR_TYPE_BP_REPLICA = 6
# Bits of the ns clock that make the refresh epoch (monitor's refresh_mask).
BFCC_EPOCH_LOW_BIT = 19
BFCC_EPOCH_BITS = 6

# RT per degree the controller installs unless told otherwise (paper 4.2.2:
# 9, 3, 1 real packets per fake, i.e. rates 9/10, 3/4, 1/2).
DEFAULT_RATE_THRESHOLDS = {BFCC_DEGREE_MILD: 9, BFCC_DEGREE_MODERATE: 3, BFCC_DEGREE_SEVERE: 1}

U32 = 0xFFFFFFFF


def sat_sub_u32(a: int, b: int) -> int:
    """`|-|` on bit<32>."""
    return max(a - b, 0)


@dataclass
class BfccBridged(Header):
    bp_degree: int = bits(8)


@dataclass
class BpMirror(Header):
    pkt_type: int = bits(8)
    msg_type: int = bits(8)
    group: int = bits(8)
    degree: int = bits(8)
    src_mac: int = bits(48)
    dst_mac: int = bits(48)


@dataclass
class RecircMirror(Header):
    pkt_type: int = bits(8)


@dataclass
class BpReplicaMirror(Header):
    """bp_replica_mirror_h: in front of a message copied to another pipe."""

    pkt_type: int = bits(8)
    origin_port: int = bits(16)
    pipes_left: int = bits(8)


@dataclass
class BfccHeaders(Headers):
    """`struct headers_t` with the instances only BFCC makes valid."""

    bfcc_bridged: BfccBridged = field(default_factory=BfccBridged)
    bp_mirror: BpMirror = field(default_factory=BpMirror)
    recirc_mirror: RecircMirror = field(default_factory=RecircMirror)


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False
    now_ns: int = 0
    bp_key: int = 0
    high_qid: int = 0
    low_qid: int = 0
    named_group_only: int = 0
    bp_alive_max_ns: int = 0
    bp_age_ns: int = 0
    bp_overage_ns: int = 0
    bp_port: int = 0
    replicate: int = 0
    replica: int = 0
    replica_session: int = 0
    replica_left: int = 0
    mirror_pkt_type: int = 0
    mirror_type: int = 0  # ig_dprsr_md.mirror_type


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    rate_threshold_packets: int = 0
    recirculation_session: int = 0
    make_fake: int = 0
    recirc_level_cells: int = 0
    recirc_ok: int = 0
    recirc_queue: QueueMd = field(default_factory=QueueMd)
    bp_replica: BpReplicaMirror = field(default_factory=BpReplicaMirror)
    cp_id: int = 0
    congestion_threshold_cells: int = 0
    t_min_ns: int = 0
    t_max_ns: int = 0
    window_packets: int = 0
    bp_epoch_ns: int = 0
    depth_margin_cells: int = 0
    t_min_margin_ns: int = 0
    t_max_margin_ns: int = 0
    degree: int = 0
    window_id: int = 0
    vq_index: int = 0
    vq_first_key: int = 0
    vq_key: int = 0
    best_key: int = 0
    bp_tag: int = 0
    bp_report: int = 0
    bp_group: int = 0
    bp_key: int = 0
    bp_prev_key: int = 0
    bp_msg_type: int = 0
    bp_degree: int = 0
    mirror_session: int = 0
    mirror_pkt_type: int = 0
    mirror_type: int = 0  # eg_dprsr_md.mirror_type
    bp_src_mac: int = 0
    bp_dst_mac: int = 0


def margin_u32(threshold: int, measure: int) -> int:
    """`threshold - measure` on bit<32>, as classify() computes it."""
    return (threshold - measure) & U32


def bit31(value: int) -> int:
    """`value[31:31]`: set when a 32-bit `threshold - measure` went below 0."""
    return (value >> 31) & 1


def egress_parser(pkt: Cursor, hdr: BfccHeaders, md: EgMd) -> None:
    """parser SwitchEgressParser of bfcc.p4 (eg_intr_md is passed separately)."""
    pkt_type = pkt.lookahead_byte()
    if pkt_type == PKT_TYPE_MIRROR_BACKPRESSURE:
        hdr.bp_mirror = pkt.extract(BpMirror)
        hdr.ethernet = pkt.extract(Ethernet)
        return
    if pkt_type == PKT_TYPE_MIRROR_RECIRCULATE:
        hdr.recirc_mirror = pkt.extract(RecircMirror)
        hdr.ethernet = pkt.extract(Ethernet)
        hdr.ipv4 = pkt.extract(Ipv4)
        return
    if pkt_type == PKT_TYPE_MIRROR_BP_REPLICA:
        md.bp_replica = pkt.extract(BpReplicaMirror)
        hdr.ethernet = pkt.extract(Ethernet)
        hdr.feedback = pkt.extract(Feedback)
        return
    hdr.bridged = pkt.extract(BridgedMd)
    hdr.bfcc_bridged = pkt.extract(BfccBridged)
    parse_headers(pkt, hdr, md.parsed)


def ingress_deparse(hdr: BfccHeaders) -> bytes:
    """SwitchIngressDeparser's emit list (bfcc.p4): one for every path."""
    return emit(
        hdr.bridged, hdr.bfcc_bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback
    )


class Bfcc(TnaProgram):
    name = "bfcc"

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
        self.fake_drops = p4.counter(Counter(f"{ig}.fake_drops", BFCC_PORTS, "packets"))
        self.backpressure_received = p4.counter(
            Counter(f"{ig}.backpressure_received", BFCC_PORTS, "packets")
        )
        self.admitted_by_qid = p4.counter(Counter(f"{ig}.admitted_by_qid", BFCC_QIDS, "packets"))
        self.bp_state = p4.register(Register(f"{ig}.bp_state", 16, BFCC_PORTS))
        self.bp_recorded_ns = p4.register(Register(f"{ig}.bp_recorded_ns", 32, BFCC_PORTS))
        self.set_group = Action(f"{ig}.set_group", (("group", 8),))
        self.sender_group = p4.table(
            Table(
                f"{ig}.sender_group",
                [KeyField("hdr.ipv4.src_addr", 32, "lpm")],
                [self.set_group, Action("NoAction")],
                ("NoAction", {}),
                size=BFCC_SENDER_GROUP_ENTRIES,
            )
        )
        self.react = Action(
            f"{ig}.react",
            (
                ("high_qid", qid_bits),
                ("low_qid", qid_bits),
                ("bp_expiry_ns", 32),
                ("named_group_only", 1),
            ),
        )
        self.reaction_point = p4.table(
            Table(
                f"{ig}.reaction_point",
                [KeyField("ig_tm_md.ucast_egress_port", 9, "exact")],
                [self.react, Action("NoAction")],
                ("NoAction", {}),
                size=BFCC_PORTS,
            )
        )

        self.replicate = Action(f"{ig}.replicate", (("session", mirror_id_bits), ("pipes_left", 8)))
        self.relay_replica = Action(f"{ig}.relay_replica", (("session", mirror_id_bits),))
        self.bp_replicate = p4.table(
            Table(
                f"{ig}.bp_replicate",
                [KeyField("ig_intr_md.ingress_port", 9, "exact")],
                [self.replicate, self.relay_replica, Action("NoAction")],
                ("NoAction", {}),
                size=BFCC_PORTS,
            )
        )

        self.notify_senders = Action(
            f"{ig}.notify_senders", (("port", 9), ("src_mac", 48), ("dst_mac", 48))
        )
        self.consume = Action(f"{ig}.consume")
        self.sender_notify = p4.table(
            Table(
                f"{ig}.sender_notify",
                [
                    KeyField("hdr.feedback.msg_type", 4, "exact"),
                    KeyField("hdr.feedback.class_id", 16, "exact"),
                ],
                [self.notify_senders, self.consume],
                (f"{ig}.consume", {}),
                size=BFCC_SENDER_NOTIFY_ENTRIES,
            )
        )

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = QueueMetadataHook(p4, f"{eg}.queue_hook")
        self.recirc_queue_hook = DequeueQueueHook(p4, f"{eg}.recirc_queue_hook")
        self.flagged_departures = p4.counter(
            Counter(f"{eg}.flagged_departures", BFCC_PORTS, "packets")
        )
        self.fakes_sent = p4.counter(Counter(f"{eg}.fakes_sent", BFCC_PORTS, "packets"))
        self.recirculation_skips = p4.counter(
            Counter(f"{eg}.recirculation_skips", BFCC_PORTS, "packets")
        )
        self.rr_count = p4.register(Register(f"{eg}.rr_count", 8, BFCC_PORTS))
        self.set_rate_threshold = Action(f"{eg}.set_rate_threshold", (("rt_packets", 8),))
        self.rate_threshold = p4.table(
            Table(
                f"{eg}.rate_threshold",
                [KeyField("hdr.bfcc_bridged.bp_degree", 8, "exact")],
                [self.set_rate_threshold, Action(f"{eg}.no_rate_threshold")],
                (f"{eg}.no_rate_threshold", {}),
                size=BFCC_DEGREES,
            )
        )
        self.recirculate = Action(
            f"{eg}.recirculate", (("session", mirror_id_bits), ("level_cells", 32))
        )
        self.recirculation = p4.table(
            Table(
                f"{eg}.recirculation",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.recirculate, Action(f"{eg}.no_recirculation")],
                (f"{eg}.no_recirculation", {}),
                size=BFCC_PORTS,
            )
        )
        # One entry, one copy per pipe: the pipe's recirculation queue.
        self.recirculation_depth = p4.register(Register(f"{eg}.recirculation_depth", 32, 1))
        cps = BFCC_CONGESTION_POINTS
        # Pairs of 32-bit halves: bfcc_window_t {id, packets},
        # bfcc_tagged_key_t {window_id, key}. The window number is 32 bits so
        # a stale tag aliases only after 2^32 windows, not 2^16 (440 us).
        self.occupancy_window = p4.register(
            Register(f"{eg}.occupancy_window", 64, cps, members=("id", "packets"))
        )
        self.vq_occupancy = p4.register(
            Register(f"{eg}.vq_occupancy", 64, BFCC_VQ_SLOTS, members=("window_id", "key"))
        )
        self.congested_vq = p4.register(
            Register(f"{eg}.congested_vq", 64, cps, members=("window_id", "key"))
        )
        self.bp_last_sent = p4.register(Register(f"{eg}.bp_last_sent", 16, cps))
        self.monitor = Action(
            f"{eg}.monitor",
            (
                ("cp_id", 4),
                ("congestion_threshold_cells", 32),
                ("t_min_ns", 32),
                ("t_max_ns", 32),
                ("window_packets", 16),
                ("refresh_mask", 32),
            ),
        )
        self.congestion_point = p4.table(
            Table(
                f"{eg}.congestion_point",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.monitor, Action(f"{eg}.unmonitored")],
                (f"{eg}.unmonitored", {}),
                size=BFCC_PORTS,
            )
        )
        self.to_upstream = Action(
            f"{eg}.to_upstream",
            (("session_id", mirror_id_bits), ("src_mac", 48), ("dst_mac", 48)),
        )
        self.bp_upstream = p4.table(
            Table(
                f"{eg}.bp_upstream",
                [KeyField("eg_md.bp_group", 8, "exact")],
                [self.to_upstream, Action("NoAction")],
                ("NoAction", {}),
                size=BFCC_GROUPS,
            )
        )

    # ---- ingress register actions ----------------------------------
    def bp_state_write(self, index: int, md: IgMd) -> None:
        self.bp_state.write(index, md.bp_key)

    def bp_state_read(self, index: int, md: IgMd) -> int:
        return self.bp_state.read(index)

    def bp_state_expire(self, index: int, md: IgMd) -> int:
        self.bp_state.write(index, 0)
        return 0

    def bp_recorded_write(self, index: int, md: IgMd) -> None:
        self.bp_recorded_ns.write(index, md.now_ns)

    def bp_recorded_age(self, index: int, md: IgMd) -> int:
        return (md.now_ns - self.bp_recorded_ns.read(index)) & U32

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        core = self.native_core()
        if core is not None:
            done: IngressResult | None = core.ingress(core.binding, ig_intr_md, data)
            if done is not None:
                return done
        hdr = BfccHeaders()
        md = IgMd()
        pkt = Cursor(data)
        try:
            parse_headers(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True)  # TNA drops on an ingress parser error
        port = ig_intr_md.ingress_port
        qid = 0

        bridge(hdr, port)
        hdr.bfcc_bridged.set_valid()
        hdr.bfcc_bridged.bp_degree = 0
        # The parser's global timestamp, defined on the recirculation path too.
        md.now_ns = ig_intr_md.global_tstamp_ns & U32
        md.bp_port = port

        md.forged = self.trust.apply(hdr, port, len(data))
        md.spoofed = self.source_guard.apply(hdr, port, len(data))
        if md.forged or md.spoofed:
            return IngressResult(drop=True)
        if hdr.ethernet.ether_type == ETHERTYPE_TOFCC_FAKE:
            self.fake_drops.count(port, len(data))
            return IngressResult(drop=True)
        if hdr.feedback.is_valid() and not hdr.ipv4.is_valid():
            return self.message(hdr, md, port, data, pkt)

        drop, egress_port = self.forward.apply(hdr)
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid() and not drop:
            g = self.sender_group.lookup({"hdr.ipv4.src_addr": hdr.ipv4.src_addr})
            if g.action == self.set_group.name:
                hdr.bridged.class_id = g.data["group"]
            r = self.reaction_point.lookup({"ig_tm_md.ucast_egress_port": egress_port})
            if r.hit and r.action == self.react.name:
                md.high_qid = r.data["high_qid"]
                md.low_qid = r.data["low_qid"]
                md.bp_alive_max_ns = (r.data["bp_expiry_ns"] - 1) & U32
                md.named_group_only = r.data["named_group_only"]
                md.bp_age_ns = self.bp_recorded_age(egress_port, md)
                md.bp_overage_ns = sat_sub_u32(md.bp_age_ns, md.bp_alive_max_ns)
                if md.bp_overage_ns != 0:
                    md.bp_key = self.bp_state_expire(egress_port, md)
                else:
                    md.bp_key = self.bp_state_read(egress_port, md)
                degree, named = md.bp_key & 0xFF, md.bp_key >> 8
                if degree != 0 and named != 0:
                    if named == hdr.bridged.class_id & 0xFF:
                        qid = md.low_qid
                        hdr.bfcc_bridged.bp_degree = degree
                    elif md.named_group_only == 0:
                        qid = md.high_qid
                        hdr.bfcc_bridged.bp_degree = degree
                    else:
                        qid = md.high_qid
                else:
                    qid = md.high_qid
                self.admitted_by_qid.count(qid, len(data))
        if drop:
            return IngressResult(drop=True)
        out = ingress_deparse(hdr)
        return IngressResult(drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload)

    def message(
        self, hdr: BfccHeaders, md: IgMd, port: int, data: bytes, pkt: Cursor
    ) -> IngressResult:
        """A backpressure or clear message accepted from a trusted port (the
        feedback branch of SwitchIngress.apply): recorded for the port it
        concerns in this pipe, copied on to the next pipe (bp_replicate), and
        consumed or, an original, relayed to the named group's senders."""
        fb = hdr.feedback
        r = self.bp_replicate.lookup({"ig_intr_md.ingress_port": port})
        if r.action == self.replicate.name:
            md.replicate = 1
            md.replica_session = r.data["session"]
            md.replica_left = r.data["pipes_left"]
        elif r.action == self.relay_replica.name:
            md.replica = 1
            md.replica_session = r.data["session"]
            md.replica_left = (fb.flow_protocol - 1) & 0xFF
            md.bp_port = fb.flow_src_port
        relay: dict[str, int] | None = None
        if md.replica == 1:
            # consume()
            if fb.flow_protocol != 0:
                self.mirror_replica(md)
        else:
            n = self.sender_notify.lookup(
                {"hdr.feedback.msg_type": fb.msg_type, "hdr.feedback.class_id": fb.class_id}
            )
            if n.action == self.notify_senders.name:
                relay = n.data
            if md.replicate == 1:
                self.mirror_replica(md)
        index = md.bp_port & 0x1FF
        if fb.msg_type == FEEDBACK_TYPE_BACKPRESSURE:
            md.bp_key = ((fb.class_id & 0xFF) << 8) | fb.degree
            self.bp_state_write(index, md)
            self.bp_recorded_write(index, md)
            if md.replica == 0:
                self.backpressure_received.count(port, len(data))
        elif fb.msg_type == FEEDBACK_TYPE_BACKPRESSURE_CLEAR:
            md.bp_key = 0
            self.bp_state_write(index, md)
            if md.replica == 0:
                self.backpressure_received.count(port, len(data))
        # SwitchIngressDeparser: the copy is the message as it arrived.
        mirror = None
        if md.mirror_type == MIRROR_TYPE_BP_REPLICA:
            header = BpReplicaMirror(
                pkt_type=md.mirror_pkt_type, origin_port=md.bp_port, pipes_left=md.replica_left
            ).pack()
            mirror = IngressMirror(md.replica_session, header)
        if relay is None:
            return IngressResult(drop=True, mirror=mirror)
        hdr.ethernet.src_addr = relay["src_mac"]
        hdr.ethernet.dst_addr = relay["dst_mac"]
        out = ingress_deparse(hdr)
        return IngressResult(
            drop=False, egress_port=relay["port"], data=out + pkt.payload, mirror=mirror
        )

    def mirror_replica(self, md: IgMd) -> None:
        md.mirror_type = MIRROR_TYPE_BP_REPLICA
        md.mirror_pkt_type = PKT_TYPE_MIRROR_BP_REPLICA

    # ---- egress register actions -----------------------------------
    def rr_count_step(self, index: int, md: EgMd) -> int:
        sent = self.rr_count.read(index)
        if sent >= md.rate_threshold_packets:
            sent, fake = 0, 1
        else:
            sent, fake = (sent + 1) & self.rr_count.max, 0
        self.rr_count.write(index, sent)
        return fake

    def recirculation_depth_write(self, index: int, md: EgMd) -> None:
        self.recirculation_depth.write(index, md.recirc_queue.depth_cells & U32)

    def recirculation_room(self, index: int, md: EgMd) -> int:
        return 0 if self.recirculation_depth.read(index) > md.recirc_level_cells else 1

    def occupancy_window_count(self, index: int, md: EgMd) -> int:
        w = self.occupancy_window.split(self.occupancy_window.read(index))
        if w["packets"] == 0 or w["packets"] >= md.window_packets:
            w["packets"] = 1
            w["id"] = (w["id"] + 1) & U32
        else:
            w["packets"] = (w["packets"] + 1) & U32
        self.occupancy_window.write(index, self.occupancy_window.pack(w))
        return w["id"]

    def occupancy_window_close(self, index: int, md: EgMd) -> None:
        w = self.occupancy_window.split(self.occupancy_window.read(index))
        w["packets"] = BFCC_WINDOW_CLOSED
        self.occupancy_window.write(index, self.occupancy_window.pack(w))

    def vq_occupancy_step(self, index: int, md: EgMd) -> int:
        v = self.vq_occupancy.split(self.vq_occupancy.read(index))
        if v["window_id"] == md.window_id:
            v["key"] = (v["key"] - BFCC_KEY_ONE_COUNT) & U32
        else:
            v["key"] = md.vq_first_key
        v["window_id"] = md.window_id
        self.vq_occupancy.write(index, self.vq_occupancy.pack(v))
        return v["key"]

    def congested_vq_step(self, index: int, md: EgMd) -> int:
        b = self.congested_vq.split(self.congested_vq.read(index))
        if b["window_id"] != md.window_id or md.vq_key < b["key"]:
            b["key"] = md.vq_key
        b["window_id"] = md.window_id
        self.congested_vq.write(index, self.congested_vq.pack(b))
        return b["key"]

    def congested_vq_read(self, index: int, md: EgMd) -> int:
        return self.congested_vq.split(self.congested_vq.read(index))["key"]

    def bp_last_sent_swap(self, index: int, md: EgMd) -> int:
        previous = self.bp_last_sent.read(index)
        self.bp_last_sent.write(index, md.bp_key)
        return previous

    # ---- egress -----------------------------------------------------
    def make_fake(self, hdr: BfccHeaders, md: EgMd) -> None:
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FAKE
        md.mirror_session = md.recirculation_session
        md.mirror_pkt_type = PKT_TYPE_MIRROR_RECIRCULATE
        md.mirror_type = MIRROR_TYPE_RECIRCULATE

    def restore_real(self, hdr: BfccHeaders) -> None:
        hdr.ethernet.ether_type = ETHERTYPE_IPV4
        hdr.ipv4.ttl = (hdr.ipv4.ttl + 1) & 0xFF

    def build_backpressure(self, hdr: BfccHeaders) -> None:
        m = hdr.bp_mirror
        hdr.ethernet.dst_addr = m.dst_mac
        hdr.ethernet.src_addr = m.src_mac
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FEEDBACK
        fb = hdr.feedback
        fb.set_valid()
        fb.version = FEEDBACK_VERSION
        fb.msg_type = m.msg_type & 0xF
        fb.class_id = m.group
        fb.queue_id = 0
        fb.degree = m.degree
        fb.flow_protocol = 0
        fb.flow_src_port = 0
        fb.rate = 0
        fb.target_rate = 0

    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        core = self.native_core()
        if core is not None:
            done: EgressResult | None = core.egress(core.binding, eg_intr_md, data)
            if done is not None:
                return done
        hdr = BfccHeaders()
        md = EgMd()
        pkt = Cursor(data)
        egress_parser(pkt, hdr, md)
        port = eg_intr_md.egress_port

        if hdr.bp_mirror.is_valid():
            self.build_backpressure(hdr)
        elif md.bp_replica.is_valid():
            # address_replica(): whose record, and how far the copy goes.
            hdr.feedback.flow_src_port = md.bp_replica.origin_port
            hdr.feedback.flow_protocol = md.bp_replica.pipes_left
        elif hdr.recirc_mirror.is_valid():
            self.restore_real(hdr)
            md.recirc_queue = self.recirc_queue_hook.apply(eg_intr_md)
            self.recirculation_depth_write(0, md)
        elif hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            if hdr.bfcc_bridged.bp_degree != 0:
                self.reaction_point_apply(hdr, md, port, len(data))

            md.queue = self.queue_hook.apply(eg_intr_md)
            cp = self.congestion_point.lookup({"eg_intr_md.egress_port": port})
            if cp.hit and cp.action == self.monitor.name:
                md.cp_id = cp.data["cp_id"]
                md.vq_index = (md.cp_id << 8) | (hdr.bridged.class_id & 0xFF)
                md.vq_first_key = (BFCC_KEY_FIRST_COUNT << 8) | (hdr.bridged.class_id & 0xFF)
                md.congestion_threshold_cells = cp.data["congestion_threshold_cells"]
                md.t_min_ns = cp.data["t_min_ns"]
                md.t_max_ns = cp.data["t_max_ns"]
                md.window_packets = cp.data["window_packets"]
                md.bp_epoch_ns = eg_intr_md.global_tstamp_ns & U32 & cp.data["refresh_mask"]
                self.congestion_point_apply(hdr, md)

        # ---- SwitchEgressDeparser ----
        mirror_out = None
        if md.mirror_type == MIRROR_TYPE_BACKPRESSURE:
            m = BpMirror(
                pkt_type=md.mirror_pkt_type,
                msg_type=md.bp_msg_type,
                group=md.bp_group,
                degree=md.bp_degree,
                src_mac=md.bp_src_mac,
                dst_mac=md.bp_dst_mac,
            )
            mirror_out = EgressMirror(md.mirror_session, m.pack())
        elif md.mirror_type == MIRROR_TYPE_RECIRCULATE:
            mirror_out = EgressMirror(
                md.mirror_session, RecircMirror(pkt_type=md.mirror_pkt_type).pack()
            )
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=False, data=out + pkt.payload, mirror=mirror_out)

    def reaction_point_apply(self, hdr: BfccHeaders, md: EgMd, port: int, size: int) -> None:
        """The reaction point's steps in SwitchEgress, for a flagged departure:
        every RT+1-th leaves as a fake while its original recirculates
        through the pipe's recirculation port, unless that port's queue is
        over its level: then the original leaves itself (counted)."""
        r = self.rate_threshold.lookup({"hdr.bfcc_bridged.bp_degree": hdr.bfcc_bridged.bp_degree})
        c = self.recirculation.lookup({"eg_intr_md.egress_port": port})
        if r.action != self.set_rate_threshold.name or c.action != self.recirculate.name:
            return
        md.rate_threshold_packets = r.data["rt_packets"]
        md.recirculation_session = c.data["session"]
        md.recirc_level_cells = c.data["level_cells"]
        self.flagged_departures.count(port, size)
        md.make_fake = self.rr_count_step(port, md)
        if md.make_fake == 1:
            md.recirc_ok = self.recirculation_room(0, md)
            if md.recirc_ok == 1:
                self.make_fake(hdr, md)
                self.fakes_sent.count(port, size)
            else:
                self.recirculation_skips.count(port, size)

    def congestion_degree(self, md: EgMd) -> int:
        """The gateways on the sojourn margins' bit 31 in SwitchEgress.apply."""
        if bit31(md.t_max_margin_ns) == 1:
            return BFCC_DEGREE_SEVERE
        if bit31(md.t_min_margin_ns) == 1:
            return BFCC_DEGREE_MODERATE
        return BFCC_DEGREE_MILD

    def congestion_point_apply(self, hdr: BfccHeaders, md: EgMd) -> None:
        """The congestion point's steps in SwitchEgress, for a monitored port.

        The P4 gates each step on its own (cp_on, make_fake, cp_state) so the
        steps can share stages with the reaction point's; the decisions are
        the ones this nested form makes."""
        group = hdr.bridged.class_id & 0xFF
        # classify()
        md.depth_margin_cells = margin_u32(md.congestion_threshold_cells, md.queue.depth_cells)
        md.t_min_margin_ns = margin_u32(md.t_min_ns, md.queue.sojourn_ns)
        md.t_max_margin_ns = margin_u32(md.t_max_ns, md.queue.sojourn_ns)
        if md.make_fake != 0:
            return
        if bit31(md.depth_margin_cells) == 1:
            md.degree = md.bp_degree = self.congestion_degree(md)
            md.bp_msg_type = FEEDBACK_TYPE_BACKPRESSURE
            if group != 0:
                md.window_id = self.occupancy_window_count(md.cp_id, md)
                md.vq_key = self.vq_occupancy_step(md.vq_index, md)
                # tag()
                epoch = (md.bp_epoch_ns >> BFCC_EPOCH_LOW_BIT) & ((1 << BFCC_EPOCH_BITS) - 1)
                md.bp_tag = (epoch << 2) | (md.degree & 0x3)
                md.bp_report = 1
                md.best_key = self.congested_vq_step(md.cp_id, md)
                # name_best()
                md.bp_group = md.best_key & 0xFF
                md.bp_key = (md.bp_group << 8) | md.bp_tag
        else:
            # recovered()
            md.bp_degree = 0
            md.bp_msg_type = FEEDBACK_TYPE_BACKPRESSURE_CLEAR
            md.bp_report = 1
            self.occupancy_window_close(md.cp_id, md)
            md.best_key = self.congested_vq_read(md.cp_id, md)
            # name_last()
            md.bp_group = md.best_key & 0xFF
            md.bp_key = 0

        if md.bp_report == 1:
            md.bp_prev_key = self.bp_last_sent_swap(md.cp_id, md)
            if md.bp_prev_key != md.bp_key:
                u = self.bp_upstream.lookup({"eg_md.bp_group": md.bp_group})
                if u.action == self.to_upstream.name:
                    md.mirror_session = u.data["session_id"]
                    md.mirror_pkt_type = PKT_TYPE_MIRROR_BACKPRESSURE
                    md.bp_src_mac = u.data["src_mac"]
                    md.bp_dst_mac = u.data["dst_mac"]
                    md.mirror_type = MIRROR_TYPE_BACKPRESSURE
