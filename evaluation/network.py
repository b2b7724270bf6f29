# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The simulated network: ns-3 nodes and point-to-point links carrying our
Ethernet frames, switches whose ports run a `Pipeline` around a traffic
manager, and hosts whose senders pace UDP packets at a rate controller's rate.

ns-3 provides the links (serialisation at the link rate, propagation delay)
and the clock; the switches and hosts are Python, so the code under test is
the same code the unit tests and PTF vectors check. Nodes have no ns-3 IP
stack: every frame is a whole Ethernet frame carried as the PPP payload.

Priority flow control (802.1Qbb, `PfcConfig`): a switch counts, per ingress
port, the cells of the lossless priority's packets it holds; above xoff it
sends the neighbour on that port a PFC frame pausing the priority (and sends
it again before the pause runs out while the count stays above xon), at or
below xon one with quanta 0. A paused switch port stops that priority's
queues after the frame on the wire; a paused host stops its senders. Frames
already on the link still arrive: xoff must leave that much headroom below
the buffer (models/p4qcn_thresholds.py). Congestion messages (feedback,
CNPs) travel in another priority, as RoCE deployments carry CNPs, so a pause
never holds back the signal that would end it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from models import speedups

from . import frames, ns3_env
from .pipelines import Pipeline
from .records import FlowRecord, PacketLog, QueueLog, RunResult
from .tm import EgressTm

ETHERTYPE_FAKE = b"\x88\xb5"
ETHERTYPE_FEEDBACK = b"\x88\xb6"
PPP_HEADER_BYTES = 2
IP_PROTO_TCP = 6
# A sender whose next packet is further away than this re-reads its rate
# controller first, so a rate that recovers is not held back by a long gap
# computed from a low rate.
RATE_RECHECK_NS = 1_000_000
# A paused sender looks again this often: a resume (quanta 0) has no timer.
PAUSE_RECHECK_NS = 100_000
ETHERTYPE_MAC_CONTROL = struct.pack("!H", frames.ETHERTYPE_MAC_CONTROL)


def ip_of_host(index: int) -> bytes:
    return bytes((10, 0, index + 1, 1))


def mac_of_host(index: int) -> bytes:
    return bytes((2, 0, 0, 0, index + 1, 1))


def mac_of_port(switch_index: int, port: int) -> bytes:
    return bytes((2, 0x50, 0, switch_index + 1, 0, port))


