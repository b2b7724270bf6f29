# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCP hosts: ns-3's own internet stack and TCP (NewReno, Cubic, DCTCP, BBR
as ns-3 ships them) sending through the P4-model switch nodes.

How a TCP segment crosses a switch model, which only takes whole Ethernet
frames:
- a TCP host is an ns-3 node with `InternetStackHelper`'s stack, an IPv4
  address from the harness's plan (`network.ip_of_host`) on its
  point-to-point device and a default route out of it. Point-to-point needs
  no ARP, so the host's IP layer hands each packet to the device, which
  sends it as the PPP payload;
- the switch's end of that link keeps the harness's receive path: the bytes
  that arrive there are the host's IPv4 packet, and `HostPort.from_host`
  puts an Ethernet header on it (source: the host's MAC, destination: the
  MAC of the host owning the destination address, as the UDP senders
  address their frames; EtherType IPv4) before the switch model sees it;
- toward the host, `HostPort.to_wire` (the `SwitchPort.to_wire` hook) strips
  the Ethernet header again, so the host's IP layer gets an IPv4 packet. Only
  TCP reaches a TCP host: what else a switch sends there (feedback made for
  the UDP senders' rate controllers, BFCC's fakes) is not for its stack and
  is counted (`RunResult.notes`), not delivered. The switch port times the
  serialisation of the bytes it actually puts on the wire;
- a host link carries Ethernet-length frames both ways, as between switches
  and from the rate-paced UDP hosts: toward the host `to_wire` pads the IPv4
  packet by the Ethernet header's 14 bytes (ns-3's IPv4 trims padding beyond
  the header's total length, as it does a short Ethernet frame's), and the
  host's device waits 14 bytes' time after each frame (its `InterframeGap`).
  Without both, a host's 128-byte packet took 10 % less time on its own link
  than on its first switch's uplink, and a lone flow through equal-rate
  links overflowed a shallow buffer at its first hop.
So a CE mark or a drop a switch model makes is what the ns-3 TCP receiver
sees or misses. ns-3 computes real IPv4 and TCP checksums (ChecksumEnabled)
in TCP runs, so a model that rewrote the header without fixing its
checksum would have its packets dropped by the receiving host, as on
hardware.

Per flow (scenario `flows[i]`, `transport: tcp`):
- the sender socket gets its congestion control by TypeId (`cc`) from
  `TcpL4Protocol::CreateSocket`; the receiver listens on its own port with
  the same algorithm (DCTCP's receiver behaviour lives in TcpDctcp);
- ECN is on (RFC 3168 on both ends) when the scheme marks CE (`ECN_KINDS`),
  and always for DCTCP, which ns-3's TcpDctcp switches on itself;
- a flow's DSCP is written by the host's adaptor (`HostPort.mark_dscp`) on
  its data and its ACKs, not by the socket: ns-3 3.44 sends no ECT from a
  TCP socket whose IP TOS is set;
- TCP timestamps are off: ns-3's TS option counts milliseconds, and its RTT
  samples would then be whole milliseconds; without it ns-3 samples each
  ACK against the send time of the segment it covers (Karn's rule);
- segment size = the flow's `packet_bytes` - 40 (IPv4 and TCP headers; no
  options on data segments without timestamps), so the switch's buffer in
  packets means the same as for UDP; socket buffers 4 MiB each way (ns-3's
  128 KiB default would cap the window below the bandwidth-delay product of
  seed 002's dumbbell); minimum RTO 200 ms (Linux's; ns-3's default is 1 s; a
  scenario's `min_rto_ms` sets another);
  delayed-ACK timeout 40 ms (Linux's minimum; ns-3's 200 ms equals the
  minimum RTO, so a window of one segment timed out spuriously; a
  scenario with a shorter `min_rto_ms` sets a shorter `delack_timeout_ms`,
  or after one timeout a flow sends one segment per minimum RTO for
  good); everything
  else is ns-3's default (initial window 10 segments, an ACK every 2
  segments, SACK on), except:

DCTCP and delayed ACKs: ns-3's TcpDctcp receiver (3.44, unchanged in
ns-3-dev at 3.48+85) loses an isolated CE mark when it delays ACKs. TcpSocketBase
raises CA_EVENT_ECN_IS_CE before the segment enters the receive buffer, so
CeState0to1 records prior_rcv_nxt *without* the CE segment; the next
(unmarked) segment makes CeState1to0 send "the previous ACK with ECE" for
that prior_rcv_nxt, which acknowledges nothing new, and the sender ignores
ECE on an ACK that does not advance (TcpSocketBase::ProcessAck). Linux
updates prior_rcv_nxt after the segment is queued and sends the state-change
ACK at once, so its echo covers the marked segment. A DCTCP receiver here
ACKs every segment (DelAckCount 1), where RFC 8257's echo is exact: each
ACK carries its segment's CE. tests/evaluation/test_tcp.py keeps a test that shows
the loss with ns-3's delayed ACKs, so a fixed ns-3 is noticed.

