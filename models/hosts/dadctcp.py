# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP's sender window rule (seed 004, section 3.1, Eqs. 1, 7-9,
Algorithm 1) as a state machine: ACKs in, window out, no simulator.

How we read Algorithm 1 (its branches, lines 5-21, are ambiguous as printed):

* **Once per window, not per ACK.** Line 1 says "for every ACK", but F
  (Eq. 1) is "the score of the group marked in the last window" and
  alpha_ecn is DCTCP's per-window estimate; applying a multiplicative cut
  on every ACK of a window would collapse it in one RTT. So, as in DCTCP,
  a window ends when the bytes acknowledged since it began reach the
  window it began with; then alpha is updated and at most one of lines
  7/10/13/17/20 runs. Between window ends, slow start below ssthresh grows
  the window per ACK as any TCP does.
* **U and G per window.** U = cur_rtt / RTT_max (Eq. 8) with RTT_max the
  largest sample seen; G = (cur_rtt - pre_rtt) / RTT_min (Eq. 9) with
  cur_rtt the window's last sample and pre_rtt the previous window's.
* **Line 5** "alpha_ecn > 0.125 of delivered packets for 2 consecutive
  RTTs": alpha above 0.125 at the end of this window and of the one before.
* **Lines 6-13 are three exclusive cases.** Printed, the `else` of line 12
  belongs to line 9's `if`, so U > 0.8 with G > 0 would halve (line 7) and
  then cut again by alpha/4 (line 13), and U = 0.8 with G > 0 would match
  no line at all. Read: U >= 0.8 and G > 0 halves; U < 0.8 and G > 0 cuts
  by alpha/2; G <= 0 cuts by alpha/4 (line 13's comment says "increase",
  its formula decreases: the formula is kept).
