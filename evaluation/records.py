# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What one simulation run leaves behind: the raw facts metrics are computed from.

A run appends to plain lists while it simulates (cheap, no numpy per packet)
and is frozen into a `RunResult`. Everything here is deterministic for a given
scenario and seed except `wall_s`, which no comparison may use.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FlowRecord:
    flow_id: int
    name: str
    src: str
    dst: str
    # Traffic class label from the scenario (PMQECN's A/B/C), or "".
    klass: str
    # None: the flow sends until its stop time instead of a fixed size.
    size_bytes: int | None
    start_ns: int
    bytes_sent: int = 0
    packets_sent: int = 0
    bytes_received: int = 0
    packets_received: int = 0
    first_rx_ns: int | None = None
    last_rx_ns: int | None = None
    # Arrival of the last byte of a sized flow, if every byte arrived.
    completed_ns: int | None = None
    # Congestion signals this flow's sender acted on (feedback, CNPs).
    feedback_received: int = 0
    # Data packets that arrived after one the sender sent later (a lower
    # sequence number than the highest delivered so far): reordering, e.g.
    # BFCC's recirculated originals overtaken by later packets.
    out_of_order: int = 0

    @property
    def fct_ns(self) -> int | None:
        return None if self.completed_ns is None else self.completed_ns - self.start_ns


@dataclass
class PacketLog:
    """One entry per data packet delivered to its receiver (columns)."""

    flow_id: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)  # IPv4 total length, bytes
    sent_ns: list[int] = field(default_factory=list)
    recv_ns: list[int] = field(default_factory=list)
    ce: list[bool] = field(default_factory=list)

    def add(self, flow_id: int, size: int, sent_ns: int, recv_ns: int, ce: bool) -> None:
        self.flow_id.append(flow_id)
        self.size.append(size)
        self.sent_ns.append(sent_ns)
        self.recv_ns.append(recv_ns)
        self.ce.append(ce)

    def __len__(self) -> int:
        return len(self.flow_id)


@dataclass
class QueueLog:
    """Depth of one monitored egress port as each arriving packet saw it
    (the view INT gives the papers' authors), all of the port's queues summed."""

    where: str  # "s3->r1": switch and the neighbour the port faces
    t_ns: list[int] = field(default_factory=list)
    depth_packets: list[int] = field(default_factory=list)
    depth_bytes: list[int] = field(default_factory=list)
    # Data packets this port's full buffer refused (tail drops).
    drops_overflow: int = 0

    def add(self, t_ns: int, packets: int, nbytes: int) -> None:
        self.t_ns.append(t_ns)
        self.depth_packets.append(packets)
        self.depth_bytes.append(nbytes)


@dataclass
class TcpFlowStats:
    """A TCP flow's facts (evaluation/tcp.py): what the sender's and the
    receiver's sockets and the application saw."""

    flow_id: int
    cc: str
    ecn: bool
    segments_sent: int
    retransmissions: int
    segments_received: int
    ece_acks: int
    # Every RTT sample of the sender socket: time taken and value.
    rtt_t_ns: list[int] = field(default_factory=list)
    rtt_ns: list[int] = field(default_factory=list)
    # The congestion window trace (bytes), each change.
    cwnd_t_ns: list[int] = field(default_factory=list)
    cwnd_bytes: list[int] = field(default_factory=list)


@dataclass
class RunResult:
    scenario: str
    scheme: str
    variant: str  # "" for a scenario without a sweep, else e.g. "50Mbps"
    seed: int
    duration_ns: int
    flows: list[FlowRecord]
    packets: PacketLog
    queues: list[QueueLog]
    # Tail drops at a full buffer, and drops a scheme chose (AQM, PFC-less loss).
    drops_overflow: int = 0
    drops_active: int = 0
    # Congestion messages made by switches or receivers, by kind
    # ("feedback", "cnp", "backpressure", "fake").
    feedback_sent: dict[str, int] = field(default_factory=dict)
    recirculated_packets: int = 0
    recirculated_bytes: int = 0
    # Frames a recirculation port's full queue refused: for BFCC each one a
    # fake's original (a lost data packet) or a copy of backpressure.
    recirculation_drops: int = 0
    # BFCC: fakes not made because the pipe's recirculation queue was over
    # its level; the original left itself (SwitchEgress.recirculation_skips).
    recirculation_skips: int = 0
    # PFC frames (802.1Qbb) by port, "<switch>-><neighbour>" (a host by its
    # name for those it received): pauses (refreshes included), resumes.
    pfc_pauses_sent: dict[str, int] = field(default_factory=dict)
    pfc_resumes_sent: dict[str, int] = field(default_factory=dict)
    pfc_pauses_received: dict[str, int] = field(default_factory=dict)
    # What the switches' controllers reported about their own settings, e.g.
    # thresholds the chip cannot measure ("<switch>: <report>"), once each.
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    # transport: tcp only, one per flow; RTT comes from these sockets' samples.
    tcp: list[TcpFlowStats] = field(default_factory=list)
    # A scheme's own counters summed over the switches at the end of the run
    # (S-PIE: sketch_drops, random_drops); empty for a scheme without any.
    scheme_counters: dict[str, int] = field(default_factory=dict)