The application is a bulk transfer (ns-3's BulkSendApplication's logic, in
the C++ glue below so nothing per packet runs in Python): from `start_s` it
keeps the socket's send buffer full until `size_bytes` are handed over (then
closes), or until `stop_s` / the end of the run. Or (`app: onoff`) ns-3's
OnOffApplication: ON and OFF periods (constant or exponential, drawn from a
generator seeded by the scenario's seed and the flow), one segment per
segment time at the flow's `rate` while ON, starting ON when the connection
is up. Its receiving side logs
each delivery to the application (the run's PacketLog: bytes delivered, no
send time) and the time the last byte of a sized flow arrived (the FCT).
RTT: every sample the sender socket's own RTT estimator is given (a
recording `RttMeanDeviation` installed with `TcpSocketBase::SetRtt`; the
`LastRTT` trace source fires only when the value changes, so equal
consecutive samples would be lost). Also kept per flow: the congestion
window trace, data segments sent and received, retransmissions (trace
source `Retransmission`) and ACKs carrying ECN-Echo.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from models.switch.headers import ipv4_checksum

from . import frames, tcp_cc
from .network import SwitchNode, ip_of_host, mac_of_host
from .records import FlowRecord, PacketLog, TcpFlowStats
from .tcp_glue import glue

# Scheme kinds whose switches set CE: their TCP senders negotiate ECN.
ECN_KINDS = frozenset({"dcqcn", "tcn", "pmqecn", "dadctcp"})
# ns-3's TypeId for each `cc` of a scenario flow.
CC_TYPES = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "dctcp": "ns3::TcpDctcp",
    # DCTCP sending ECT(1) (TcpDctcp's UseEct0 off): a scalable (L4S, RFC
    # 9331) sender, classified to a DualPI2 pair's L queue.
    "dctcp-l4s": "ns3::TcpDctcp",
    "bbr": "ns3::TcpBbr",
    # Python's NewReno from models/hosts on the sender (evaluation/tcp_cc.py);
    # the receiver runs ns-3's.
    "newreno-py": "ns3::TcpNewReno",
    # DA-DCTCP's Algorithm 1 (models/hosts/dadctcp.py) on the sender; the
    # receiver is ns-3's DCTCP receiver (an ECE per CE-marked segment).
    "dadctcp-py": "ns3::TcpDctcp",
}
# Flows whose receiver is ns-3's DCTCP receiver (and whose ECN is on).
DCTCP_RECEIVERS = frozenset({"dctcp", "dctcp-l4s", "dadctcp-py"})
# Flows whose data carry ECT(1) rather than ECT(0).
ECT1_CCS = frozenset({"dctcp-l4s"})
IPV4_TCP_HEADER_BYTES = 40
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024
MIN_RTO_MS = 200
DELAYED_ACK_TIMEOUT_MS = 40
DELAYED_ACK_SEGMENTS = 2
# A DCTCP receiver ACKs every segment: see "DCTCP and delayed ACKs" above.
DCTCP_ACK_EVERY_SEGMENTS = 1
# Receiver port of flow i: TCP_PORT_BASE + i.
TCP_PORT_BASE = 20000
IP_PROTO_TCP = 6
ETHERTYPE_IPV4 = b"\x08\x00"


def _u32(ip: bytes) -> int:
    return int.from_bytes(ip, "big")


