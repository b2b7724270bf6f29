# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The hosts' frames against scapy's view, and the baseline switch pipelines."""

from __future__ import annotations

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from evaluation import frames
from evaluation.pipelines import DcqcnPipeline, P4qcnPipeline, TcnPipeline, set_ce
from evaluation.tm import Dequeued
from models.baselines import P4qcnCpParams, RedEcnParams
from models.switch.headers import FEEDBACK_TYPE_QCN
from models.wire import TofccFeedback

SRC, DST = bytes((10, 0, 1, 1)), bytes((10, 0, 2, 1))
MAC_A, MAC_B = b"\x02\x00\x00\x00\x01\x01", b"\x02\x00\x00\x00\x02\x01"


def data_frame(ecn: int = frames.ECN_ECT0) -> bytes:
    payload = frames.data_payload(3, 9, 123_456, 200)
    return frames.ip_udp(MAC_A, MAC_B, SRC, DST, 10003, frames.UDP_PORT_DATA, payload, tos=ecn)


def test_data_frame_is_valid_ipv4_udp() -> None:
    f = data_frame()
    pkt = Ether(f)
    ip = pkt[IP]
    assert ip.len == 200 and ip.src == "10.0.1.1" and ip.dst == "10.0.2.1"
    rebuilt = IP(bytes(Ether(f)[IP]))
    del rebuilt.chksum
    assert IP(bytes(rebuilt)).chksum == ip.chksum, "header checksum is correct"
    assert pkt[UDP].dport == frames.UDP_PORT_DATA
    p = frames.parse(f)
    assert p is not None and p.ip_len == 200
    assert frames.read_data(p.payload) == (3, 9, 123_456)


def test_set_ce_marks_ect_only_and_keeps_the_checksum_valid() -> None:
    marked = set_ce(data_frame())
    ip = Ether(marked)[IP]
    assert ip.tos & 3 == 3
    clean = IP(bytes(ip))
    del clean.chksum
    assert IP(bytes(clean)).chksum == ip.chksum
    not_ect = data_frame(ecn=0)
    assert set_ce(not_ect) == not_ect


def dq(frame: bytes, depth: int, sojourn: int = 0) -> Dequeued:
    return Dequeued(frame, 0, depth * 2, depth, sojourn)


def test_dcqcn_marks_above_k() -> None:
    p = DcqcnPipeline({DST: 2}, 1, RedEcnParams(k_min=11, k_max=11, p_max=1.0))
    fwd = p.ingress(1, data_frame(), 0)
    assert fwd is not None and fwd.port == 2
    out_low = p.egress(2, dq(data_frame(), 11), 0).frame
    out_high = p.egress(2, dq(data_frame(), 12), 0).frame
    assert out_low is not None and out_high is not None
    assert out_low[15] & 3 == frames.ECN_ECT0
    assert out_high[15] & 3 == 3
    assert p.ingress(1, data_frame()[:12] + b"\x86\xdd" + data_frame()[14:], 0) is None


def test_tcn_marks_on_sojourn() -> None:
    p = TcnPipeline({DST: 2}, 1, threshold_ns=1000)
    keep = p.egress(2, dq(data_frame(), 50, sojourn=1000), 0).frame
    mark = p.egress(2, dq(data_frame(), 0, sojourn=1001), 0).frame
    assert keep is not None and mark is not None
    assert keep[15] & 3 == frames.ECN_ECT0 and mark[15] & 3 == 3


