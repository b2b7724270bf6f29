# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCP hosts (issue 14): ns-3's TCP through the switch models.

The switch is a pipeline the test controls (one CE mark, one drop) in place
of a scheme's, so each assertion ties a host's reaction to one thing a
switch model did to one frame. Needs the `ns3` wheel for all but the schema
tests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluation import frames, schemes, tcp
from evaluation.metrics import compute_metrics
from evaluation.network import is_data, tx_ns
from evaluation.pipelines import EgressOut, RoutedPipeline, set_ce
from evaluation.records import RunResult
from evaluation.report import write_report
from evaluation.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from evaluation.simulate import RunSpec, run_one
from evaluation.tcp import IPV4_TCP_HEADER_BYTES
from evaluation.tm import Dequeued
from evaluation.topology import Topology
from models import speedups

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)

FLOW_BYTES = 300_000
PACKET_BYTES = 1000


def dumbbell(cc: str = "newreno", **top: Any) -> dict[str, Any]:
    """One flow h1 -> r1 through s1, 100 Mb/s in and 10 Mb/s out, a buffer
    that never fills: without the test's pipeline nothing is marked or lost."""
    raw: dict[str, Any] = {
        "name": "tcp-test",
        "duration_s": 1.0,
        "transport": "tcp",
        "buffer_packets": 2000,
        "link": {"rate": "10Mbps", "delay_us": 500},
        "hosts": ["h1", "r1"],
        "switches": ["s1"],
        "links": [{"a": "h1", "b": "s1", "rate": "100Mbps"}, {"a": "s1", "b": "r1"}],
        "flows": [
            {
                "name": "f",
                "src": "h1",
                "dst": "r1",
                "size_bytes": FLOW_BYTES,
                "packet_bytes": PACKET_BYTES,
                "cc": cc,
            }
        ],
        "monitor": [{"switch": "s1", "toward": "r1"}],
        # tcn: a marking scheme, so NewReno negotiates ECN; its pipeline is
        # replaced by the test's.
        "schemes": {"tcn": {}, "none": {}},
    }
    raw.update(top)
    return raw


class OneShot(RoutedPipeline):
    """Destination routing that marks CE on (or drops) the `nth` data segment
    leaving any port, once."""

    def __init__(self, routes: dict[bytes, int], nth: int, action: str) -> None:
        super().__init__(routes, 0)
        self.nth, self.action = nth, action
        self.seen = 0
        self.at_ns: int | None = None

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        if not is_data(d.frame):
            return EgressOut(d.frame)
        self.seen += 1
        if self.seen != self.nth:
            return EgressOut(d.frame)
        self.at_ns = now_ns
        if self.action == "drop":
            return EgressOut(None)
        marked = set_ce(d.frame)
        assert marked != d.frame, "the segment was not ECN-capable"
        return EgressOut(marked)


def run_with(
    monkeypatch: pytest.MonkeyPatch, s: Scenario, scheme: str, nth: int, action: str
) -> tuple[RunResult, OneShot]:
    made: list[OneShot] = []

    def setup(topo: Topology, switch: str, *_: Any) -> schemes.SwitchSetup:
        routes = {topo.ip(h): port for h, port in topo.routes(switch).items()}
        made.append(OneShot(routes, nth, action))
        return schemes.SwitchSetup(made[-1], {})

    monkeypatch.setattr(schemes, "switch_setup", setup)
    r = run_one(s, RunSpec(scheme, ""))
    return r, made[0]


def decreases(t_ns: list[int], cwnd: list[int]) -> list[int]:
    """Times the congestion window went down."""
    return [t_ns[i] for i in range(1, len(cwnd)) if cwnd[i] < cwnd[i - 1]]


# ---- schema -------------------------------------------------------------