class HostPort:
    """The Ethernet adaptor on a switch port facing a TCP host (see the
    module docstring)."""

    def __init__(
        self,
        switch: SwitchNode,
        port: int,
        host_mac: bytes,
        macs: dict[bytes, bytes],
        dscp_of_port: dict[int, int] | None = None,
    ):
        self.switch, self.port = switch, port
        self.host_mac = host_mac
        self.macs = macs  # IPv4 address -> MAC of the host that owns it
        # Flow port (TCP_PORT_BASE + id) -> the flow's DSCP, when not 0.
        self.dscp_of_port = dscp_of_port if dscp_of_port is not None else {}
        self.not_delivered = 0

    def from_host(self, packet: bytes) -> None:
        if self.dscp_of_port:
            packet = self.mark_dscp(packet)
        dst_mac = self.macs.get(packet[16:20], b"\xff" * 6)
        self.switch.receive(self.port, dst_mac + self.host_mac + ETHERTYPE_IPV4 + packet)

    def mark_dscp(self, packet: bytes) -> bytes:
        """The flow's DSCP in both directions (its data and its ACKs), ECN
        bits kept, header checksum fixed, as a host's NIC or qdisc marks it.
        Not the socket's IP_TOS: ns-3 3.44's Socket::SetIpTos keeps the old
        ECN bits of a stream socket and TcpSocketBase::AddSocketTags then sets
        ECT only when those bits already are ECT, so a TCP socket with a DSCP
        never sends ECN-capable segments."""
        if len(packet) < 24 or packet[9] != IP_PROTO_TCP:
            return packet
        ihl = (packet[0] & 0x0F) * 4
        sport, dport = struct.unpack_from("!HH", packet, ihl)
        dscp = self.dscp_of_port.get(dport, self.dscp_of_port.get(sport))
        if dscp is None:
            return packet
        hdr = bytearray(packet[:ihl])
        hdr[1] = (dscp << 2) | (hdr[1] & 0x03)
        hdr[10:12] = b"\x00\x00"
        hdr[10:12] = ipv4_checksum(bytes(hdr)).to_bytes(2, "big")
        return bytes(hdr) + packet[ihl:]

    def to_wire(self, frame: bytes) -> bytes | None:
        if frame[12:14] != ETHERTYPE_IPV4 or len(frame) < 34 or frame[23] != IP_PROTO_TCP:
            self.not_delivered += 1
            return None
        return frame[frames.ETH.size :] + bytes(frames.ETH.size)


@dataclass(frozen=True)
class OnOff:
    """An ON/OFF application's parameters (scenario `app: onoff`)."""

    rate_bps: int
    on_ns: int
    off_ns: int
    exponential: bool
    seed: int


def ecn_for(scheme_kind: str, cc: str, marks: bool = False) -> bool:
    """`marks`: the scheme marks CE though its kind may not (an ns-3 AQM with ECN)."""
    return cc in DCTCP_RECEIVERS or marks or scheme_kind in ECN_KINDS