* **Lines 15-21**: without persistent marking, G > 0 cuts by alpha/4 and
  G <= 0 adds one segment (line 20's "CWND + 1", in segments: congestion
  avoidance's one segment per window).
* A cut sets ssthresh to the new window (leaving slow start), never below
  two segments; g = 1/16 (DCTCP's, Eq. 2).
* alpha starts at 0; seed 004 names no initial value. DCTCP's starts at 1
  (ns-3's DctcpAlphaOnInit, Linux's dctcp_alpha_on_init), which here
  removes the fat-tree's slow-start drops but, with persistence read from
  alpha itself (line 5 above), cuts a long flow every window for the ~32
  windows alpha takes to decay (docs/evaluation.md, `dadctcp-fattree`).

Rates and sizes in bytes, times in ns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .newreno import Window

G_DEFAULT = 1 / 16
U_THRESHOLD = 0.8
ALPHA_PERSISTENT = 0.125


@dataclass(frozen=True)
class Decision:
    """What the last window end did (for tests and traces)."""

    alpha: float
    u: float
    g_rtt: float
    persistent: bool
    action: str  # "halve", "alpha/2", "alpha/4", "+1", "none"


class DaDctcpSender:
    def __init__(
        self,
        mss_bytes: int,
        initial_cwnd_segments: int = 10,
        ssthresh_bytes: int | None = None,
        g: float = G_DEFAULT,
    ) -> None:
        if isinstance(mss_bytes, bool) or not isinstance(mss_bytes, int) or mss_bytes < 1:
            raise ValueError(f"mss_bytes must be an integer >= 1, got {mss_bytes!r}")
        if not (isinstance(initial_cwnd_segments, int) and initial_cwnd_segments >= 1):
            raise ValueError(
                f"initial_cwnd_segments must be an integer >= 1, got {initial_cwnd_segments!r}"
            )
        if not (isinstance(g, float | int) and 0 < g <= 1):
            raise ValueError(f"g must be in (0, 1], got {g!r}")
        self.mss = mss_bytes
        self.cwnd_bytes = initial_cwnd_segments * mss_bytes
        self.ssthresh_bytes = ssthresh_bytes if ssthresh_bytes is not None else 1 << 62
        self.g = float(g)
        self.alpha = 0.0
        self.rtt_min_ns: int | None = None
        self.rtt_max_ns = 0
        self.cur_rtt_ns = 0
        self.pre_rtt_ns: int | None = None
        self.alpha_high = [False, False]  # the last two window ends: alpha > 0.125
        self._window_start_cwnd = self.cwnd_bytes
        self._acked = 0
        self._marked = 0
        self.last: Decision | None = None

    def on_ack(self, rtt_ns: int, acked_bytes: int, ece: bool) -> None:
        """One ACK: its RTT sample, the bytes it acknowledges, its ECN echo."""
        if isinstance(rtt_ns, bool) or not isinstance(rtt_ns, int) or rtt_ns <= 0:
            raise ValueError(f"rtt_ns must be an integer > 0, got {rtt_ns!r}")
        if isinstance(acked_bytes, bool) or not isinstance(acked_bytes, int) or acked_bytes < 0:
            raise ValueError(f"acked_bytes must be an integer >= 0, got {acked_bytes!r}")
        self.cur_rtt_ns = rtt_ns
        self.rtt_min_ns = rtt_ns if self.rtt_min_ns is None else min(self.rtt_min_ns, rtt_ns)
        self.rtt_max_ns = max(self.rtt_max_ns, rtt_ns)
        self._acked += acked_bytes
        if ece:
            self._marked += acked_bytes
        if self.cwnd_bytes < self.ssthresh_bytes and not ece:
            self.cwnd_bytes += min(acked_bytes, self.mss)  # slow start
        if self._acked >= self._window_start_cwnd:
            self._end_window()

    def _end_window(self) -> None:
        f = self._marked / self._acked if self._acked else 0.0
        self.alpha = (1 - self.g) * self.alpha + self.g * f  # Eq. 1
        self.alpha_high = [self.alpha_high[1], self.alpha > ALPHA_PERSISTENT]
        assert self.rtt_min_ns is not None
        u = self.cur_rtt_ns / self.rtt_max_ns  # Eq. 8
        pre = self.pre_rtt_ns if self.pre_rtt_ns is not None else self.cur_rtt_ns
        g_rtt = (self.cur_rtt_ns - pre) / self.rtt_min_ns  # Eq. 9
        persistent = all(self.alpha_high)
        in_slow_start = self.cwnd_bytes < self.ssthresh_bytes
        if persistent:
            if g_rtt > 0 and u >= U_THRESHOLD:
                action, factor = "halve", 0.5
            elif g_rtt > 0:
                action, factor = "alpha/2", 1 - self.alpha / 2
            else:
                action, factor = "alpha/4", 1 - self.alpha / 4
        elif g_rtt > 0:
            action, factor = "alpha/4", 1 - self.alpha / 4
        else:
            action, factor = ("none" if in_slow_start else "+1"), 1.0
        if factor < 1.0:
            self.cwnd_bytes = max(2 * self.mss, math.floor(self.cwnd_bytes * factor))
            self.ssthresh_bytes = self.cwnd_bytes
        elif action == "+1":
            self.cwnd_bytes += self.mss
        self.last = Decision(self.alpha, u, g_rtt, persistent, action)
        self.pre_rtt_ns = self.cur_rtt_ns
        self._window_start_cwnd = self.cwnd_bytes
        self._acked = 0
        self._marked = 0


class DaDctcpCc:
    """Algorithm 1 as a host congestion control inside ns-3's TCP
    (evaluation/tcp_cc.py): ns-3 keeps loss detection and recovery, this
    keeps the window. Every ACK's RTT sample and ECN echo go to the state
    machine, which sets the window itself; ns-3's own reaction to an ECN
    echo (entering CWR, cutting to ssthresh) is turned off by answering
    the current window, since Algorithm 1 decides the cut; a loss halves
    the flight as TCP does, and the state machine continues from there."""

    name = "DA-DCTCP"

    def __init__(self) -> None:
        self.sender: DaDctcpSender | None = None
        self.acks = 0
        self.actions: dict[str, int] = {}

    def _sender(self, w: Window) -> DaDctcpSender:
        if self.sender is None:
            self.sender = DaDctcpSender(
                w.segment_bytes,
                initial_cwnd_segments=max(1, w.cwnd_bytes // w.segment_bytes),
                ssthresh_bytes=w.ssthresh_bytes,
            )
        return self.sender

    def packets_acked(self, w: Window, segments_acked: int, rtt_ns: int, ece: bool) -> None:
        s = self._sender(w)
        # The socket may have moved the window (recovery, a timeout).
        s.cwnd_bytes, s.ssthresh_bytes = w.cwnd_bytes, w.ssthresh_bytes
        before = s.last
        s.on_ack(rtt_ns if rtt_ns > 0 else max(s.cur_rtt_ns, 1), segments_acked * s.mss, ece)
        self.acks += 1
        if s.last is not None and s.last is not before:
            self.actions[s.last.action] = self.actions.get(s.last.action, 0) + 1
        w.cwnd_bytes, w.ssthresh_bytes = s.cwnd_bytes, s.ssthresh_bytes

    def increase_window(self, w: Window, segments_acked: int) -> None:
        """The window was set on the same ACK by packets_acked."""

    def ssthresh_bytes(self, segment_bytes: int, bytes_in_flight: int, ece: bool = False) -> int:
        if ece and self.sender is not None:
            return max(2 * segment_bytes, self.sender.cwnd_bytes)
        value = max(2 * segment_bytes, bytes_in_flight // 2)
        if self.sender is not None:
            self.sender.cwnd_bytes = self.sender.ssthresh_bytes = value
        return value