def test_transport_defaults_to_udp_and_every_bundled_scenario_stays_udp() -> None:
    raw = dumbbell()
    del raw["transport"]
    for f in raw["flows"]:
        del f["cc"]
    assert parse_scenario(raw).transport == "udp"
    assert load_scenario("pmqecn-s1").transport == "udp"
    assert load_scenario("tcp-smoke").transport == "tcp"


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"transport": "quic"}, "transport", "udp"),
        (
            {"flows": [{"name": "f", "src": "h1", "dst": "r1", "cc": "reno"}]},
            "flows[0].cc",
            "dctcp",
        ),
        (
            {"transport": "udp", "flows": [{"name": "f", "src": "h1", "dst": "r1", "cc": "cubic"}]},
            "flows[0].cc",
            "transport: tcp",
        ),
        ({"flows": [{"name": "f", "src": "h1", "dst": "r1", "load": 0.5}]}, "flows[0].load", "TCP"),
        # Reactions only the rate-paced senders have: under TCP the run would
        # measure the switch side alone under the scheme's name.
        ({"schemes": {"p4qcn": {}, "none": {}}}, "schemes.p4qcn", "rate-paced"),
        (
            {"schemes": {"bfcc-m": {"sender_reaction": "match_switch"}, "none": {}}},
            "schemes.bfcc-m.sender_reaction",
            "rate-paced",
        ),
    ],
)
def test_bad_tcp_fields_are_refused_by_name(change: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(dumbbell(**change), "x.yaml")
    assert err.value.field == field
    assert says in str(err.value)


def test_bfccs_switch_side_reductions_run_with_tcp_hosts() -> None:
    """Fakes and TM shaping act in the switches, so TCP hosts see them."""
    s = parse_scenario(
        dumbbell(schemes={"bfcc": {}, "bfcc-s": {"reduction": "shaping"}, "none": {}})
    )
    assert s.schemes.enabled() == ["bfcc", "bfcc-s", "none"]
    assert load_scenario("bfcc-two-receivers-shallow-tcp").transport == "tcp"


# ---- ns-3 ---------------------------------------------------------------


@needs_ns3
@pytest.mark.parametrize("cc", ["newreno", "dctcp"])
def test_ce_set_by_a_switch_model_makes_the_sender_cut_its_window(
    monkeypatch: pytest.MonkeyPatch, cc: str
) -> None:
    s = parse_scenario(dumbbell(cc))
    clean, _ = run_with(monkeypatch, s, "tcn", 0, "mark")
    marked, switch = run_with(monkeypatch, s, "tcn", 40, "mark")
    c, m = clean.tcp[0], marked.tcp[0]
    assert c.ecn and m.ecn
    # Unmarked and lossless: the window only grows, no ECN-Echo.
    assert c.ece_acks == 0 and not decreases(c.cwnd_t_ns, c.cwnd_bytes)
    # One CE mark: the receiver echoes it and the sender cuts its window
    # once, after the mark, without losing or resending anything.
    assert switch.at_ns is not None
    assert m.ece_acks >= 1 and m.retransmissions == 0 and marked.drops_active == 0
    cuts = decreases(m.cwnd_t_ns, m.cwnd_bytes)
    assert cuts and cuts[0] > switch.at_ns
    trace = list(zip(m.cwnd_t_ns, m.cwnd_bytes, strict=True))
    before = max(w for t, w in trace if t < cuts[0])
    # ns-3 brings the window down to the new ssthresh over the CWR round
    # (proportional rate reduction), not in one step: its lowest point after
    # the mark. NewReno halves (RFC 3168). DCTCP cuts by alpha/2: ns-3's
    # alpha starts at 1 and loses 1/16 per unmarked window, and the mark
    # comes within the first 10 windows, so alpha > (15/16)^10 > 0.5 and
    # the cut is to between half and three quarters. Never to one segment
    # (that would be a timeout).
    lowest = min(w for t, w in trace if t >= cuts[0])
    segment = PACKET_BYTES - IPV4_TCP_HEADER_BYTES
    most = before // 2 if cc == "newreno" else before * 3 // 4
    assert before // 2 - 2 * segment <= lowest <= most + segment
    assert marked.flows[0].completed_ns is not None
    assert marked.flows[0].bytes_received == FLOW_BYTES


@needs_ns3
def test_ns3_dctcp_with_delayed_acks_loses_an_isolated_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Why a DCTCP receiver ACKs every segment (evaluation/tcp.py, "DCTCP and
    # delayed ACKs"): with ns-3's delayed ACKs the one mark is echoed on an
    # ACK that does not advance, and the sender never cuts. If this starts
    # failing, ns-3 echoes correctly and the workaround can go.
    monkeypatch.setattr(tcp, "DCTCP_ACK_EVERY_SEGMENTS", tcp.DELAYED_ACK_SEGMENTS)
    s = parse_scenario(dumbbell("dctcp"))
    marked, switch = run_with(monkeypatch, s, "tcn", 40, "mark")
    m = marked.tcp[0]
    assert switch.at_ns is not None and m.ece_acks >= 1
    assert not decreases(m.cwnd_t_ns, m.cwnd_bytes)


@needs_ns3
def test_a_drop_by_a_switch_model_is_retransmitted(monkeypatch: pytest.MonkeyPatch) -> None:
    s = parse_scenario(dumbbell())
    clean, _ = run_with(monkeypatch, s, "none", 0, "drop")
    lossy, switch = run_with(monkeypatch, s, "none", 40, "drop")
    assert switch.at_ns is not None
    assert clean.tcp[0].retransmissions == 0 and clean.drops_active == 0
    assert lossy.drops_active == 1
    assert lossy.tcp[0].retransmissions >= 1
    f = lossy.flows[0]
    # Every byte still reaches the application (the queue behind the lost
    # segment keeps the link busy through the fast retransmit, so it need
    # not finish later).
    assert f.bytes_received == FLOW_BYTES and f.completed_ns is not None
    # One segment more went out than arrived: the lost one.
    assert f.packets_sent == f.packets_received + 1


@needs_ns3
@pytest.mark.parametrize("cc", ["newreno", "cubic", "dctcp", "bbr"])
def test_each_congestion_control_completes_a_flow_and_reports_rtt(cc: str) -> None:
    s = parse_scenario(dumbbell(cc))
    r = run_one(s, RunSpec("none", ""))
    f, t = r.flows[0], r.tcp[0]
    assert t.cc == cc and t.ecn == (cc == "dctcp")
    assert f.completed_ns is not None and f.bytes_received == FLOW_BYTES
    assert f.fct_ns is not None
    # The flow cannot finish faster than its bytes take at the 10 Mb/s link.
    assert f.fct_ns > FLOW_BYTES * 8 / 10e6 * 1e9
    # RTT samples: none below the propagation delay there and back (two
    # links of 0.5 ms; the handshake's sample carries no data), about one
    # per ACK (one every two segments).
    assert t.rtt_ns and min(t.rtt_ns) >= 2 * 2 * 500_000
    assert len(t.rtt_ns) >= FLOW_BYTES // (PACKET_BYTES - 40) // 2 - 1
    m = compute_metrics(r, s)
    assert m.values["rtt_mean_ms"] == pytest.approx(np.mean(t.rtt_ns) / 1e6)
    assert m.values["fct_mean_ms"] == pytest.approx(f.fct_ns / 1e6)
    assert m.detail["tcp"]["f"]["cc"] == cc


# The smoke scenario on a short horizon: long enough for none's buffer to
# overflow (100 packets) and DCTCP's alpha to settle under TCN.
SMOKE_HORIZON_S = 1.5


@pytest.fixture(scope="module")
def smoke() -> dict[str, RunResult]:
    s = load_scenario("tcp-smoke").model_copy(update={"duration_s": SMOKE_HORIZON_S})
    return {name: run_one(s, RunSpec(name, "")) for name in ("tcn", "none")}


@needs_ns3
def test_tcp_smoke_tcn_holds_the_queue_that_none_overflows(smoke: dict[str, RunResult]) -> None:
    s = load_scenario("tcp-smoke").model_copy(update={"duration_s": SMOKE_HORIZON_S})
    tcn, none = smoke["tcn"], smoke["none"]
    m_tcn, m_none = compute_metrics(tcn, s).values, compute_metrics(none, s).values
    # none: a full buffer, drops, retransmissions.
    assert none.drops_overflow > 0 and sum(t.retransmissions for t in none.tcp) > 0
    assert sum(t.ece_acks for t in none.tcp) == 0
    # TCN: every sender reacts to marks; no drops, a queue a fraction of none's.
    assert tcn.drops_overflow == 0 and all(t.ece_acks > 0 for t in tcn.tcp)
    assert m_tcn["queue_mean_packets"] is not None and m_none["queue_mean_packets"] is not None
    assert m_tcn["queue_mean_packets"] < 0.2 * m_none["queue_mean_packets"]
    assert m_tcn["rtt_mean_ms"] is not None and m_none["rtt_mean_ms"] is not None
    assert m_tcn["rtt_mean_ms"] < 0.5 * m_none["rtt_mean_ms"]
    # And the link stays busy: at least 80 % of 10 Mb/s delivered either way.
    for r in (tcn, none):
        goodput_bps = sum(f.bytes_received for f in r.flows) * 8 / SMOKE_HORIZON_S
        assert goodput_bps > 0.8 * 10e6, r.scheme


@needs_ns3
def test_report_shows_each_tcp_flow(smoke: dict[str, RunResult], tmp_path: Path) -> None:
    s = load_scenario("tcp-smoke").model_copy(update={"duration_s": SMOKE_HORIZON_S})
    paths = write_report(s, list(smoke.values()), tmp_path)
    md = Path(paths.markdown).read_text()
    table = md.split("## TCP flows")[1].split("##")[0]
    for r in smoke.values():
        for t in r.tcp:
            name = r.flows[t.flow_id].name
            row = next(
                line for line in table.splitlines() if f"| {r.scheme} | — | {name} |" in line
            )
            assert f"| {t.retransmissions} | {t.ece_acks} |" in row
    assert "RTT: every sample the sender sockets took" in md
    results = json.loads((tmp_path / "results.json").read_text())
    tcn = next(run for run in results["runs"] if run["scheme"] == "tcn")
    assert tcn["detail"]["tcp"]["dctcp"]["cc"] == "dctcp"
    assert tcn["detail"]["tcp"]["dctcp"]["rtt_samples"] == len(smoke["tcn"].tcp[0].rtt_ns)


@needs_ns3
def test_both_glues_give_the_same_tcp_run() -> None:
    # The TCP hosts use only the Sim's receive and send (models/speedups.py
    # picks the glue): the reference glue must give the same run.
    s = load_scenario("tcp-smoke").model_copy(update={"duration_s": 0.3})
    fast = run_one(s, RunSpec("tcn", ""))
    with speedups.disabled():
        ref = run_one(s, RunSpec("tcn", ""))
    assert sum(f.packets_received for f in fast.flows) > 0
    assert all(t.ece_acks > 0 for t in fast.tcp)
    a, b = dataclasses.asdict(fast), dataclasses.asdict(ref)
    a.pop("wall_s")
    b.pop("wall_s")
    assert a == b


PMQECN_HORIZON_S = 1.5


@needs_ns3
def test_dctcp_through_pmqecn_with_mark_original_holds_the_queue() -> None:
    # Issue 14's acceptance: DCTCP senders through PMQECN with
    # mark_original react to CE, the queue stays near K_i, throughput is
    # steady. Without mark_original PMQECN signals only in its feedback
    # packets, which a TCP host does not read: the same senders fill the
    # buffer.
    raw = load_scenario("tcp-smoke").model_dump()
    raw.update(
        name="tcp-pmqecn",
        duration_s=PMQECN_HORIZON_S,
        flows=[
            {"name": "d1", "src": "h1", "dst": "r1", "cc": "dctcp"},
            {"name": "d2", "src": "h2", "dst": "r2", "cc": "dctcp"},
        ],
        schemes={
            "pmqecn": {"optimizer_interval_s": 0.2},
            "pmqecn-mark": {"optimizer_interval_s": 0.2, "mark_original": True},
        },
        claims=[],
    )
    s = parse_scenario(raw)
    k_packets = s.schemes.get("pmqecn-mark").threshold_packets  # type: ignore[union-attr]
    marked = run_one(s, RunSpec("pmqecn-mark", ""))
    plain = run_one(s, RunSpec("pmqecn", ""))

    def queue_max_after(r: RunResult, t_s: float) -> int:
        q = r.queues[0]
        return max(d for t, d in zip(q.t_ns, q.depth_packets, strict=True) if t >= t_s * 1e9)

    assert all(t.ece_acks > 0 for t in marked.tcp)
    assert marked.drops_overflow == 0 and all(t.retransmissions == 0 for t in marked.tcp)
    assert queue_max_after(marked, 0.5) <= 2 * k_packets
    # Steady: every 0.1 s after the first 0.2 s delivers at least 60 % of
    # the 10 Mb/s bottleneck.
    recv = np.asarray(marked.packets.recv_ns)
    size = np.asarray(marked.packets.size)
    bins = np.bincount(recv // 100_000_000, weights=size, minlength=15)[2:15] * 8 / 0.1
    assert bins.min() >= 0.6 * 10e6
    # Without the marks: no ECN-Echo, and the queue is the buffer's.
    assert all(t.ece_acks == 0 for t in plain.tcp)
    assert queue_max_after(plain, 0.5) > 2 * k_packets


def chain(packet_bytes: int, buffer_packets: int) -> dict[str, Any]:
    """One flow h1 -> s1 -> s2 -> r1, every link 10 Mb/s: no link is slower
    than the host's, so nothing should queue anywhere."""
    return {
        "name": "tcp-chain",
        "duration_s": 1.0,
        "transport": "tcp",
        "buffer_packets": buffer_packets,
        "link": {"rate": "10Mbps", "delay_us": 100},
        "hosts": ["h1", "r1"],
        "switches": ["s1", "s2"],
        "links": [{"a": "h1", "b": "s1"}, {"a": "s1", "b": "s2"}, {"a": "s2", "b": "r1"}],
        "flows": [
            {
                "name": "f",
                "src": "h1",
                "dst": "r1",
                "size_bytes": 200_000,
                "packet_bytes": packet_bytes,
            }
        ],
        "monitor": [{"switch": "s1", "toward": "s2"}, {"switch": "s2", "toward": "r1"}],
        "schemes": {"none": {}},
    }


def test_a_host_port_puts_an_ethernet_frames_length_on_the_wire() -> None:
    # Toward a TCP host the switch strips the Ethernet header (the host's
    # IP layer takes IPv4) and pads the packet by as many bytes, so the
    # port is busy for an Ethernet frame's time, as toward a switch; ns-3's
    # IPv4 trims the padding by the header's total length.
    port = tcp.HostPort(None, 1, b"\x02" * 6, {})  # type: ignore[arg-type]
    ip = bytearray(60)
    ip[0], ip[9] = 0x45, 6
    frame = b"\x02" * 12 + tcp.ETHERTYPE_IPV4 + bytes(ip)
    wire = port.to_wire(frame)
    assert wire is not None and len(wire) == len(frame)
    assert wire.startswith(bytes(ip)) and wire[len(ip) :] == bytes(len(frame) - len(ip))


@needs_ns3
@pytest.mark.parametrize("packet_bytes", [128, 1500])
def test_a_lone_tcp_flow_through_equal_links_never_queues_at_its_first_hop(
    packet_bytes: int,
) -> None:
    # A TCP host's link carries its IPv4 packets without an Ethernet header,
    # so without the host device's Ethernet-length gap each 128-byte packet
    # took 14 bytes' less time on the host's link than on s1's uplink: a
    # lone flow overloaded its first hop by 11 %, filled a 64-packet buffer
    # in slow start and waited out a 200 ms timeout.
    s = parse_scenario(chain(packet_bytes, 64))
    r = run_one(s, RunSpec("none", ""))
    f = r.flows[0]
    assert f.completed_ns is not None and f.bytes_received == 200_000
    assert r.drops_overflow == 0 and r.tcp[0].retransmissions == 0
    for q in r.queues:
        assert max(q.depth_packets) <= 1, q.where
    # Nor does the host outrun Ethernet: the flow takes at least its
    # segments' Ethernet frames (PPP included) at 10 Mb/s.
    segments = -(-200_000 // (packet_bytes - IPV4_TCP_HEADER_BYTES))
    assert f.fct_ns is not None
    assert f.fct_ns >= segments * tx_ns(packet_bytes + frames.ETH.size, 10_000_000)


@needs_ns3
@pytest.mark.parametrize(("delack_ms", "stuck"), [(40.0, True), (0.5, False)])
def test_a_delayed_ack_longer_than_the_minimum_rto_leaves_a_flow_at_one_segment(
    delack_ms: float, stuck: bool
) -> None:
    """An ON/OFF flow on a 1 ms minimum RTO (spie-dc's): an ON period that
    ends on a lone segment is ACKed only when the delayed-ACK timer fires,
    after the RTO has; with 40 ms the flow then sends one segment per RTO
    for the rest of the run (spie-dc's small senders, issue 47). A
    delayed-ACK timeout inside the RTO keeps it at its offered rate."""
    raw = dumbbell(
        duration_s=0.04,
        min_rto_ms=1,
        delack_timeout_ms=delack_ms,
        link={"rate": "1Gbps", "delay_us": 1},
        links=[{"a": "h1", "b": "s1"}, {"a": "s1", "b": "r1"}],
    )
    raw["flows"] = [
        {
            "name": "f",
            "src": "h1",
            "dst": "r1",
            "cc": "newreno",
            "app": "onoff",
            "rate": "100Mbps",
            "on_s": 0.0011,
            "off_s": 0.0019,
        }
    ]
    r = run_one(parse_scenario(raw), RunSpec("none", ""))
    offered = 100e6 * 0.04 * 11 / 30 / 8
    got = r.flows[0].bytes_received
    if stuck:
        assert got < 0.5 * offered
    else:
        assert got > 0.8 * offered
