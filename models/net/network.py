"""The simulated network: ns-3 nodes and point-to-point links carrying our
Ethernet frames, switches whose ports run a `Pipeline` around a traffic
manager, and hosts whose senders pace UDP packets at a rate controller's rate.

ns-3 provides the links (serialisation at the link rate, propagation delay)
and the clock; the switches and hosts are Python, so the code under test is
the same code the unit tests and PTF vectors check. Nodes have no ns-3 IP
stack: every frame is a whole Ethernet frame carried as the PPP payload.
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

    def __post_init__(self) -> None:
        self.feedback: dict[str, int] = {}

    def count(self, kind: str, n: int = 1) -> None:
        self.feedback[kind] = self.feedback.get(kind, 0) + n


def is_data(frame: bytes) -> bool:
    """A host's data packet: UDP to the data port, or a TCP segment carrying
    payload (a TCP host's, models/net/tcp.py; pure ACKs are not data)."""
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
        # Set on a port facing a host with ns-3's IP stack (models/net/tcp.py):
        # the bytes that go on the wire for a frame, None for none.
        self.to_wire: Callable[[bytes], bytes | None] | None = None

    def enqueue(self, frame: bytes, qid: int, data: bool) -> None:
        """`data`: the frame is a host's data packet (pipelines may have
        prepended bridged metadata, so the caller tells)."""
        sim, stats = self.switch.sim, self.switch.stats
        now = sim.now()
        if self.monitor is not None:
            self.monitor.add(now, self.tm.packets, self.tm.bytes)
        if not self.tm.enqueue(frame, qid, now):
            if data:
                stats.drops_overflow += 1
                if self.monitor is not None:
                    self.monitor.drops_overflow += 1
            return
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
        """Frames wait on a TM shaper: look again when the first may leave (an
        arrival in an unshaped queue meanwhile still goes at once)."""
        at = self.tm.next_eligible_ns(now)
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
    def __init__(self, name: str, sim: Sim, pipeline: Pipeline, stats: Stats) -> None:
        self.name, self.sim, self.pipeline, self.stats = name, sim, pipeline, stats
        self.ports: dict[int, SwitchPort] = {}
        # Kind of message a mirror session on each port makes (for Stats).
        self.made_kind: dict[int, str] = {}

    def receive(self, port: int, frame: bytes) -> None:
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
        out.enqueue(fwd.frame, fwd.qid, is_data(frame))

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
        out.enqueue(frame, 0, False)


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
        self.senders: dict[int, Sender] = {}
        self.flows, self.log = flows, log
        self.notifier: Notifier | None = None

    def transmit(self, frame: bytes) -> None:
        self.sim.send(self.device, frame)

    def receive(self, frame: bytes) -> None:
        if frame[12:14] == ETHERTYPE_FEEDBACK:
            self._relayed_feedback(frame)
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
        flow_id, _seq, sent_ns = frames.read_data(p.payload)
        f = self.flows.get(flow_id)
        if f is None:
            return
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
    )
