# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Run a scenario: every scheme (and every link rate of a sweep) in turn,
each a fresh ns-3 simulation with the same seed.

The same scenario and seed give the same RunResults, within one process or
across processes: every random choice comes from a `random.Random` seeded
from (seed, scheme, switch), ns-3's own RNG is not used, and events at equal
times run in the order they were scheduled.
"""

from __future__ import annotations

import gc
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hw_profiles import load_profile
from models import speedups
from models.switch.tna import TnaProgram

from . import frames, ns3_env, qdisc, schemes, tcp
from .network import HostNode, Sender, Sim, Stats, SwitchNode, SwitchPort, collect
from .records import FlowRecord, PacketLog, QueueLog, RunResult
from .scenario import Ns3Aqm, P4AqmFamily, P4Codel, P4Pie, P4Red, Scenario, kind_of, parse_rate
from .tm import EgressTm
from .topology import Topology

# BFCC's count of fakes' originals that left themselves (tna/bfcc/bfcc.p4).
RECIRCULATION_SKIPS = "SwitchEgress.recirculation_skips"
# Progress callback: fraction of simulated time done for the current run.
Progress = Callable[[float], None]
PROGRESS_STEPS = 50


@dataclass(frozen=True)
class RunSpec:
    scheme: str
    variant: str  # "" or the link rate of a sweep


def run_specs(s: Scenario, only: list[str] | None = None) -> list[RunSpec]:
    names = [n for n in s.schemes.enabled() if not only or n in only]
    variants = list(s.link_rates) or [""]
    return [RunSpec(n, v) for v in variants for n in names]


def _seed(seed: int, *parts: str) -> int:
    return zlib.crc32("/".join((str(seed), *parts)).encode())


# Allocations between two passes over the youngest objects during a run.
YOUNG_OBJECTS = 100_000


@contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive before a run left out of the garbage collector's
    passes during it (gc.freeze), with models/speedups.py on.

    Issue 48's profile: a run allocates steadily (the controller's table
    entries by the thousand, a few objects per packet), and each full
    collection walked every object of the process, ns-3's bindings and
    PMQECN's optimiser (cvxpy, scipy) included: PMQECN's runs took 25-30 %
    longer. Nothing a run computes depends on when the collector runs.
    Frozen objects are unfrozen after the run (garbage among them is then
    collected as usual); a caller that froze the heap itself keeps it so.

    The youngest generation is collected every YOUNG_OBJECTS allocations
    instead of every 700: a packet's objects are nearly all freed by their
    counts, and each pass costs a fixed overhead (2-3 % of a PMQECN run).
    The garbage waiting for a pass stays within a few megabytes."""
    if not speedups.ENABLED or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def run_one(s: Scenario, spec: RunSpec, progress: Progress | None = None) -> RunResult:
    with frozen_heap():
        return _run_one(s, spec, progress)