def test_p4qcn_feeds_back_to_the_source_at_most_once_per_interval() -> None:
    params = P4qcnCpParams(q_min=11, q_max=11, q_pfc=100, feedback_interval_ns=5000)
    p = P4qcnPipeline({DST: 2, SRC: 1}, 1, params, b"\x02\x50\x00\x01\x00\x00")
    first = p.egress(2, dq(data_frame(), 20), 0)
    again = p.egress(2, dq(data_frame(), 20), 4999)
    later = p.egress(2, dq(data_frame(), 20), 5000)
    quiet = p.egress(2, dq(data_frame(), 11), 20000)
    assert [len(o.extra) for o in (first, again, later, quiet)] == [1, 0, 1, 0]
    port, fb_frame = first.extra[0]
    assert port == 1, "feedback leaves toward the source"
    pkt = Ether(fb_frame)
    assert pkt[IP].dst == "10.0.1.1" and pkt[IP].tos & 3 == 3
    fb = TofccFeedback(bytes(pkt[UDP].payload))
    assert fb.msg_type == FEEDBACK_TYPE_QCN and fb.flow_src_port == 10003 and fb.rate == 9
    parsed = frames.read_feedback(bytes(pkt[UDP].payload))
    assert parsed is not None and parsed.flow_src_port == 10003


def test_pmqecn_pipeline_feeds_back_at_arrival() -> None:
    """The harness carries PMQECN's ingress mirror: the feedback copy leaves
    with the packet's ingress decision, before the packet enters its queue,
    and becomes a feedback packet when its port's egress runs it."""
    from bfrt_controller.backends.model import ModelSwitch
    from bfrt_controller.pmqecn.app import PmqecnApp
    from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, load_config
    from bfrt_controller.pmqecn.demo import FLOWS
    from evaluation.pipelines import TnaPipeline
    from hw_profiles import load_profile

    cfg = load_config(DEFAULT_CONFIG)
    sw = ModelSwitch("pmqecn", load_profile(cfg.chip))
    PmqecnApp(sw, cfg).push_all()
    p = TnaPipeline(sw.model, sw.profile, sw.tm_priorities, sw.tm_weights)
    voice = FLOWS["voice"]
    frame = bytes(voice.packet())
    # K_voice = 20 cells = 1600 bytes; three 1000-byte frames at one instant,
    # 1 us into the run: the first has 1 us of drain to spend (450 bytes at
    # 6/16 of 10 Gb/s), so the queue reads 550, 1550, 2550 - the third is over.
    for _ in range(2):
        first = p.ingress(voice.port, frame, 1_000)
        assert first is not None and first.extra == []
    second = p.ingress(voice.port, frame, 1_000)
    assert second is not None and second.frame is not None and second.port == 4
    assert [port for port, _ in second.extra] == [voice.port]
    copy = second.extra[0][1]
    out = p.egress(voice.port, Dequeued(copy, 0, 0, 0, 0), 2_000)
    assert out.frame is not None
    fb = Ether(out.frame)
    assert fb[IP].dst == "10.0.1.1" and fb[IP].tos & 3 == 3
    assert fb[TofccFeedback].class_id == 1
    # The DWRR weights the TM serves with: the classes', the others at 1.
    assert p.tm_config(4)[1] == {0: 6, 1: 5, 2: 5, **{q: 1 for q in range(3, 8)}}


def test_bfcc_match_switch_relays_backpressure_to_the_sender() -> None:
    """bfcc-smoke's S1 under bfcc-match: backpressure from S3 naming group 1
    leaves once, toward g1, addressed to g1; its degree reaches the sender's
    rate controller, which cuts to RT/(RT+1) = 9/10 (degree 1). Under bfcc
    (none) the same message is consumed."""
    from evaluation.scenario import load_scenario
    from evaluation.schemes import BfccSenderRate, FixedRate, rate_controller, switch_setup
    from evaluation.topology import Topology
    from hw_profiles import load_profile

    s = load_scenario("bfcc-smoke")
    topo = Topology(s)
    profile = load_profile(s.chip)
    up = topo.next_hop("s1", "rx")  # S1's port toward S3
    g1_port = topo.next_hop("s1", "g1")
    bp = bytes(
        Ether(
            dst=topo.port_mac("s1", up).hex(":"),
            src=topo.neighbour_mac("s1", up).hex(":"),
            type=0x88B6,
        )
        / TofccFeedback(msg_type=2, class_id=1, degree=1)
    )
    relayed = switch_setup(topo, "s1", "bfcc-match", profile, 0).pipeline
    fwd = relayed.ingress(up, bp, 1_000)
    assert fwd is not None and fwd.frame is not None and fwd.port == g1_port
    out = relayed.egress(g1_port, Dequeued(fwd.frame, fwd.qid, 0, 0, 0), 2_000)
    assert out.frame is not None
    assert Ether(out.frame).dst == topo.neighbour_mac("s1", g1_port).hex(":")
    fb = frames.read_feedback(out.frame[14:])
    assert fb is not None and (fb.msg_type, fb.class_id, fb.degree) == (2, 1, 1)
    rc = rate_controller("bfcc-match", s, 5_000_000)
    assert isinstance(rc, BfccSenderRate)
    rc.on_feedback(fb, 3_000)
    assert rc.rate_bps(3_000) == 4_500_000
    plain = switch_setup(topo, "s1", "bfcc", profile, 0).pipeline
    assert plain.ingress(up, bp, 1_000) is None
    assert isinstance(rate_controller("bfcc", s, 5_000_000), FixedRate)