def tx_ns(nbytes: int, rate_bps: int) -> int:
    """Serialisation time ns-3's point-to-point device charges (PPP header included)."""
    return -(-(nbytes + PPP_HEADER_BYTES) * 8 * 1_000_000_000 // rate_bps)


class Sim:
    """The ns-3 clock and scheduler as the Python side sees them.

    Uses ns3_env's fast glue (one dispatcher pair per run, C-API calls)
    unless models/speedups.py is off when the Sim is made; then the
    reference glue (a cppyy std::function per event and per device). One
    Sim at a time per process: the next one takes over the dispatchers."""

    def __init__(self, ns: Any, glue: Any) -> None:
        self.ns, self.glue = ns, glue
        # Callables waiting for their event, by event key.
        self._live: dict[int, Callable[[], None]] = {}
        self._next = 0
        # Callables and devices ns-3 refers to for the whole run.
        self.kept: list[object] = []
        # An exception inside an event stops the run; cppyy would otherwise
        # turn it into a C++ exception that loses the Python traceback.
        self.error: BaseException | None = None
        self._fast = ns3_env.fast() if speedups.ENABLED else None
        # Fast path: receive callback by device number, and the number of
        # each device object (by id(): the objects live in self.kept).
        self._receivers: list[Callable[[bytes], None]] = []
        self._device_numbers: dict[int, int] = {}
        if self._fast is not None:
            self._fast.start(self._on_event, self._on_frame)

    def now(self) -> int:
        if self._fast is not None:
            return self._fast.now()
        return int(self.glue.NowNs())

    def later(self, delay_ns: int, fn: Callable[[], None]) -> None:
        key = self._next
        self._next += 1
        live = self._live
        if self._fast is not None:
            live[key] = fn
            self._fast.schedule(max(0, int(delay_ns)), key)
            return

        # cppyy's std::function does not own the Python callable: each one
        # lives in _live until its event has run.
        def run() -> None:
            del live[key]
            self._guard(fn)

        live[key] = run
        self.glue.Schedule(max(0, int(delay_ns)), run)

    def _on_event(self, key: int) -> None:
        self._guard(self._live.pop(key))

    def _on_frame(self, device: int, frame: bytes) -> None:
        self._guard(self._receivers[device], frame)

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        if self.error is not None:
            return
        try:
            fn(*args)
        except BaseException as exc:  # re-raised by raise_error() after Run()
            self.error = exc
            self.ns.Simulator.Stop()

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error
        if self._fast is not None and self._fast.dispatch_failed():
            raise RuntimeError("an ns-3 dispatcher failed (its traceback is printed above)")

    def on_receive(self, device: Any, fn: Callable[[bytes], None]) -> None:
        if self._fast is not None:
            number = self._fast.attach(device)
            assert number == len(self._receivers), "one Sim at a time per process"
            self._receivers.append(fn)
            self._device_numbers[id(device)] = number
            self.kept.append(device)
            return

        def wrapped(frame: Any) -> None:
            data = bytes(frame)
            self._guard(lambda: fn(data))

        self.kept.append(wrapped)
        self.glue.OnReceive(device, wrapped)

    def send(self, device: Any, frame: bytes) -> None:
        """Transmit on a device on_receive() was given."""
        if self._fast is not None:
            self._fast.send(self._device_numbers[id(device)], frame)
        else:
            self.glue.Send(device, frame)


@dataclass
class Stats:
    """Counters a run reports (records.RunResult)."""

    drops_overflow: int = 0
    drops_active: int = 0
    recirculated_packets: int = 0
    recirculated_bytes: int = 0
    recirculation_drops: int = 0

    def __post_init__(self) -> None:
        self.feedback: dict[str, int] = {}
        # PFC frames by the port that sent or received them ("t4->l4", a host's name).
        self.pfc_pauses_sent: dict[str, int] = {}
        self.pfc_resumes_sent: dict[str, int] = {}
        self.pfc_pauses_received: dict[str, int] = {}

    def count(self, kind: str, n: int = 1) -> None:
        self.feedback[kind] = self.feedback.get(kind, 0) + n

    @staticmethod
    def bump(counter: dict[str, int], where: str) -> None:
        counter[where] = counter.get(where, 0) + 1


@dataclass(frozen=True)
class PfcConfig:
    """A switch's priority flow control, every port alike (as the controller's
    p4qcn config writes it on the chip: one lossless priority)."""

    priority: int
    # The TM queues of that priority, which a received pause stops.
    qids: frozenset[int]
    # Where packets outside it (feedback, CNPs) go, above the lossless queues.
    control_qid: int
    xoff_cells: int
    xon_cells: int
    pause_quanta: int

    def __post_init__(self) -> None:
        if not 0 <= self.xon_cells <= self.xoff_cells:
            raise ValueError("PFC xon_cells must be between 0 and xoff_cells")
        if not 0 < self.pause_quanta <= frames.PFC_MAX_QUANTA:
            raise ValueError(f"PFC pause_quanta must be 1..{frames.PFC_MAX_QUANTA}")


def is_data(frame: bytes) -> bool:
    """A host's data packet: UDP to the data port, or a TCP segment carrying
    payload (a TCP host's, evaluation/tcp.py; pure ACKs are not data)."""
    if frame[12:14] != b"\x08\x00":
        return False
    if frame[23] == frames.IP_PROTO_UDP:
        return frame[36:38] == struct.pack("!H", frames.UDP_PORT_DATA)
    if frame[23] == IP_PROTO_TCP and len(frame) >= 54:
        ip_len = (frame[16] << 8) | frame[17]
        return ip_len > (frame[14] & 0xF) * 4 + (frame[46] >> 4) * 4
    return False


class SwitchPort:
    """One egress port: its TM and, unless it is a recirculation port, the
    ns-3 device it transmits on. A port sends one frame at a time and asks
    the TM for the next when the link is free."""

    def __init__(
        self,
        switch: SwitchNode,
        number: int,
        device: Any | None,
        rate_bps: int,
        tm: EgressTm,
        monitor: QueueLog | None,
    ) -> None:
        self.switch, self.number, self.device = switch, number, device
        self.rate_bps, self.tm, self.monitor = rate_bps, tm, monitor
        self.busy = False
        # A shaped port whose queues wait for their buckets: when it looks again.
        self.wake_at: int | None = None
        # Set on a port facing a host with ns-3's IP stack (evaluation/tcp.py):
        # the bytes that go on the wire for a frame, None for none.
        self.to_wire: Callable[[bytes], bytes | None] | None = None

    def enqueue(self, frame: bytes, qid: int, data: bool, ingress_port: int | None = None) -> None:
        """`data`: the frame is a host's data packet (pipelines may have
        prepended bridged metadata, so the caller tells). `ingress_port`:
        the port it came in on, when PFC accounts for it there."""
        sim, stats = self.switch.sim, self.switch.stats
        now = sim.now()
        if self.monitor is not None:
            self.monitor.add(now, self.tm.packets, self.tm.bytes)
        if ingress_port is None:
            accepted = self.tm.enqueue(frame, qid, now)
        else:
            accepted = self.tm.enqueue(frame, qid, now, ingress_port)
        if not accepted:
            if self.device is None:
                # A recirculation port: whatever it refuses is lost for good.
                stats.recirculation_drops += 1
            if data:
                stats.drops_overflow += 1
                if self.monitor is not None:
                    self.monitor.drops_overflow += 1
            return
        if ingress_port is not None:
            self.switch.pfc_charge(ingress_port, self.tm.cells(frame))
        if not self.busy:
            self._transmit_next()

    def _transmit_next(self) -> None:
        sw = self.switch
        while True:
            now = sw.sim.now()
            d = self.tm.dequeue(now)
            if d is None:
                self.busy = False
                if self.tm.packets:
                    self._wait_for_shaper(now)
                return
            if d.ingress_port is not None:
                sw.pfc_release(d.ingress_port, self.tm.cells(d.frame))
            out = sw.pipeline.egress(self.number, d, now)
            for port, frame in out.extra:
                sw.made(port, frame)
            if out.frame is None:
                # Our programs drop nothing in egress but what they must;
                # count it all (bridged metadata hides what the frame was).
                sw.stats.drops_active += 1
                continue
            frame = out.frame
            if self.to_wire is not None:
                wire = self.to_wire(frame)
                if wire is None:
                    continue
                frame = wire
            self.busy = True
            sw.sim.later(tx_ns(len(frame), self.rate_bps), self._transmit_next)
            if self.device is None:
                # Recirculation: back into ingress once it has crossed the port.
                def back_in(f: bytes = frame, number: int = self.number) -> None:
                    sw.receive(number, f)

                sw.sim.later(tx_ns(len(frame), self.rate_bps), back_in)
            else:
                if frame[12:14] == ETHERTYPE_FAKE:
                    sw.stats.count("fake")
                sw.sim.send(self.device, frame)
            return

    def _wait_for_shaper(self, now: int) -> None:
        """Frames wait on a TM shaper or a PFC pause: look again when the
        first may leave (an arrival in an unshaped queue meanwhile still goes
        at once)."""
        at = self.tm.next_eligible_ns(now)
        pause_ends = getattr(self.tm, "pause_ends_ns", None)
        if pause_ends is not None:
            ends = pause_ends(now)
            if ends is not None:
                at = ends if at is None else min(at, ends)
        if at is None or (self.wake_at is not None and self.wake_at <= at):
            return
        self.wake_at = at

        def wake() -> None:
            if self.wake_at == at:
                self.wake_at = None
            if not self.busy:
                self._transmit_next()

        self.switch.sim.later(at - now, wake)


class SwitchNode:
    def __init__(
        self,
        name: str,
        sim: Sim,
        pipeline: Pipeline,
        stats: Stats,
        pfc: PfcConfig | None = None,
    ) -> None:
        self.name, self.sim, self.pipeline, self.stats = name, sim, pipeline, stats
        self.ports: dict[int, SwitchPort] = {}
        # Kind of message a mirror session on each port makes (for Stats).
        self.made_kind: dict[int, str] = {}
        # PFC: the neighbour and source MAC of each port (for its frames and
        # counters), the lossless priority's cells held per ingress port, the
        # ports whose neighbour we paused and when each pause would run out.
        self.pfc = pfc
        self.neighbour: dict[int, str] = {}
        self.port_mac: dict[int, bytes] = {}
        self.ingress_cells: dict[int, int] = {}
        self.xoff_until: dict[int, int] = {}

    def _where(self, port: int) -> str:
        return f"{self.name}->{self.neighbour.get(port, port)}"

    def pfc_charge(self, port: int, cells: int) -> None:
        assert self.pfc is not None
        used = self.ingress_cells.get(port, 0) + cells
        self.ingress_cells[port] = used
        if used > self.pfc.xoff_cells and port not in self.xoff_until:
            self._send_pause(port)

    def pfc_release(self, port: int, cells: int) -> None:
        assert self.pfc is not None
        used = self.ingress_cells[port] - cells
        self.ingress_cells[port] = used
        if used <= self.pfc.xon_cells and port in self.xoff_until:
            del self.xoff_until[port]
            self._send_pfc(port, 0)
            Stats.bump(self.stats.pfc_resumes_sent, self._where(port))

    def _send_pause(self, port: int) -> None:
        """XOFF to the neighbour on `port`, sent again at half its lifetime
        while this port's count stays above xon (the pause must not lapse
        with the buffer still full)."""
        assert self.pfc is not None
        out = self.ports.get(port)
        if out is None or out.device is None:
            return
        self._send_pfc(port, self.pfc.pause_quanta)
        Stats.bump(self.stats.pfc_pauses_sent, self._where(port))
        life_ns = frames.pfc_pause_ns(self.pfc.pause_quanta, out.rate_bps)
        until = self.sim.now() + life_ns
        self.xoff_until[port] = until

        def refresh() -> None:
            if self.xoff_until.get(port) == until:
                self._send_pause(port)

        self.sim.later(max(1, life_ns // 2), refresh)

    def _send_pfc(self, port: int, quanta: int) -> None:
        assert self.pfc is not None
        out = self.ports[port]
        # A MAC control frame: it goes out next, ahead of the port's queues
        # (after the frame already on the wire).
        mac = self.port_mac.get(port, bytes(6))
        self.sim.send(out.device, frames.pfc_frame(mac, {self.pfc.priority: quanta}))

    def _pfc_received(self, port: int, frame: bytes) -> None:
        """A neighbour's PFC frame: stop (or restart) this port's queues of
        the lossless priority. A switch without PFC ignores them."""
        p = frames.read_pfc(frame)
        out = self.ports.get(port)
        if p is None or self.pfc is None or out is None:
            return
        quanta = p.quanta.get(self.pfc.priority)
        if quanta is None:
            return
        now = self.sim.now()
        if quanta:
            Stats.bump(self.stats.pfc_pauses_received, self._where(port))
        until = now + frames.pfc_pause_ns(quanta, out.rate_bps) if quanta else 0
        for qid in self.pfc.qids:
            out.tm.pause(qid, until)
        if not out.busy:
            out._transmit_next()

    def receive(self, port: int, frame: bytes) -> None:
        if frame[12:14] == ETHERTYPE_MAC_CONTROL:
            self._pfc_received(port, frame)
            return
        fwd = self.pipeline.ingress(port, frame, self.sim.now())
        if fwd is not None:
            for made_port, made_frame in fwd.extra:
                self.made(made_port, made_frame)
        if fwd is None or fwd.frame is None:
            if is_data(frame):
                self.stats.drops_active += 1
            return
        out = self.ports.get(fwd.port)
        if out is None:
            return  # a port with nothing attached: the frame leaves nowhere
        if out.device is None:
            self.stats.recirculated_packets += 1
            self.stats.recirculated_bytes += len(fwd.frame)
        data = is_data(frame)
        if self.pfc is None:
            out.enqueue(fwd.frame, fwd.qid, data)
        elif data and fwd.qid in self.pfc.qids:
            out.enqueue(fwd.frame, fwd.qid, data, port)
        else:
            out.enqueue(fwd.frame, self.pfc.control_qid, data)

    def made(self, port: int, frame: bytes) -> None:
        """A frame the switch made (mirror copy, notification) enters the TM of `port`."""
        out = self.ports.get(port)
        if out is None:
            return
        if out.device is None:
            self.stats.recirculated_packets += 1
            self.stats.recirculated_bytes += len(frame)
        else:
            self.stats.count(self.made_kind.get(port, "feedback"))
        out.enqueue(frame, 0 if self.pfc is None else self.pfc.control_qid, False)


class RateController(Protocol):
    def rate_bps(self, now_ns: int) -> float: ...
    def on_sent(self, nbytes: int, now_ns: int) -> None: ...
    def on_feedback(self, fb: frames.Feedback | None, now_ns: int) -> None: ...


class Sender:
    def __init__(
        self,
        host: HostNode,
        flow: FlowRecord,
        dst: tuple[bytes, bytes],
        packet_bytes: int,
        stop_ns: int,
        rc: RateController,
        line_rate_bps: int,
        dscp: int,
    ) -> None:
        self.host, self.flow, self.rc = host, flow, rc
        self.dst_mac, self.dst_ip = dst
        self.packet_bytes, self.stop_ns = packet_bytes, stop_ns
        self.line_rate_bps = line_rate_bps
        self.tos = (dscp << 2) | frames.ECN_ECT0
        self.seq = 0
        self.last_send_ns: int | None = None
        self.done = False

    def start(self) -> None:
        self.host.sim.later(self.flow.start_ns, self._tick)

    def _frame_bits(self) -> int:
        return (frames.ETH.size + self.packet_bytes + PPP_HEADER_BYTES) * 8

    def _gap_ns(self, now: int) -> int:
        rate = min(max(self.rc.rate_bps(now), 1.0), float(self.line_rate_bps))
        return int(self._frame_bits() * 1e9 / rate)

    def _tick(self) -> None:
        sim = self.host.sim
        now = sim.now()
        if self.done or now >= self.stop_ns:
            return
        if self.host.paused_until_ns > now:
            sim.later(min(self.host.paused_until_ns - now, PAUSE_RECHECK_NS), self._tick)
            return
        if self.last_send_ns is not None:
            due = self.last_send_ns + self._gap_ns(now)
            if now < due:
                sim.later(min(due - now, RATE_RECHECK_NS), self._tick)
                return
        self._send(now)
        size = self.flow.size_bytes
        if size is not None and self.flow.bytes_sent >= size:
            self.done = True
            return
        sim.later(min(self._gap_ns(now), RATE_RECHECK_NS), self._tick)

    def _send(self, now: int) -> None:
        f = self.flow
        ip_len = self.packet_bytes
        if f.size_bytes is not None:
            # The last packet carries what is left (at least a data header).
            ip_len = max(
                frames.MIN_DATA_IP_LEN,
                min(ip_len, f.size_bytes - f.bytes_sent + frames.IPV4.size + frames.UDP.size),
            )
        payload = frames.data_payload(f.flow_id, self.seq, now, ip_len)
        frame = frames.ip_udp(
            self.host.mac,
            self.dst_mac,
            self.host.ip,
            self.dst_ip,
            frames.FLOW_PORT_BASE + f.flow_id,
            frames.UDP_PORT_DATA,
            payload,
            tos=self.tos,
        )
        self.seq += 1
        app_bytes = ip_len - frames.IPV4.size - frames.UDP.size
        f.bytes_sent += app_bytes
        f.packets_sent += 1
        self.last_send_ns = now
        self.rc.on_sent(len(frame), now)
        self.host.transmit(frame)


class Notifier(Protocol):
    """What a receiver does for the congestion signal it sees (DCQCN's NP)."""

    def on_data(self, flow_id: int, ce: bool, now_ns: int) -> bool: ...


class HostNode:
    def __init__(
        self,
        name: str,
        index: int,
        sim: Sim,
        stats: Stats,
        flows: dict[int, FlowRecord],
        log: PacketLog,
    ) -> None:
        self.name, self.index, self.sim, self.stats = name, index, sim, stats
        self.ip, self.mac = ip_of_host(index), mac_of_host(index)
        self.device: Any = None
        # Its link's rate (PFC pause quanta are bit times of it).
        self.rate_bps = 0
        # PFC: its senders hold their data until then (the lossless priority).
        self.paused_until_ns = 0
        self.senders: dict[int, Sender] = {}
        self.flows, self.log = flows, log
        self.notifier: Notifier | None = None
        # The highest sequence number delivered so far, per flow.
        self._highest_seq: dict[int, int] = {}

    def transmit(self, frame: bytes) -> None:
        self.sim.send(self.device, frame)

    def receive(self, frame: bytes) -> None:
        if frame[12:14] == ETHERTYPE_FEEDBACK:
            self._relayed_feedback(frame)
            return
        if frame[12:14] == ETHERTYPE_MAC_CONTROL:
            self._pfc(frame)
            return
        p = frames.parse(frame)
        if p is None or p.dst_ip != self.ip:
            return
        now = self.sim.now()
        if p.dport == frames.UDP_PORT_DATA:
            self._data(p, now)
        elif p.dport == frames.UDP_PORT_TOFCC_FEEDBACK:
            fb = frames.read_feedback(p.payload)
            if fb is None:
                return
            sender = self.senders.get(fb.flow_src_port - frames.FLOW_PORT_BASE)
            if sender is not None:
                sender.flow.feedback_received += 1
                sender.rc.on_feedback(fb, now)
        elif p.dport == frames.UDP_PORT_CNP:
            (flow_id,) = frames.CNP.unpack_from(p.payload)
            sender = self.senders.get(flow_id)
            if sender is not None:
                sender.flow.feedback_received += 1
                sender.rc.on_feedback(None, now)

    def _pfc(self, frame: bytes) -> None:
        """The NIC honours PFC on every priority its data may use: the whole
        host's data stops (its CNPs do not, as a RoCE NIC sends them in
        their own priority)."""
        p = frames.read_pfc(frame)
        if p is None or not p.quanta or self.rate_bps <= 0:
            return
        quanta = max(p.quanta.values())
        now = self.sim.now()
        if quanta:
            Stats.bump(self.stats.pfc_pauses_received, self.name)
            self.paused_until_ns = now + frames.pfc_pause_ns(quanta, self.rate_bps)
        else:
            self.paused_until_ns = 0

    def _relayed_feedback(self, frame: bytes) -> None:
        """BFCC backpressure its first-hop switch relayed to this host
        (sender_reaction match_switch): the feedback header straight over
        Ethernet, about the host's group, so every sender of the host hears it."""
        fb = frames.read_feedback(frame[14:])
        if fb is None:
            return
        now = self.sim.now()
        self.stats.count("relayed")
        for sender in self.senders.values():
            sender.flow.feedback_received += 1
            sender.rc.on_feedback(fb, now)

    def _data(self, p: frames.Parsed, now: int) -> None:
        flow_id, seq, sent_ns = frames.read_data(p.payload)
        f = self.flows.get(flow_id)
        if f is None:
            return
        if seq < self._highest_seq.get(flow_id, -1):
            f.out_of_order += 1
        else:
            self._highest_seq[flow_id] = seq
        ce = p.ecn == 3
        self.log.add(flow_id, p.ip_len, sent_ns, now, ce)
        f.packets_received += 1
        f.bytes_received += p.ip_len - frames.IPV4.size - frames.UDP.size
        if f.first_rx_ns is None:
            f.first_rx_ns = now
        f.last_rx_ns = now
        if f.size_bytes is not None and f.completed_ns is None and f.bytes_received >= f.size_bytes:
            f.completed_ns = now
        if self.notifier is not None and self.notifier.on_data(flow_id, ce, now):
            self.stats.count("cnp")
            self.transmit(frames.cnp(self.mac, b"\xff" * 6, self.ip, p.src_ip, flow_id))


def collect(
    scenario: str,
    scheme: str,
    variant: str,
    seed: int,
    duration_ns: int,
    flows: dict[int, FlowRecord],
    log: PacketLog,
    queues: list[QueueLog],
    stats: Stats,
) -> RunResult:
    return RunResult(
        scenario=scenario,
        scheme=scheme,
        variant=variant,
        seed=seed,
        duration_ns=duration_ns,
        flows=[flows[k] for k in sorted(flows)],
        packets=log,
        queues=queues,
        drops_overflow=stats.drops_overflow,
        drops_active=stats.drops_active,
        feedback_sent=dict(sorted(stats.feedback.items())),
        recirculated_packets=stats.recirculated_packets,
        recirculated_bytes=stats.recirculated_bytes,
        recirculation_drops=stats.recirculation_drops,
        pfc_pauses_sent=dict(sorted(stats.pfc_pauses_sent.items())),
        pfc_resumes_sent=dict(sorted(stats.pfc_resumes_sent.items())),
        pfc_pauses_received=dict(sorted(stats.pfc_pauses_received.items())),
    )
