"""Reference model of tna/bfcc/bfcc.p4, control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths, saturation, one action per register per packet), same
order of decisions. tna/bfcc/README.md explains the design.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hw_profiles import HwProfile

from .common import Cursor, FeedbackTrust, Ipv4Forward, ParserError, QueueMetadataHook
from .common import header_parser as parse_headers
from .core import Action, Counter, KeyField, Register, Table
from .headers import (
    ETHERTYPE_IPV4,
    ETHERTYPE_TOFCC_FEEDBACK,
    FEEDBACK_TYPE_BACKPRESSURE,
    FEEDBACK_TYPE_BACKPRESSURE_CLEAR,
    FEEDBACK_VERSION,
    PKT_TYPE_BRIDGED,
    BridgedMd,
    Ethernet,
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

# Constants of tna/bfcc/bfcc.p4.
BFCC_PORTS = 512
BFCC_GROUPS = 256
BFCC_CONGESTION_POINTS = 16
BFCC_VQ_SLOTS = 4096
BFCC_QIDS = 128
BFCC_DEGREE_MILD = 1
BFCC_DEGREE_MODERATE = 2
BFCC_DEGREE_SEVERE = 3
BFCC_WINDOW_CLOSED = 0xFF

# RT per degree the controller installs unless told otherwise (paper 4.2.2:
# 9, 3, 1 real packets per fake, i.e. rates 9/10, 3/4, 1/2).
DEFAULT_RATE_THRESHOLDS = {BFCC_DEGREE_MILD: 9, BFCC_DEGREE_MODERATE: 3, BFCC_DEGREE_SEVERE: 1}

U32 = 0xFFFFFFFF


def sat_sub_u32(a: int, b: int) -> int:
    """`|-|` on bit<32>."""
    return max(a - b, 0)


def sat_add_u8(a: int, b: int) -> int:
    """`|+|` on bit<8>."""
    return min(a + b, 0xFF)


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
class BfccHeaders(Headers):
    """`struct headers_t` with the instances only BFCC makes valid."""

    bfcc_bridged: BfccBridged = field(default_factory=BfccBridged)
    bp_mirror: BpMirror = field(default_factory=BpMirror)
    recirc_mirror: RecircMirror = field(default_factory=RecircMirror)


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    now_ns: int = 0
    bp_key: int = 0
    high_qid: int = 0
    low_qid: int = 0
    bp_expiry_ns: int = 0
    bp_age_ns: int = 0
    bp_life_left_ns: int = 0
    bp_expired: int = 0


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    now_ns: int = 0
    rate_threshold: int = 0
    recirculation_session: int = 0
    make_fake: int = 0
    cp_id: int = 0
    congestion_threshold_cells: int = 0
    t_min_ns: int = 0
    t_max_ns: int = 0
    window_pkts: int = 0
    refresh_ns: int = 0
    depth_over_cells: int = 0
    sojourn_over_min_ns: int = 0
    sojourn_over_max_ns: int = 0
    degree: int = 0
    new_window: int = 0
    window_id: int = 0
    vq_index: int = 0
    vq_same_window: int = 0
    vq_count: int = 0
    vq_key: int = 0
    max_key: int = 0
    bp_report: int = 0
    bp_group: int = 0
    bp_key: int = 0
    bp_last_key: int = 0
    refresh_at_ns: int = 0
    bp_send: int = 0
    bp_msg_type: int = 0
    bp_degree: int = 0
    mirror_session: int = 0
    mirror_pkt_type: int = 0
    mirror_type: int = 0  # eg_dprsr_md.mirror_type
    bp_src_mac: int = 0
    bp_dst_mac: int = 0


def egress_parser(pkt: Cursor, hdr: BfccHeaders, parsed: ParsedMd) -> None:
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
    hdr.bridged = pkt.extract(BridgedMd)
    hdr.bfcc_bridged = pkt.extract(BfccBridged)
    parse_headers(pkt, hdr, parsed)


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
                size=1024,
            )
        )
        self.react = Action(
            f"{ig}.react", (("high_qid", qid_bits), ("low_qid", qid_bits), ("bp_expiry_ns", 32))
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

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = QueueMetadataHook(p4, f"{eg}.queue_hook")
        self.flagged_departures = p4.counter(
            Counter(f"{eg}.flagged_departures", BFCC_PORTS, "packets")
        )
        self.fakes_sent = p4.counter(Counter(f"{eg}.fakes_sent", BFCC_PORTS, "packets"))
        self.rr_count = p4.register(Register(f"{eg}.rr_count", 8, BFCC_PORTS))
        self.set_rate_threshold = Action(
            f"{eg}.set_rate_threshold", (("packets", 8), ("recirculation_session", mirror_id_bits))
        )
        self.rate_threshold = p4.table(
            Table(
                f"{eg}.rate_threshold",
                [KeyField("hdr.bfcc_bridged.bp_degree", 8, "exact")],
                [self.set_rate_threshold, Action("NoAction")],
                ("NoAction", {}),
                size=4,
            )
        )
        cps = BFCC_CONGESTION_POINTS
        self.occupancy_window_pkts = p4.register(Register(f"{eg}.occupancy_window_pkts", 8, cps))
        self.occupancy_window = p4.register(Register(f"{eg}.occupancy_window", 16, cps))
        self.vq_window = p4.register(Register(f"{eg}.vq_window", 16, BFCC_VQ_SLOTS))
        self.vq_departures = p4.register(Register(f"{eg}.vq_departures", 8, BFCC_VQ_SLOTS))
        self.congested_vq = p4.register(Register(f"{eg}.congested_vq", 16, cps))
        self.bp_last_sent = p4.register(Register(f"{eg}.bp_last_sent", 16, cps))
        self.bp_refresh_at_ns = p4.register(Register(f"{eg}.bp_refresh_at_ns", 32, cps))
        self.monitor = Action(
            f"{eg}.monitor",
            (
                ("cp_id", 4),
                ("congestion_threshold_cells", 32),
                ("t_min_ns", 32),
                ("t_max_ns", 32),
                ("window_pkts", 8),
                ("refresh_ns", 32),
            ),
        )
        self.congestion_point = p4.table(
            Table(
                f"{eg}.congestion_point",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.monitor, Action("NoAction")],
                ("NoAction", {}),
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
        state = self.bp_state.read(index)
        if md.bp_expired == 1:
            state = 0
        self.bp_state.write(index, state)
        return state

    def bp_recorded_write(self, index: int, md: IgMd) -> None:
        self.bp_recorded_ns.write(index, md.now_ns)

    def bp_recorded_age(self, index: int, md: IgMd) -> int:
        return (md.now_ns - self.bp_recorded_ns.read(index)) & U32

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        hdr = BfccHeaders()
        md = IgMd()
        pkt = Cursor(data)
        try:
            parse_headers(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True)  # TNA drops on an ingress parser error
        port = ig_intr_md.ingress_port
        qid = 0

        hdr.bridged.set_valid()
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED
        hdr.bridged.class_id = 0
        hdr.bridged.ingress_port = port
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr
        hdr.bfcc_bridged.set_valid()
        hdr.bfcc_bridged.bp_degree = 0
        md.now_ns = ig_intr_md.ingress_mac_tstamp_ns & U32
        md.bp_expired = 0

        md.forged = self.trust.apply(hdr, port, len(data))
        if md.forged:
            return IngressResult(drop=True)
        if hdr.ethernet.ether_type == ETHERTYPE_TOFCC_FAKE:
            self.fake_drops.count(port, len(data))
            return IngressResult(drop=True)
        if hdr.feedback.is_valid() and not hdr.ipv4.is_valid():
            if hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE:
                md.bp_key = (hdr.feedback.class_id << 8) | hdr.feedback.degree
                self.bp_state_write(port, md)
                self.bp_recorded_write(port, md)
                self.backpressure_received.count(port, len(data))
            elif hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE_CLEAR:
                md.bp_key = 0
                self.bp_state_write(port, md)
                self.backpressure_received.count(port, len(data))
            return IngressResult(drop=True)

        drop, egress_port = self.forward.apply(hdr)
        if hdr.ipv4.is_valid() and not hdr.feedback.is_valid() and not drop:
            g = self.sender_group.lookup({"hdr.ipv4.src_addr": hdr.ipv4.src_addr})
            if g.action == self.set_group.name:
                hdr.bridged.class_id = g.data["group"]
            r = self.reaction_point.lookup({"ig_tm_md.ucast_egress_port": egress_port})
            if r.hit and r.action == self.react.name:
                md.high_qid = r.data["high_qid"]
                md.low_qid = r.data["low_qid"]
                md.bp_expiry_ns = r.data["bp_expiry_ns"]
                md.bp_age_ns = self.bp_recorded_age(egress_port, md)
                md.bp_life_left_ns = sat_sub_u32(md.bp_expiry_ns, md.bp_age_ns)
                if md.bp_expiry_ns != 0 and md.bp_life_left_ns == 0:
                    md.bp_expired = 1
                md.bp_key = self.bp_state_read(egress_port, md)
                group = hdr.bridged.class_id
                if group != 0 and md.bp_key & 0xFF != 0 and md.bp_key >> 8 == group:
                    qid = md.low_qid
                    hdr.bfcc_bridged.bp_degree = md.bp_key & 0xFF
                else:
                    qid = md.high_qid
                self.admitted_by_qid.count(qid, len(data))
        if drop:
            return IngressResult(drop=True)
        out = emit(
            hdr.bridged,
            hdr.bfcc_bridged,
            hdr.ethernet,
            hdr.ipv4,
            hdr.tcp,
            hdr.udp,
            hdr.feedback,
        )
        return IngressResult(drop=False, egress_port=egress_port, qid=qid, data=out + pkt.payload)

    # ---- egress register actions -----------------------------------
    def rr_count_step(self, index: int, md: EgMd) -> int:
        sent = self.rr_count.read(index)
        if sent >= md.rate_threshold:
            sent, fake = 0, 1
        else:
            sent, fake = (sent + 1) & self.rr_count.max, 0
        self.rr_count.write(index, sent)
        return fake

    def occupancy_window_pkts_count(self, index: int, md: EgMd) -> int:
        pkts = self.occupancy_window_pkts.read(index)
        if pkts >= md.window_pkts:
            pkts, new_window = 1, 1
        else:
            pkts, new_window = (pkts + 1) & self.occupancy_window_pkts.max, 0
        self.occupancy_window_pkts.write(index, pkts)
        return new_window

    def occupancy_window_pkts_close(self, index: int, md: EgMd) -> None:
        self.occupancy_window_pkts.write(index, BFCC_WINDOW_CLOSED)

    def occupancy_window_step(self, index: int, md: EgMd) -> int:
        window_id = self.occupancy_window.read(index)
        if md.new_window == 1:
            window_id = (window_id + 1) & self.occupancy_window.max
        self.occupancy_window.write(index, window_id)
        return window_id

    def vq_window_swap(self, index: int, md: EgMd) -> int:
        same = 1 if self.vq_window.read(index) == md.window_id else 0
        self.vq_window.write(index, md.window_id)
        return same

    def vq_departures_step(self, index: int, md: EgMd) -> int:
        count = self.vq_departures.read(index)
        count = sat_add_u8(count, 1) if md.vq_same_window == 1 else 1
        self.vq_departures.write(index, count)
        return count

    def congested_vq_step(self, index: int, md: EgMd) -> int:
        best = self.congested_vq.read(index)
        if md.new_window == 1 or md.vq_key > best:
            best = md.vq_key
        self.congested_vq.write(index, best)
        return best

    def bp_last_sent_swap(self, index: int, md: EgMd) -> int:
        previous = self.bp_last_sent.read(index)
        self.bp_last_sent.write(index, md.bp_key)
        return previous

    def bp_refresh_restart(self, index: int, md: EgMd) -> None:
        self.bp_refresh_at_ns.write(index, md.refresh_at_ns)

    def bp_refresh_check(self, index: int, md: EgMd) -> int:
        at = self.bp_refresh_at_ns.read(index)
        if (md.now_ns - at) & U32 < 0x80000000:
            self.bp_refresh_at_ns.write(index, md.refresh_at_ns)
            return 1
        return 0

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
        fb.reserved = 0
        fb.flow_src_port = 0
        fb.rate = 0
        fb.target_rate = 0

    def congestion_degree(self, md: EgMd) -> int:
        """The if/else chain on the saturated sojourn differences in SwitchEgress.apply."""
        if md.sojourn_over_max_ns != 0:
            return BFCC_DEGREE_SEVERE
        if md.sojourn_over_min_ns != 0:
            return BFCC_DEGREE_MODERATE
        return BFCC_DEGREE_MILD

    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        hdr = BfccHeaders()
        md = EgMd()
        pkt = Cursor(data)
        egress_parser(pkt, hdr, md.parsed)
        port = eg_intr_md.egress_port
        md.now_ns = eg_intr_md.global_tstamp_ns & U32

        if hdr.bp_mirror.is_valid():
            self.build_backpressure(hdr)
        elif hdr.recirc_mirror.is_valid():
            self.restore_real(hdr)
        elif hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            if hdr.bfcc_bridged.bp_degree != 0:
                r = self.rate_threshold.lookup(
                    {"hdr.bfcc_bridged.bp_degree": hdr.bfcc_bridged.bp_degree}
                )
                if r.hit and r.action == self.set_rate_threshold.name:
                    md.rate_threshold = r.data["packets"]
                    md.recirculation_session = r.data["recirculation_session"]
                    self.flagged_departures.count(port, len(data))
                    md.make_fake = self.rr_count_step(port, md)
                    if md.make_fake == 1:
                        self.make_fake(hdr, md)
                        self.fakes_sent.count(port, len(data))

            cp = self.congestion_point.lookup({"eg_intr_md.egress_port": port})
            if cp.hit and cp.action == self.monitor.name:
                md.cp_id = cp.data["cp_id"]
                md.congestion_threshold_cells = cp.data["congestion_threshold_cells"]
                md.t_min_ns = cp.data["t_min_ns"]
                md.t_max_ns = cp.data["t_max_ns"]
                md.window_pkts = cp.data["window_pkts"]
                md.refresh_ns = cp.data["refresh_ns"]
                self.congestion_point_apply(hdr, md, eg_intr_md)

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

    def congestion_point_apply(
        self, hdr: BfccHeaders, md: EgMd, eg_intr_md: EgressIntrinsic
    ) -> None:
        """The `if (congestion_point.apply().hit)` block of SwitchEgress."""
        md.queue = self.queue_hook.apply(eg_intr_md)
        md.depth_over_cells = sat_sub_u32(md.queue.depth_cells, md.congestion_threshold_cells)
        md.sojourn_over_min_ns = sat_sub_u32(md.queue.sojourn_ns, md.t_min_ns)
        md.sojourn_over_max_ns = sat_sub_u32(md.queue.sojourn_ns, md.t_max_ns)
        md.refresh_at_ns = (md.now_ns + md.refresh_ns) & U32
        if md.depth_over_cells != 0:
            md.degree = self.congestion_degree(md)
            group = hdr.bridged.class_id
            if group != 0:
                md.new_window = self.occupancy_window_pkts_count(md.cp_id, md)
                md.window_id = self.occupancy_window_step(md.cp_id, md)
                md.vq_index = (md.cp_id << 8) | group
                md.vq_same_window = self.vq_window_swap(md.vq_index, md)
                md.vq_count = self.vq_departures_step(md.vq_index, md)
                md.vq_key = (md.vq_count << 8) | (~group & 0xFF)
                md.max_key = self.congested_vq_step(md.cp_id, md)
                md.bp_group = ~md.max_key & 0xFF
                md.bp_key = (md.bp_group << 8) | md.degree
                md.bp_report = 1
        else:
            self.occupancy_window_pkts_close(md.cp_id, md)
            md.bp_key = 0
            md.bp_report = 1

        if md.bp_report == 1 and md.make_fake == 0:
            md.bp_last_key = self.bp_last_sent_swap(md.cp_id, md)
            if md.bp_key != 0:
                md.bp_msg_type = FEEDBACK_TYPE_BACKPRESSURE
                md.bp_degree = md.degree
                if md.bp_last_key != md.bp_key:
                    self.bp_refresh_restart(md.cp_id, md)
                    md.bp_send = 1
                elif md.refresh_ns != 0:
                    md.bp_send = self.bp_refresh_check(md.cp_id, md)
            elif md.bp_last_key != 0:
                md.bp_group = md.bp_last_key >> 8
                md.bp_msg_type = FEEDBACK_TYPE_BACKPRESSURE_CLEAR
                md.bp_degree = 0
                md.bp_send = 1
            if md.bp_send == 1:
                u = self.bp_upstream.lookup({"eg_md.bp_group": md.bp_group})
                if u.action == self.to_upstream.name:
                    md.mirror_session = u.data["session_id"]
                    md.mirror_pkt_type = PKT_TYPE_MIRROR_BACKPRESSURE
                    md.bp_src_mac = u.data["src_mac"]
                    md.bp_dst_mac = u.data["dst_mac"]
                    md.mirror_type = MIRROR_TYPE_BACKPRESSURE