def test_bfcc_shape_setup_polls_and_shapes_the_tm_the_port_reads() -> None:
    """bfcc-smoke's S1 under bfcc-shape: the controller cycle runs every 1 ms
    and writes the shaper into the table the harness's TM reads."""
    from evaluation.scenario import load_scenario
    from evaluation.schemes import switch_setup
    from evaluation.tm import EgressTm
    from evaluation.topology import Topology
    from hw_profiles import load_profile

    s = load_scenario("bfcc-smoke")
    topo = Topology(s)
    up = topo.next_hop("s1", "rx")
    setup = switch_setup(topo, "s1", "bfcc-shape", load_profile(s.chip), 0)
    assert setup.periodic is not None and setup.interval_s == 0.001
    tm = EgressTm(10**6, 80, up, setup.pipeline.tm_shaping())
    bp = bytes(
        Ether(
            dst=topo.port_mac("s1", up).hex(":"),
            src=topo.neighbour_mac("s1", up).hex(":"),
            type=0x88B6,
        )
        / TofccFeedback(msg_type=2, class_id=1, degree=1)
    )
    assert setup.pipeline.ingress(up, bp, 1_000) is None  # recorded and consumed
    assert tm.shaping.get((up, None)) is None
    setup.periodic(0.001)
    assert tm.shaping[(up, None)][0] == 10_000 * 9 // 10  # 10 Mb/s x 9/10 in kb/s


def test_seed000_scenarios_run_p4qcn_as_seed000_ran_it() -> None:
    """pmqecn-s1's `p4qcn` sources: 1 Mb/s start in active increase, a 1 s
    cycle, one cut per 26 feedback packets, beta drawn per flow (different
    seeds per flow); `p4qcn-qcn` keeps QCN's values (line-rate start, every
    feedback halves)."""
    from evaluation.scenario import load_scenario
    from evaluation.schemes import QcnFamilyRate, rate_controller
    from models.baselines import RpStage

    s = load_scenario("pmqecn-s1")
    flows = [rate_controller("p4qcn", s, 10_000_000, i) for i in range(2)]
    for rc in flows:
        assert isinstance(rc, QcnFamilyRate)
        assert rc.rate_bps(0) == 1_000_000 and rc.rp.stage is RpStage.ADDITIVE_INCREASE
        assert rc.rate_bps(1_000_000_000) == 3_500_000  # Eq. 4 after one 1 s cycle
        for t in range(26):
            rc.on_feedback(None, 1_000_000_001 + t)
    cut = [rc.rate_bps(1_000_000_100) for rc in flows]
    assert all(1_750_000 < c < 3_500_000 for c in cut) and cut[0] != cut[1]
    qcn = rate_controller("p4qcn-qcn", s, 10_000_000, 0)
    assert isinstance(qcn, QcnFamilyRate) and qcn.rate_bps(0) == 10_000_000
    qcn.on_feedback(None, 1)
    assert qcn.rate_bps(1) == 5_000_000
