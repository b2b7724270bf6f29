# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What a simulated switch does to a packet: ingress before the traffic
manager, egress after it.

`TnaPipeline` runs a reference model of one of our P4 programs (the code the
PTF vectors check against the P4), configured by the project's own controller
app, so the evaluation exercises the same tables the controller writes on a
real switch. The baselines (DCQCN's RED/ECN, TCN, the P4QCN congestion point)
are algorithms from models/baselines behind the same two calls, with plain
destination routing.
"""

from __future__ import annotations

import random
import struct
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from hw_profiles import HwProfile
from models.baselines import (
    P4qcnCongestionPoint,
    P4qcnCpParams,
    RedEcnMarker,
    RedEcnParams,
    TcnMarker,
)
from models.switch.headers import ECN_CE, ipv4_checksum
from models.switch.tna import EgressIntrinsic, IngressIntrinsic, TnaProgram

from . import frames
from .tm import Dequeued, Shaping


@dataclass
class Forward:
    port: int
    qid: int
    frame: bytes | None  # None: dropped in ingress (its mirror copies still leave)
    # Frames ingress makes (ingress-mirrored feedback): each enters the
    # traffic manager of its port, queue 0.
    extra: list[tuple[int, bytes]] = field(default_factory=list)


@dataclass
class EgressOut:
    frame: bytes | None  # None: dropped in egress
    # Frames the switch makes (mirrored feedback, a baseline's notification):
    # each enters the traffic manager of its port, queue 0.
    extra: list[tuple[int, bytes]] = field(default_factory=list)


class Pipeline(ABC):
    # Ports whose egress feeds back into ingress (TNA recirculation).
    recirculation_ports: frozenset[int] = frozenset()

    def tm_config(self, port: int) -> tuple[dict[int, int], dict[int, int]]:
        """(priority by qid, weight by qid) of `port` in the traffic manager."""
        return {}, {}

    def tm_shaping(self) -> Shaping:
        """The switch's TM shapers, live: (port, queue or None) -> (kb/s, burst)."""
        return {}

    @abstractmethod
    def ingress(self, port: int, frame: bytes, now_ns: int) -> Forward | None: ...

    @abstractmethod
    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut: ...


class TnaPipeline(Pipeline):
    """A reference model between the ports, with the TM metadata the chip
    would report: enq_qdepth and deq_qdepth in cells and deq_timedelta in ns, each saturating
    at its field width."""

    def __init__(
        self,
        program: TnaProgram,
        profile: HwProfile,
        tm_priorities: dict[tuple[int, int], int],
        tm_weights: dict[tuple[int, int], int],
        tm_shaping: Shaping | None = None,
        port_tx_bytes: dict[int, int] | None = None,
    ) -> None:
        self.program = program
        self._shaping: Shaping = tm_shaping if tm_shaping is not None else {}
        # The switch's per-port byte counters ($PORT_STAT), which the
        # controller reads: every frame egress lets out counts.
        self._tx = port_tx_bytes
        self.profile = profile
        # The TM fields' widths (issue 48: the profile's properties computed
        # them three times per packet).
        self._max_qdepth_cells = profile.max_qdepth_cells
        self._max_timedelta_ns = profile.max_timedelta_ns
        self.recirculation_ports = frozenset(profile.recirculation_ports)
        self._prio = tm_priorities
        self._weights = tm_weights

    def tm_shaping(self) -> Shaping:
        return self._shaping

    def tm_config(self, port: int) -> tuple[dict[int, int], dict[int, int]]:
        prio = {q: p for (pt, q), p in self._prio.items() if pt == port}
        weights = {q: w for (pt, q), w in self._weights.items() if pt == port}
        return prio, weights

    def ingress(self, port: int, frame: bytes, now_ns: int) -> Forward | None:
        p = self.program
        p.now_ns = now_ns
        # In the arrival port's pipe when the model runs several (tna.py).
        r = p.ingress_in_pipe(IngressIntrinsic(port, now_ns), frame)
        extra = []
        if r.mirror is not None:
            made = p.ingress_mirror_copy(r.mirror, frame)
            if made is not None:
                extra.append(made[:2])
        if r.drop:
            return Forward(0, 0, None, extra) if extra else None
        return Forward(r.egress_port, r.qid, r.data, extra)

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        p = self.program
        p.now_ns = now_ns
        depth_max = self._max_qdepth_cells
        md = EgressIntrinsic(
            port,
            d.qid,
            min(d.enq_qdepth_cells, depth_max),
            min(d.sojourn_ns, self._max_timedelta_ns),
            min(d.deq_qdepth_cells, depth_max),
            now_ns,
        )
        r = p.egress_in_pipe(md, d.frame)
        out = EgressOut(None if r.drop else r.data)
        if self._tx is not None and not r.drop:
            self._tx[port] = self._tx.get(port, 0) + len(r.data)
        if r.mirror is not None:
            s = p.mirror_sessions.get(r.mirror.session_id)
            # No copy for a missing or disabled session, as on hardware.
            if s is not None and s.enabled and s.direction != "INGRESS":
                body = r.data[: s.max_pkt_len] if s.max_pkt_len else r.data
                out.extra.append((s.egress_port, r.mirror.header + body))
        return out


class RoutedPipeline(Pipeline):
    """Destination routing for the baselines: the port toward each host."""

    def __init__(self, routes: dict[bytes, int], seed: int) -> None:
        self.routes = routes
        self.rng = random.Random(seed)

    def ingress(self, port: int, frame: bytes, now_ns: int) -> Forward | None:
        if frame[12:14] != b"\x08\x00":
            return None
        out = self.routes.get(frame[30:34])
        return None if out is None else Forward(out, 0, frame)

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        return EgressOut(d.frame)


def set_ce(frame: bytes) -> bytes:
    """CE on an ECN-capable IPv4 packet (checksum updated); others unchanged."""
    tos = frame[15]
    if tos & 3 == 0 or tos & 3 == ECN_CE:
        return frame
    hdr = bytearray(frame[14:34])
    hdr[1] = tos | ECN_CE
    hdr[10:12] = b"\x00\x00"
    hdr[10:12] = struct.pack("!H", ipv4_checksum(bytes(hdr)))
    return frame[:14] + bytes(hdr) + frame[34:]


class DcqcnPipeline(RoutedPipeline):
    """DCQCN's congestion point: RED-style ECN on the queue a packet saw."""

    def __init__(
        self,
        routes: dict[bytes, int],
        seed: int,
        params: RedEcnParams,
        cell_bytes: int | None = None,
    ) -> None:
        """`cell_bytes`: thresholds are in bytes, and the queue is measured as
        the chip does, cells x cell size; None: thresholds are in packets."""
        super().__init__(routes, seed)
        self.marker = RedEcnMarker(self.rng.random, params)
        self.cell_bytes = cell_bytes

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        q = (
            d.enq_qdepth_packets
            if self.cell_bytes is None
            else d.enq_qdepth_cells * self.cell_bytes
        )
        if self.marker.should_mark(q):
            return EgressOut(set_ce(d.frame))
        return EgressOut(d.frame)


class TcnPipeline(RoutedPipeline):
    """TCN: CE when the packet's sojourn exceeds lambda x base RTT."""

    def __init__(self, routes: dict[bytes, int], seed: int, threshold_ns: int) -> None:
        super().__init__(routes, seed)
        self.marker = TcnMarker(threshold_ns)

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        if self.marker.should_mark_sojourn(d.sojourn_ns):
            return EgressOut(set_ce(d.frame))
        return EgressOut(d.frame)


class P4qcnPipeline(RoutedPipeline):
    """P4QCN's congestion point: feedback straight back to the source with
    probability alpha*(q - Qmin), at most one per flow per interval."""

    def __init__(
        self,
        routes: dict[bytes, int],
        seed: int,
        params: P4qcnCpParams,
        switch_mac: bytes,
        three_point: bool = False,
    ) -> None:
        """`three_point`: CE instead of feedback (seed 003's CP-NP-RP, the P4's
        three_point mode): with the same probability, and no per-flow limit
        at the switch (the receiver's notification point has it)."""
        super().__init__(routes, seed)
        self.cps: dict[int, P4qcnCongestionPoint] = {}
        self.params = params
        self.mac = switch_mac
        self.three_point = three_point

    def egress(self, port: int, d: Dequeued, now_ns: int) -> EgressOut:
        f = d.frame
        if f[12:14] != b"\x08\x00" or f[23] != frames.IP_PROTO_UDP:
            return EgressOut(f)
        if struct.unpack_from("!H", f, 36)[0] != frames.UDP_PORT_DATA:
            return EgressOut(f)  # only data packets are congestion's cause
        cp = self.cps.get(port)
        if cp is None:
            cp = self.cps[port] = P4qcnCongestionPoint(self.rng.random, self.params)
        if self.three_point:
            p = cp.probability(d.enq_qdepth_packets)
            if p > 0 and self.rng.random() < p:
                return EgressOut(set_ce(f))
            return EgressOut(f)
        flow = f[26:30] + f[34:36]
        out = EgressOut(f)
        if cp.on_packet(flow, d.enq_qdepth_packets, now_ns):
            back = self.routes.get(f[26:30])
            if back is not None:
                fb = max(0, d.enq_qdepth_packets - int(self.params.q_min))
                out.extra.append((back, frames.qcn_feedback(f, self.mac, fb)))
        return out
