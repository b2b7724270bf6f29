# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A scenario with no Python per packet: the ceiling `eval_speed.py` prints
beside each scenario (issue 48).

The same nodes, links (rate, delay), per-port buffers and flows as the
harness builds, all in ns-3's own code: every node gets ns-3's internet
stack, every link is a point-to-point link with its own /30, the switches
are ns-3 IPv4 routers (global routing, shortest paths), each egress queue a
FIFO queue disc of the scenario's `buffer_packets`. TCP flows are ns-3's
BulkSend or OnOff applications with the flow's congestion control (ns-3's
TcpDctcp for `dadctcp-py`, TcpNewReno for `newreno-py`: the Python ones are
what the ceiling leaves out) and segment size; UDP flows are OnOff at
`load` x their access link's rate. A sink per flow takes the data and
ns-3's FlowMonitor counts the data packets that reach each receiver.

Not the harness's results (no P4, no Ethernet framing, no PFC, no
mechanism): only how fast ns-3 itself runs this much traffic on this
topology, which is what the Python per packet is measured against.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from evaluation import ns3_env
from evaluation.scenario import Scenario, parse_rate
from evaluation.tcp import CC_TYPES, IPV4_TCP_HEADER_BYTES, SOCKET_BUFFER_BYTES
from evaluation.topology import Topology

IPV4_UDP_HEADER_BYTES = 28
PORT_BASE = 9000


@dataclass(frozen=True)
class Ceiling:
    """Data packets delivered to the sinks, and the wall time of the run
    (building the network included, as `run_one`'s is)."""

    packets: int
    wall_s: float


def run(s: Scenario, seconds: float, rate: str | None = None) -> Ceiling:
    """`s` for `seconds` of simulated time, in ns-3 alone; `rate` is a
    link-rate sweep's variant (every link at it), as the harness runs one."""
    ns, _ = ns3_env.ns3()
    start = time.perf_counter()
    ns3_env.reset(ns)
    ns.RngSeedManager.SetSeed(max(1, s.seed))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUFFER_BYTES))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUFFER_BYTES))
    # One MSS for the run (ns-3 sets it per socket type, not per
    # application): the first TCP flow's, as the scenarios give one size.
    if s.transport == "tcp" and s.flows:
        mss = s.flows[0].packet_bytes - IPV4_TCP_HEADER_BYTES
        ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(mss))
    topo = Topology(s, rate)
    names = [*s.hosts, *s.switches]
    nodes = {name: ns.CreateObject[ns.Node]() for name in names}
    stack = ns.InternetStackHelper()
    for name in names:
        stack.Install(nodes[name])
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc(
        "ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{s.buffer_packets}p"))
    )
    addresses = ns.Ipv4AddressHelper()
    host_ip: dict[str, Any] = {}
    for i, link in enumerate(topo.links):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(link.rate_bps)))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(link.delay_ns)))
        # The port's buffer is the queue disc's; the device keeps one packet
        # (its default 100 would add to every buffer).
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
        devices = p2p.Install(nodes[link.a.node], nodes[link.b.node])
        tch.Install(devices)
        # A /30 per link: 10.128.0.0 upwards, clear of nothing (no other
        # addresses exist in this network).
        base = (10 << 24) | (128 << 16) | (i << 2)
        addresses.SetBase(ns.Ipv4Address(base), ns.Ipv4Mask("255.255.255.252"))
        assigned = addresses.Assign(devices)
        for end, k in ((link.a, 0), (link.b, 1)):
            if end.port is None:
                host_ip[end.node] = assigned.GetAddress(k)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    stop = ns.Seconds(seconds)
    for n, flow in enumerate(s.flows):
        port = PORT_BASE + n
        tcp = s.transport == "tcp"
        factory = "ns3::TcpSocketFactory" if tcp else "ns3::UdpSocketFactory"
        dst = ns.InetSocketAddress(host_ip[flow.dst], port).ConvertTo()
        anywhere = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sink = ns.PacketSinkHelper(factory, anywhere)
        sink_apps = sink.Install(nodes[flow.dst])
        sink_apps.Start(ns.Seconds(0))
        if tcp:
            cc = CC_TYPES[flow.cc or "newreno"]
            tcp_l4 = nodes[flow.src].GetObject[ns.TcpL4Protocol]()
            tcp_l4.SetAttribute("SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc)))
        segment = flow.packet_bytes - _headers(tcp)
        if tcp and flow.app == "bulk":
            helper = ns.BulkSendHelper(factory, dst)
            helper.SetAttribute("SendSize", ns.UintegerValue(segment))
            helper.SetAttribute("MaxBytes", ns.UintegerValue(flow.size_bytes or 0))
        else:
            helper = ns.OnOffHelper(factory, dst)
            rate_bps = _rate_bps(flow, topo.access_rate(flow.src))
            helper.SetConstantRate(ns.DataRate(rate_bps), segment)
            if flow.app == "onoff":
                helper.SetAttribute("OnTime", _constant(ns, flow.on_s))
                helper.SetAttribute("OffTime", _constant(ns, flow.off_s))
            if flow.size_bytes:
                helper.SetAttribute("MaxBytes", ns.UintegerValue(flow.size_bytes))
        apps = helper.Install(nodes[flow.src])
        apps.Start(ns.Seconds(flow.start_s))
        apps.Stop(ns.Seconds(min(seconds, flow.stop_s or seconds)))
    # Data packets that reached their receiver's node, counted in C++
    # (FlowMonitor): a sink's in-order bytes would leave out what waits
    # behind a loss in the receive buffer when the run stops.
    flowmon = ns.FlowMonitorHelper()
    monitor = flowmon.InstallAll()
    ns.Simulator.Stop(stop)
    ns.Simulator.Run()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](flowmon.GetClassifier())
    ports = {PORT_BASE + n for n in range(len(s.flows))}
    packets = 0
    for item in monitor.GetFlowStats():
        if classifier.FindFlow(item.first).destinationPort in ports:
            packets += item.second.rxPackets
    wall = time.perf_counter() - start
    ns.Simulator.Destroy()
    return Ceiling(int(packets), wall)


def _headers(tcp: bool) -> int:
    return IPV4_TCP_HEADER_BYTES if tcp else IPV4_UDP_HEADER_BYTES


def _rate_bps(flow: Any, access_bps: int) -> int:
    """An ON/OFF flow's rate while ON, else the harness's UDP rate
    (evaluation/simulate.py: load x the source's access link)."""
    if flow.rate is not None:
        return parse_rate(flow.rate)
    return round(access_bps * flow.load)


def _constant(ns: Any, seconds: float) -> Any:
    return ns.StringValue(f"ns3::ConstantRandomVariable[Constant={seconds}]")
