# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCP NewReno's window rules (RFC 5681 / RFC 6582), as ns-3's TcpNewReno
applies them, in plain Python: the algorithm a host runs inside ns-3's TCP
through evaluation/tcp_cc.py, and a reference any TCP window model here can
be checked against.

Only the congestion-window arithmetic is here. Loss detection, fast
retransmit, recovery (ns-3's PRR by default) and the window set on a
timeout stay in ns-3's TcpSocketBase, as they do for ns-3's own NewReno:
these rules are what `TcpCongestionOps` asks of an algorithm.

ns-3's choices, kept so the two agree to the byte:
- slow start adds one segment per ACK that acknowledges new data, however
  many segments it covers (RFC 5681's cwnd += min(N, SMSS)); the segments
  left over go to congestion avoidance once cwnd reaches ssthresh;
- congestion avoidance adds max(1, SMSS * SMSS / cwnd) bytes per such ACK,
  truncated to a whole byte;
- ssthresh after congestion is max(2 SMSS, bytes in flight / 2).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Window:
    """What the algorithm reads and writes of a connection's state."""

    cwnd_bytes: int
    ssthresh_bytes: int
    segment_bytes: int


class NewReno:
    name = "NewReno"

    def increase_window(self, w: Window, segments_acked: int) -> None:
        """An ACK acknowledged `segments_acked` new segments (not in recovery)."""
        if w.cwnd_bytes < w.ssthresh_bytes:
            segments_acked = self._slow_start(w, segments_acked)
        if w.cwnd_bytes >= w.ssthresh_bytes:
            self._congestion_avoidance(w, segments_acked)

    def packets_acked(self, w: Window, segments_acked: int, rtt_ns: int, ece: bool) -> None:
        """Every ACK's RTT sample and ECN echo: NewReno needs neither."""

    def ssthresh_bytes(self, segment_bytes: int, bytes_in_flight: int, ece: bool = False) -> int:
        """The slow-start threshold after a loss or an ECN echo (the same)."""
        return max(2 * segment_bytes, bytes_in_flight // 2)

    def _slow_start(self, w: Window, segments_acked: int) -> int:
        if segments_acked >= 1:
            w.cwnd_bytes += w.segment_bytes
            return segments_acked - 1
        return 0

    def _congestion_avoidance(self, w: Window, segments_acked: int) -> None:
        if segments_acked > 0:
            adder = max(1.0, w.segment_bytes * w.segment_bytes / w.cwnd_bytes)
            w.cwnd_bytes += int(adder)