class TcpNet:
    """One run's TCP side: hosts' stacks, the host-facing adaptors, the flows."""

    def __init__(self, ns: Any, host_index: dict[str, int]) -> None:
        self.ns = ns
        self.g = glue()
        self.g.EnableChecksums()
        self.host_index = host_index
        self.macs = {ip_of_host(i): mac_of_host(i) for i in host_index.values()}
        self.ports: list[HostPort] = []
        # Each flow's DSCP by its port, marked at the host adaptors.
        self.dscp_of_port: dict[int, int] = {}
        self._flows: list[tuple[int, Any, str, bool]] = []
        self.nodes: dict[str, Any] = {}
        # Python congestion controls: alive until ns-3 has let go of them
        # (this object outlives the run's Simulator::Destroy).
        self.python_cc: list[Any] = []
        self.errors: list[BaseException] = []

    def install_stacks(self, nodes: dict[str, Any]) -> None:
        """ns-3's internet stack on each host node (before devices get addresses)."""
        stack = self.ns.InternetStackHelper()
        for host in self.host_index:
            stack.Install(nodes[host])
            self.nodes[host] = nodes[host]

    def address(self, host: str, device: Any, rate_bps: int) -> None:
        """The host's IPv4 address on `device`, whose frames then take an
        Ethernet frame's time on the wire (module docstring)."""
        self.g.AddressHost(self.nodes[host], device, _u32(ip_of_host(self.host_index[host])))
        device.SetAttribute(
            "InterframeGap", self.ns.TimeValue(self.ns.Seconds(frames.ETH.size * 8 / rate_bps))
        )

    def host_port(self, switch: SwitchNode, port: int, host: str) -> HostPort:
        hp = HostPort(
            switch, port, mac_of_host(self.host_index[host]), self.macs, self.dscp_of_port
        )
        self.ports.append(hp)
        return hp

    def add_flow(
        self,
        rec: FlowRecord,
        *,
        cc: str,
        ecn: bool,
        packet_bytes: int,
        dscp: int,
        stop_ns: int,
        onoff: OnOff | None = None,
        min_rto_ms: float = MIN_RTO_MS,
        delack_timeout_ms: float = DELAYED_ACK_TIMEOUT_MS,
    ) -> None:
        f = self.g.NewFlow()
        f.src = self.nodes[rec.src]
        f.dst = self.nodes[rec.dst]
        f.dst_ip = _u32(ip_of_host(self.host_index[rec.dst]))
        f.port = TCP_PORT_BASE + rec.flow_id
        f.cc = self.g.Lookup(CC_TYPES[cc])
        if cc in tcp_cc.PYTHON_CC:
            ops = tcp_cc.host_ops(self.ns, tcp_cc.PYTHON_CC[cc](), self.errors)
            self.python_cc.append(ops)
            self.g.UseCongestionOps(f, ops)
        f.ecn = ecn
        f.ect1 = cc in ECT1_CCS
        f.segment_bytes = packet_bytes - IPV4_TCP_HEADER_BYTES
        f.size_bytes = rec.size_bytes or 0
        f.start_ns = rec.start_ns
        f.stop_ns = stop_ns
        if dscp:
            self.dscp_of_port[TCP_PORT_BASE + rec.flow_id] = dscp
        f.buffer_bytes = SOCKET_BUFFER_BYTES
        f.min_rto_ns = round(min_rto_ms * 1_000_000)
        f.delack_ns = round(delack_timeout_ms * 1_000_000)
        f.delack_segments = (
            DCTCP_ACK_EVERY_SEGMENTS if cc in DCTCP_RECEIVERS else DELAYED_ACK_SEGMENTS
        )
        if onoff is not None:
            f.rate_bps = float(onoff.rate_bps)
            f.on_ns = onoff.on_ns
            f.off_ns = onoff.off_ns
            f.exponential = onoff.exponential
            f.rng.seed(onoff.seed)
        self.g.Schedule(f)
        self._flows.append((rec.flow_id, f, cc, ecn))

    def collect(self, flows: dict[int, FlowRecord], log: PacketLog) -> list[TcpFlowStats]:
        """The run's facts into the records (call before ns-3 is reset)."""
        if self.errors:
            raise self.errors[0]
        out = []
        deliveries: list[tuple[int, int, int]] = []
        for flow_id, f, cc, ecn in self._flows:
            rec = flows[flow_id]
            rec.bytes_sent = int(f.bytes_sent)
            rec.packets_sent = int(f.segments_sent)
            rec.bytes_received = int(f.rx_bytes)
            rec.packets_received = int(f.segments_received)
            rec.first_rx_ns = None if f.first_rx_ns < 0 else int(f.first_rx_ns)
            rec.last_rx_ns = None if f.last_rx_ns < 0 else int(f.last_rx_ns)
            rec.completed_ns = None if f.completed_ns < 0 else int(f.completed_ns)
            rec.feedback_received = int(f.ece_acks)
            deliveries += [
                (int(t), flow_id, int(n)) for t, n in zip(f.rx_t_ns, f.rx_n_bytes, strict=True)
            ]
            out.append(
                TcpFlowStats(
                    flow_id=flow_id,
                    cc=cc,
                    ecn=bool(ecn),
                    segments_sent=int(f.segments_sent),
                    retransmissions=int(f.retransmissions),
                    segments_received=int(f.segments_received),
                    ece_acks=int(f.ece_acks),
                    rtt_t_ns=[int(x) for x in f.rtt_t_ns],
                    rtt_ns=[int(x) for x in f.rtt_ns],
                    cwnd_t_ns=[int(x) for x in f.cwnd_t_ns],
                    cwnd_bytes=[int(x) for x in f.cwnd_bytes],
                )
            )
        # In time order across flows (a stable sort keeps each flow's order).
        deliveries.sort(key=lambda d: d[0])
        for t, flow_id, n in deliveries:
            # No send time for a byte stream: sent_ns = recv_ns; RTT comes
            # from the sockets (RunResult.tcp).
            log.add(flow_id, n, t, t, False)
        return out

    def notes(self) -> list[str]:
        n = sum(p.not_delivered for p in self.ports)
        if not n:
            return []
        return [f"{n} non-TCP frames toward TCP hosts not delivered (not for their stack)"]

    def close(self) -> None:
        self._flows.clear()
        self.g.Clear()