def _run_one(s: Scenario, spec: RunSpec, progress: Progress | None) -> RunResult:
    ns, glue = ns3_env.ns3()
    ns3_env.reset(ns)
    started = time.perf_counter()
    sim = Sim(ns, glue)
    profile = load_profile(s.chip)
    topo = Topology(s, spec.variant or None)
    stats = Stats()
    log = PacketLog()
    duration_ns = round(s.duration_s * 1e9)
    pkt = max(f.packet_bytes for f in s.flows)
    buffer_bytes = s.buffer_packets * (pkt + frames.ETH.size)

    flows: dict[int, FlowRecord] = {}
    for i, f in enumerate(s.flows):
        flows[i] = FlowRecord(
            flow_id=i,
            name=f.name,
            src=f.src,
            dst=f.dst,
            klass=f.qos,
            size_bytes=f.size_bytes,
            start_ns=s.start_ns(i),
        )

    hosts = {h: HostNode(h, topo.host_index[h], sim, stats, flows, log) for h in s.hosts}
    switches: dict[str, SwitchNode] = {}
    monitors: dict[tuple[str, str], QueueLog] = {
        (m.switch, m.toward): QueueLog(f"{m.switch}->{m.toward}") for m in s.monitor
    }
    periodic: list[tuple[float, Callable[[float], None]]] = []
    counters: list[Callable[[], dict[str, int]]] = []
    notes: list[str] = []
    pfc = schemes.pfc_config(spec.scheme, s, profile)
    for w in s.switches:
        setup = schemes.switch_setup(topo, w, spec.scheme, profile, _seed(s.seed, spec.scheme, w))
        notes += [f"{w}: {n}" for n in setup.notes]
        node = SwitchNode(w, sim, setup.pipeline, stats, pfc)
        node.made_kind = setup.made_kind
        node.neighbour = dict(topo.ports[w])
        node.port_mac = {port: topo.port_mac(w, port) for port in topo.ports[w]}
        switches[w] = node
        if setup.periodic is not None:
            periodic.append((setup.interval_s, setup.periodic))
        if setup.counters is not None:
            counters.append(setup.counters)

    # ns-3: one node per host and switch, a point-to-point link per scenario link.
    ns_nodes = {}
    for name in (*s.hosts, *s.switches):
        ns_nodes[name] = ns.CreateObject[ns.Node]()
    # transport: tcp: ns-3's stack on the hosts, an Ethernet adaptor on each
    # host-facing switch port (evaluation/tcp.py).
    tcp_net = tcp.TcpNet(ns, topo.host_index) if s.transport == "tcp" else None
    if tcp_net is not None:
        tcp_net.install_stacks(ns_nodes)
    # red/pie/codel/fqcodel: ns-3's queue disc as every switch port's queue.
    aqm = s.schemes.get(spec.scheme)
    qdisc_ports: list[qdisc.Ns3QdiscTm] = []
    macs = {topo.ip(h): topo.host_mac(h) for h in s.hosts}
    p2p = ns.PointToPointHelper()
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("100000p"))
    keep: list[object] = []
    for link in topo.links:
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(link.rate_bps)))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(link.delay_ns)))
        devs = p2p.Install(ns_nodes[link.a.node], ns_nodes[link.b.node])
        for k, end in enumerate((link.a, link.b)):
            dev = devs.Get(k)
            keep.append(dev)
            if end.port is None:
                host = hosts[end.node]
                host.device = dev
                host.rate_bps = link.rate_bps
                if tcp_net is not None:
                    tcp_net.address(end.node, dev, link.rate_bps)
                else:
                    sim.on_receive(dev, host.receive)
            else:
                sw = switches[end.node]
                neighbour = topo.ports[end.node][end.port]
                tm = EgressTm(buffer_bytes, profile.cell_bytes, end.port, sw.pipeline.tm_shaping())
                if isinstance(aqm, Ns3Aqm):
                    tm = qdisc.Ns3QdiscTm(  # type: ignore[assignment]
                        kind_of(spec.scheme),
                        s.buffer_packets,
                        link.rate_bps,
                        link.delay_ns,
                        aqm.ecn,
                        macs,
                        stats,
                    )
                    qdisc_ports.append(tm)  # type: ignore[arg-type]
                prio, weights = sw.pipeline.tm_config(end.port)
                tm.priority.update(prio)
                tm.weight.update(weights)
                if pfc is not None:
                    # Congestion messages are never behind paused data.
                    tm.priority[pfc.control_qid] = max(prio.values(), default=0) + 1
                sw.ports[end.port] = SwitchPort(
                    sw, end.port, dev, link.rate_bps, tm, monitors.get((end.node, neighbour))
                )
                if tcp_net is not None and not topo.is_switch(neighbour):
                    adaptor = tcp_net.host_port(sw, end.port, neighbour)
                    sw.ports[end.port].to_wire = adaptor.to_wire
                    sim.on_receive(dev, adaptor.from_host)
                else:
                    sim.on_receive(dev, _port_receiver(sw, end.port))
    for sw in switches.values():
        # No ns-3 device: each runs at the rate the profile gives a pipe's
        # recirculation port, with a port's buffer.
        for port in sw.pipeline.recirculation_ports:
            tm = EgressTm(buffer_bytes, profile.cell_bytes)
            rate = round(profile.recirculation_port_gbps * 1e9)
            sw.ports[port] = SwitchPort(sw, port, None, rate, tm, None)

    for i, f in enumerate(s.flows):
        src = hosts[f.src]
        rate = round(topo.access_rate(f.src) * f.load)
        stop_ns = round((f.stop_s if f.stop_s is not None else s.duration_s) * 1e9)
        if tcp_net is not None:
            cc = getattr(aqm, "cc", None) or f.cc or "newreno"
            tcp_net.add_flow(
                flows[i],
                cc=cc,
                ecn=tcp.ecn_for(
                    kind_of(spec.scheme),
                    cc,
                    isinstance(aqm, Ns3Aqm | P4Red | P4Codel | P4Pie | P4AqmFamily) and aqm.ecn,
                ),
                packet_bytes=f.packet_bytes,
                dscp=f.dscp,
                stop_ns=stop_ns,
                min_rto_ms=s.min_rto_ms,
                delack_timeout_ms=s.delack_timeout_ms,
                onoff=None
                if f.app == "bulk"
                else tcp.OnOff(
                    rate_bps=parse_rate(f.rate or "0bps"),
                    on_ns=round(f.on_s * 1e9),
                    off_ns=round(f.off_s * 1e9),
                    exponential=f.on_off_dist == "exponential",
                    seed=s.flow_seed(i),
                ),
            )
            continue
        sender = Sender(
            src,
            flows[i],
            (topo.host_mac(f.dst), topo.ip(f.dst)),
            f.packet_bytes,
            stop_ns,
            schemes.rate_controller(spec.scheme, s, rate, i),
            rate,
            f.dscp,
        )
        src.senders[i] = sender
        sender.start()
    if tcp_net is None:
        for h in hosts.values():
            h.notifier = schemes.notifier(spec.scheme, s)

    for interval_s, fn in periodic:
        _every(sim, round(interval_s * 1e9), duration_ns, fn)
    if progress is not None:
        step = max(1, duration_ns // PROGRESS_STEPS)
        _every(sim, step, duration_ns, lambda t: progress(t * 1e9 / duration_ns))

    ns.Simulator.Stop(ns.NanoSeconds(duration_ns))
    tcp_stats = []
    try:
        ns.Simulator.Run()
        sim.raise_error()
        if tcp_net is not None:
            tcp_stats = tcp_net.collect(flows, log)
            notes += tcp_net.notes()
    finally:
        if tcp_net is not None:
            tcp_net.close()
        for q in qdisc_ports:
            q.close()
        ns3_env.reset(ns)
    result = collect(
        s.name,
        spec.scheme,
        spec.variant,
        s.seed,
        duration_ns,
        flows,
        log,
        [monitors[(m.switch, m.toward)] for m in s.monitor],
        stats,
    )
    result.notes = notes
    result.recirculation_skips = sum(
        _counted(sw.pipeline, RECIRCULATION_SKIPS) for sw in switches.values()
    )
    result.tcp = tcp_stats
    for read in counters:
        for key, value in read().items():
            result.scheme_counters[key] = result.scheme_counters.get(key, 0) + value
    result.wall_s = time.perf_counter() - started
    del keep
    return result


def _counted(pipeline: object, counter: str) -> int:
    """Packets a P4 model's counter holds, every index and pipe (0 for a
    pipeline that is not a model, or a model without that counter)."""
    program = getattr(pipeline, "program", None)
    if not isinstance(program, TnaProgram) or counter not in program.p4.counters:
        return 0
    return sum(sum(packets) for packets, _ in program.p4.counters[counter].copies())


def _port_receiver(sw: SwitchNode, port: int) -> Callable[[bytes], None]:
    def receive(frame: bytes) -> None:
        sw.receive(port, frame)

    return receive


def _every(sim: Sim, step_ns: int, until_ns: int, fn: Callable[[float], None]) -> None:
    def tick() -> None:
        now = sim.now()
        fn(now / 1e9)
        if now + step_ns <= until_ns:
            sim.later(step_ns, tick)

    sim.later(step_ns, tick)


def run_scenario(
    s: Scenario,
    only: list[str] | None = None,
    on_start: Callable[[RunSpec], Progress | None] | None = None,
) -> list[RunResult]:
    results = []
    for spec in run_specs(s, only):
        progress = on_start(spec) if on_start is not None else None
        results.append(run_one(s, spec, progress))
    return results
