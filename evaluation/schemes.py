# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Each scheme as the simulator needs it: a pipeline per switch, a rate
controller per sender and, for ECN schemes, what the receiver sends back.

PMQECN and BFCC switches are the reference models configured by the
project's controller apps from a config generated here (the same YAML an
operator would write); the baselines come from models/baselines.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bfrt_controller.aqm.app import AqmApp
from bfrt_controller.aqm.config import parse_config as parse_aqm
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import param_warnings, saturation_reports
from bfrt_controller.bfcc.config import parse_config as parse_bfcc
from bfrt_controller.common import MIN_CYCLE_INTERVAL_S
from bfrt_controller.dadctcp.app import DadctcpApp
from bfrt_controller.dadctcp.config import parse_config as parse_dadctcp
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config as parse_pmqecn
from bfrt_controller.spie import names as spie_names
from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import parse_config as parse_spie
from hw_profiles import HwProfile
from models.baselines import (
    DcqcnNotificationPoint,
    DcqcnReactionPoint,
    DcqcnRpParams,
    P4qcnCpParams,
    QcnReactionPoint,
    QcnRpParams,
    RedEcnParams,
    tcn_threshold_ns,
)
from models.hosts.bfcc_sender import BfccSender, SenderReactionConfig
from models.hosts.pmqecn_rp import ReactionPoint, RpConfig
from models.switch.bfcc import DEFAULT_RATE_THRESHOLDS

from . import frames
from . import scenario as sc
from .network import PfcConfig, RateController
from .pipelines import (
    DcqcnPipeline,
    P4qcnPipeline,
    Pipeline,
    RoutedPipeline,
    TcnPipeline,
    TnaPipeline,
)
from .topology import Topology, mac_text

FEEDBACK_SESSION_BASE = 10
RECIRCULATION_SESSION = 100
RECIRCULATION_LEVEL_BYTES = 65536  # bfrt_controller/bfcc/config.py's default
BFCC_HIGH_QID, BFCC_LOW_QID = 2, 1


def cells(packets: int, packet_bytes: int, profile: HwProfile) -> int:
    frame = packet_bytes + frames.ETH.size
    return packets * -(-frame // profile.cell_bytes)


@dataclass
class SwitchSetup:
    pipeline: Pipeline
    # Kind of message each port's mirror copies are (for the counters).
    made_kind: dict[int, str]
    # Called every `interval_s` of simulated time with the time in seconds.
    periodic: Callable[[float], None] | None = None
    interval_s: float = 0.0
    # Reports from the controller about this switch's settings (RunResult.notes).
    notes: list[str] = field(default_factory=list)
    # The scheme's own counters at the end of the run (RunResult.scheme_counters).
    counters: Callable[[], dict[str, int]] | None = None


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """An app's warnings about its settings, which the run's notes carry,
    kept off the terminal (a sweep would print them per switch and run)."""
    lg = logging.getLogger(logger)
    saved = lg.level
    lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lg.setLevel(saved)


def _routes(topo: Topology, switch: str) -> list[dict[str, Any]]:
    out = []
    for host, port in topo.routes(switch).items():
        out.append(
            {
                "prefix": f"{topo.ip_text(host)}/32",
                "port": port,
                "src_mac": mac_text(topo.port_mac(switch, port)),
                "dst_mac": mac_text(topo.neighbour_mac(switch, port)),
            }
        )
    return out


def _switch_ports(topo: Topology, switch: str) -> list[int]:
    return [p for p, n in topo.ports[switch].items() if topo.is_switch(n)]


def _source_bindings(topo: Topology, switch: str) -> list[dict[str, Any]]:
    """Each host port bound to its host's address, as an operator binds host
    ports (tna/include/source_guard.p4); switch-facing ports are trusted."""
    return [
        {"port": p, "prefixes": [f"{topo.ip_text(n)}/32"]}
        for p, n in sorted(topo.ports[switch].items())
        if not topo.is_switch(n)
    ]


def _senders(topo: Topology) -> list[str]:
    seen: list[str] = []
    for f in topo.scenario.flows:
        if f.src not in seen:
            seen.append(f.src)
    return seen


def _packet_bytes(topo: Topology) -> int:
    return max(f.packet_bytes for f in topo.scenario.flows)


def pmqecn_switch(topo: Topology, switch: str, profile: HwProfile, p: sc.Pmqecn) -> SwitchSetup:
    s = topo.scenario
    pkt = _packet_bytes(topo)
    ports = sorted(topo.ports[switch])
    classes = []
    # One class (virtual queue) per sending host, as seed 000's H1-H3,
    # optimised with the other classes leaving through the same port.
    out_rates = []
    for i, host in enumerate(_senders(topo)):
        flow = next(f for f in s.flows if f.src == host)
        port = topo.next_hop(switch, flow.dst)
        out_rates.append(topo.link_between(switch, topo.ports[switch][port]).rate_bps)
        classes.append(
            {
                "name": f"{host}",
                "id": i + 1,
                "match": {"src": f"{topo.ip_text(host)}/32"},
                "priority": i + 1,
                "vq": i + 1,
                # Its own TM queue: the TM's DWRR shares the port by weight.
                "queue": i,
                "qos": flow.qos,
                "port": port,
                "threshold_cells": cells(p.threshold_packets, pkt, profile),
                "weight": p.weight,
                "mark_original": p.mark_original,
            }
        )
    frame_bits = 8 * (pkt + frames.ETH.size)
    service_pps = max(out_rates) / frame_bits
    raw = {
        "program": "pmqecn",
        "chip": s.chip,
        "routes": _routes(topo, switch),
        "trusted_ports": _switch_ports(topo, switch),
        "source_bindings": _source_bindings(topo, switch),
        # Each port's own speed is its Gamma (the optimiser solves per port).
        "ports": [
            {
                "port": q,
                "feedback_session": FEEDBACK_SESSION_BASE + q,
                "service_rate_pps": topo.link_between(switch, topo.ports[switch][q]).rate_bps
                / frame_bits,
            }
            for q in ports
        ],
        "scheduling": {
            "mode": "tm_dwrr",
            "egress_ports": ports,
            # Weights are round(omega_i x quantum): 16 keeps the optimiser's
            # shares distinct (a quantum of 1 flattened every weight to 1).
            "weight_quantum": 16,
        },
        "classes": classes,
        "optimizer": {
            "interval_s": max(p.optimizer_interval_s or 1.0, MIN_CYCLE_INTERVAL_S),
            "capacity_packets": s.buffer_packets,
            "service_rate_pps": service_pps,
            "arrival_cap_pps": service_pps * max(1, len(classes)),
            "link_capacity_pps": service_pps,
            "links": len(ports),
            "mean_packet_bytes": min(9216, pkt + frames.ETH.size),
            "threshold_rule": p.threshold_rule,
            "target_utilisation": p.target_utilisation,
        },
    }
    cfg = parse_pmqecn(raw, f"{s.name}:{switch}")
    # The controller's floor on a cycle (common.MIN_CYCLE_INTERVAL_S) spares
    # a real switch's CPU back-to-back read-backs; here the clock is simulated
    # and the model switch is read in no time, so the scenario's interval
    # (bounded by scenario.py) replaces the floored one once the rest passed.
    opt = cfg.optimizer.model_copy(update={"interval_s": p.optimizer_interval_s or 1.0})
    cfg = cfg.model_copy(update={"optimizer": opt})
    sw = ModelSwitch("pmqecn", profile, topo.scenario.pipes)
    app = PmqecnApp(sw, cfg)
    app.push_all()
    app.start(0.0)  # baseline at t = 0: the first answer comes one interval in
    setup = SwitchSetup(
        TnaPipeline(sw.model, profile, sw.tm_priorities, sw.tm_weights),
        {},
    )
    if p.optimizer_interval_s > 0:

        def cycle(now_s: float) -> None:
            app.optimize_once(now_s)

        setup.periodic, setup.interval_s = cycle, p.optimizer_interval_s
    return setup


def bfcc_switch(topo: Topology, switch: str, profile: HwProfile, p: sc.Bfcc) -> SwitchSetup:
    s = topo.scenario
    pkt = _packet_bytes(topo)
    up_ports = _switch_ports(topo, switch)
    groups: list[dict[str, Any]] = []
    used: set[int] = set()
    for i, host in enumerate(_senders(topo)):
        port = topo.next_hop(switch, host)
        upstream = port if topo.is_switch(topo.ports[switch][port]) else None
        if upstream is not None:
            used.add(upstream)
        groups.append(
            {"id": i + 1, "senders": [f"{topo.ip_text(host)}/32"], "upstream_port": upstream}
        )
    used_up = sorted(used)
    raw = {
        "program": "bfcc",
        "chip": s.chip,
        "routes": _routes(topo, switch),
        "trusted_ports": up_ports,
        "source_bindings": _source_bindings(topo, switch),
        "groups": groups,
        "upstream_ports": [
            {
                "port": q,
                "mirror_session": FEEDBACK_SESSION_BASE + q,
                "src_mac": mac_text(topo.port_mac(switch, q)),
                "dst_mac": mac_text(topo.neighbour_mac(switch, q)),
            }
            for q in used_up
        ],
        "congestion_points": [
            {
                "port": q,
                "rate_mbps": max(
                    1, int(topo.link_between(switch, topo.ports[switch][q]).rate_bps // 1e6)
                ),
            }
            for q in sorted(topo.ports[switch])
        ][:16],
        "reaction_points": [
            {
                "port": q,
                "high_qid": BFCC_HIGH_QID,
                "low_qid": BFCC_LOW_QID,
                "rate_mbps": max(
                    1, int(topo.link_between(switch, topo.ports[switch][q]).rate_bps // 1e6)
                ),
            }
            for q in up_ports
        ],
        "recirculation_session": RECIRCULATION_SESSION if up_ports else None,
        "params": {
            "threshold_packets": p.threshold_packets,
            "packet_bytes": pkt + frames.ETH.size,
            "t_min_us": p.t_min_us,
            "t_max_us": p.t_max_us,
            "reference_rate_mbps": p.reference_rate_mbps,
            "window_packets": p.window_packets,
            "refresh_ns": p.refresh_ns,
            "expiry_ns": p.expiry_ns,
            "named_group_only": int(p.named_group_only),
            "sender_reaction": p.sender_reaction,
            "reduction": p.reduction,
            "shaping_base": p.shaping_base,
            # Originals leave themselves once the recirculation queue holds
            # half the port buffer the harness gives it (or the 64 KiB default).
            "recirculation_level_bytes": min(
                RECIRCULATION_LEVEL_BYTES, s.buffer_packets * (pkt + frames.ETH.size) // 2
            )
            if p.recirculation_level_bytes is None
            else p.recirculation_level_bytes,
        },
    }
    cfg = parse_bfcc(raw, f"{s.name}:{switch}")
    # Into the run's report rather than the terminal: a sweep writes the same
    # report for every switch and run.
    notes = [*param_warnings(cfg.params), *saturation_reports(cfg, cfg.params, profile)]
    sw = ModelSwitch("bfcc", profile, topo.scenario.pipes)
    with _quiet("bfrt_controller.bfcc.app"):
        app = BfccApp(sw, cfg)
        app.push_all()
    kinds = {q: "backpressure" for q in used_up}
    setup = SwitchSetup(
        TnaPipeline(
            sw.model, profile, sw.tm_priorities, sw.tm_weights, sw.tm_shaping, sw.port_tx_bytes
        ),
        kinds,
        notes=notes,
    )
    if p.reduction == "shaping" and cfg.reaction_points:

        def shape(now_s: float) -> None:
            app.shape_once(now_s)

        setup.periodic, setup.interval_s = shape, p.shaping_interval_us / 1e6
    return setup


def _data_ports(topo: Topology, switch: str) -> list[int]:
    """The ports some flow's data leaves `switch` through (the others carry
    only acknowledgements and feedback)."""
    routes = topo.routes(switch)
    return sorted({routes[f.dst] for f in topo.scenario.flows if f.dst in routes})


def _port_gbps(topo: Topology, switch: str, port: int) -> float:
    """The rate of the link on `switch`'s `port`, in Gb/s."""
    return topo.link_between(switch, topo.ports[switch][port]).rate_bps / 1e9


def aqm_switch(
    topo: Topology, switch: str, profile: HwProfile, p: sc.P4Red | sc.P4Codel | sc.P4AqmFamily
) -> SwitchSetup:
    """tna/aqm/aqm.p4's model, configured by its controller app from the
    config an operator would write: the scheme's AQM on queue 0 of every
    port that data leaves through (they share one curve)."""
    pkt = _packet_bytes(topo)
    queue: dict[str, Any]
    if isinstance(p, sc.P4Red):
        queue = {
            "mode": "red",
            "min_th_cells": cells(p.min_th_packets, pkt, profile),
            "max_th_cells": cells(p.max_th_packets, pkt, profile),
            "max_p": p.max_p,
            "w_q_shift": p.w_q_shift,
        }
    elif isinstance(p, sc.P4Codel):
        queue = {
            "mode": "codel",
            "target_us": p.target_us,
            "interval_us": p.interval_us,
            "count_cap": p.count_cap,
        }
    else:
        queue = {"mode": p.mechanism, **p.settings}
        if p.mechanism == "dualpi2":
            queue["l_queue"] = p.l_queue
    raw = {
        "program": "aqm",
        "chip": profile.chip,
        "routes": _routes(topo, switch),
        "trusted_ports": _switch_ports(topo, switch),
        "source_bindings": _source_bindings(topo, switch),
        "queues": [
            {"port": port, "queue": 0, "ecn": p.ecn, **queue} for port in _data_ports(topo, switch)
        ],
    }
    cfg = parse_aqm(raw, f"{topo.scenario.name}:{switch}")
    sw = ModelSwitch("aqm", profile, topo.scenario.pipes)
    AqmApp(sw, cfg).push_all()
    return SwitchSetup(TnaPipeline(sw.model, profile, sw.tm_priorities, sw.tm_weights), {})


def spie_switch(
    topo: Topology, switch: str, profile: HwProfile, p: sc.P4Pie, spie: bool
) -> SwitchSetup:
    """tna/spie/spie.p4's model, configured by its controller app from the
    config an operator would write: PIE or S-PIE on every port that data
    leaves through. The PI steps' copies recirculate through the switch
    node's recirculation port, as on the chip."""
    raw = {
        "program": "spie",
        "chip": profile.chip,
        "routes": _routes(topo, switch),
        "trusted_ports": _switch_ports(topo, switch),
        "source_bindings": _source_bindings(topo, switch),
        # Each port at its link's rate, the speed a front panel (or, for a
        # link slower than any port speed, the port's shaper) gives it; the
        # sketch's sizing follows from these as an operator's would.
        "ports": [
            {
                "port": port,
                "mode": p.mode if spie else "pie",
                "speed_gbps": _port_gbps(topo, switch, port),
            }
            for port in _data_ports(topo, switch)
        ],
        "pie": {
            "alpha_per_s": p.alpha_per_s,
            "beta_per_s": p.beta_per_s,
            "del_ref_us": p.del_ref_us,
            "t_update_us": p.t_update_us,
            "stale_after_us": p.stale_after_us,
        },
        "sketch": {
            "columns": p.columns,
            "clear_interval_us": p.clear_interval_us,
            "large_drop_probability": p.large_drop_probability,
        },
    }
    cfg = parse_spie(raw, f"{topo.scenario.name}:{switch}")
    sw = ModelSwitch("spie", profile, topo.scenario.pipes)
    SpieApp(sw, cfg).push_all()

    def counters() -> dict[str, int]:
        """Drops the sketch decided (flows judged large) and PIE's p, over
        every port and pipe."""
        out = {}
        for key, name in (
            ("sketch_drops", spie_names.LARGE_FLOW_DROPS),
            ("random_drops", spie_names.RANDOM_DROPS),
        ):
            c = sw.model.counter(name)
            out[key] = sum(c.read(i)[0] for i in range(c.size))
        return out

    setup = SwitchSetup(TnaPipeline(sw.model, profile, sw.tm_priorities, sw.tm_weights), {})
    setup.counters = counters
    return setup


def baseline_switch(
    topo: Topology, switch: str, name: str, seed: int, profile: HwProfile
) -> SwitchSetup:
    s = topo.scenario
    routes = {topo.ip(h): port for h, port in topo.routes(switch).items()}
    p = s.schemes.get(name)
    if isinstance(p, sc.NoControl | sc.Ns3Aqm):
        # ns-3's AQMs replace the traffic manager, not the pipeline (simulate.py).
        return SwitchSetup(RoutedPipeline(routes, seed), {})
    if isinstance(p, sc.Dcqcn):
        if p.kmin_packets is not None and p.kmax_packets is not None:
            red = RedEcnParams(k_min=p.kmin_packets, k_max=p.kmax_packets, p_max=p.pmax)
            return SwitchSetup(DcqcnPipeline(routes, seed, red), {})
        red = RedEcnParams(k_min=p.kmin_bytes, k_max=p.kmax_bytes, p_max=p.pmax)
        return SwitchSetup(DcqcnPipeline(routes, seed, red, profile.cell_bytes), {})
    if isinstance(p, sc.Tcn):
        if p.base_rtt_us is not None:
            rtt = round(p.base_rtt_us * 1000)
        else:
            rtt = max(topo.base_rtt_ns(f.src, f.dst, f.packet_bytes) for f in s.flows)
        return SwitchSetup(TcnPipeline(routes, seed, tcn_threshold_ns(rtt, p.lam)), {})
    if isinstance(p, sc.P4qcn):
        params = P4qcnCpParams(
            q_min=p.qmin_packets,
            q_max=p.qmax_packets,
            q_pfc=max(p.qmax_packets, s.buffer_packets),
            feedback_interval_ns=round(p.feedback_interval_us * 1000),
        )
        mac = topo.port_mac(switch, 0)
        three = p.architecture == "three_point"
        return SwitchSetup(P4qcnPipeline(routes, seed, params, mac, three), {})
    raise ValueError(f"not a baseline: {name}")


def dadctcp_switch(topo: Topology, switch: str, profile: HwProfile, p: sc.Dadctcp) -> SwitchSetup:
    """tna/dadctcp's model, configured by its controller app: every port's
    `p.queues` queues (DSCP d to queue d) start at K = k_packets and share
    K_port = queues x k_packets by Algorithm 2 (DA-DCTCP mode)."""
    s = topo.scenario
    if s.transport != "tcp":
        raise ValueError("dadctcp marks CE for TCP senders: it needs transport: tcp")
    raw = {
        "program": "dadctcp",
        "chip": s.chip,
        "routes": _routes(topo, switch),
        "trusted_ports": _switch_ports(topo, switch),
        "source_bindings": _source_bindings(topo, switch),
        "mode": p.mode,
        "packet_bytes": _packet_bytes(topo),
        "interval_s": max(p.interval_s, MIN_CYCLE_INTERVAL_S),
        "dscp_queues": [{"dscp": d, "queue": d} for d in range(1, p.queues)],
        "ports": [
            {
                "port": q,
                "k_port_packets": p.k_packets * p.queues,
                "queues": [{"queue": j, "k_packets": p.k_packets} for j in range(p.queues)],
            }
            for q in sorted(topo.ports[switch])
        ],
    }
    cfg = parse_dadctcp(raw, f"{s.name}:{switch}")
    # A simulated clock: the scenario's interval, below the controller's
    # floor if it says so (as PMQECN's, above).
    cfg = cfg.model_copy(update={"interval_s": p.interval_s})
    sw = ModelSwitch("dadctcp", profile, topo.scenario.pipes)
    app = DadctcpApp(sw, cfg)
    app.push_all()
    setup = SwitchSetup(TnaPipeline(sw.model, profile, sw.tm_priorities, sw.tm_weights), {})

    def cycle(now_s: float) -> None:
        app.cycle(now_s)

    setup.periodic, setup.interval_s = cycle, p.interval_s
    return setup


def switch_setup(
    topo: Topology, switch: str, scheme: str, profile: HwProfile, seed: int
) -> SwitchSetup:
    p = topo.scenario.schemes.get(scheme)
    if isinstance(p, sc.Pmqecn):
        return pmqecn_switch(topo, switch, profile, p)
    if isinstance(p, sc.Dadctcp):
        return dadctcp_switch(topo, switch, profile, p)
    if isinstance(p, sc.Bfcc):
        return bfcc_switch(topo, switch, profile, p)
    if isinstance(p, sc.P4Red | sc.P4Codel | sc.P4AqmFamily):
        return aqm_switch(topo, switch, profile, p)
    if isinstance(p, sc.P4Pie):
        return spie_switch(topo, switch, profile, p, sc.kind_of(scheme) == "p4spie")
    return baseline_switch(topo, switch, scheme, seed, profile)


# ---- hosts -------------------------------------------------------------


class FixedRate:
    """BFCC's senders under sender_reaction none: no end-host reaction, the
    switches do the work."""

    def __init__(self, rate_bps: float) -> None:
        self.rate = rate_bps

    def rate_bps(self, now_ns: int) -> float:
        return self.rate

    def on_sent(self, nbytes: int, now_ns: int) -> None:
        pass

    def on_feedback(self, fb: frames.Feedback | None, now_ns: int) -> None:
        pass


class PmqecnRate:
    """Algorithm 3 of seed 000 (models/hosts/pmqecn_rp.py), fed the
    (lambda, lambda*) each feedback packet carries; lambda* is a target the
    host takes at most once per controller interval (RpConfig.feedback_interval)."""

    # Choice: before the controller's first cycle the switch's rate table is
    # empty (lambda = lambda* = 0); the host then targets half its recent rate,
    # QCN's deepest single cut (beta = 1), until the first real answer.
    EMPTY_FEEDBACK_CUT = (2.0, 1.0)

    def __init__(self, cfg: RpConfig) -> None:
        self.rp = ReactionPoint(cfg)

    def rate_bps(self, now_ns: int) -> float:
        self.rp.on_timer(now_ns / 1e9)
        return self.rp.rate

    def on_sent(self, nbytes: int, now_ns: int) -> None:
        self.rp.on_bytes_sent(nbytes, now_ns / 1e9)

    def on_feedback(self, fb: frames.Feedback | None, now_ns: int) -> None:
        if fb is None or fb.rate == 0 or fb.target_rate == 0:
            lam, lam_star = self.EMPTY_FEEDBACK_CUT
        else:
            lam, lam_star = float(fb.rate), float(fb.target_rate)
        self.rp.on_feedback(lam, lam_star, now_ns / 1e9)


class QcnFamilyRate:
    """DCQCN's and P4QCN's reaction points (models/baselines)."""

    def __init__(self, rp: DcqcnReactionPoint | QcnReactionPoint) -> None:
        self.rp = rp

    def rate_bps(self, now_ns: int) -> float:
        self.rp.on_timer(now_ns)
        return self.rp.rate_bps

    def on_sent(self, nbytes: int, now_ns: int) -> None:
        self.rp.on_bytes_sent(nbytes, now_ns)

    def on_feedback(self, fb: frames.Feedback | None, now_ns: int) -> None:
        self.rp.on_feedback(now_ns)


def _scaled(rate: str | None, paper_bps: float, line_rate_bps: int) -> float:
    """A DCQCN rate parameter: as given, else the paper's 40 Gb/s value scaled
    to this sender's line rate."""
    if rate is not None:
        return float(sc.parse_rate(rate))
    return paper_bps * line_rate_bps / sc.DCQCN_PAPER_LINE_RATE_BPS


def dcqcn_rp_params(h: sc.DcqcnHost, line_rate_bps: int) -> DcqcnRpParams:
    paper = DcqcnRpParams()  # the paper's 40 Gb/s values (models/baselines/dcqcn_rp.py)
    return DcqcnRpParams(
        line_rate_bps=line_rate_bps,
        min_rate_bps=min(_scaled(h.min_rate, paper.min_rate_bps, line_rate_bps), line_rate_bps),
        g=h.g,
        alpha_timer_ns=round(h.alpha_timer_us * 1000),
        rate_timer_ns=round(h.rate_timer_us * 1000),
        byte_counter_bytes=h.byte_counter_bytes,
        fast_recovery_steps=h.fast_recovery_steps,
        rai_bps=_scaled(h.rai, paper.rai_bps, line_rate_bps),
        rhai_bps=_scaled(h.rhai, paper.rhai_bps, line_rate_bps),
    )


class BfccSenderRate:
    """BFCC's sender reaction (sender_reaction match_switch): the rate the
    relayed backpressure leaves, models/hosts/bfcc_sender.py."""

    def __init__(self, cfg: SenderReactionConfig) -> None:
        self.sender = BfccSender(cfg)

    def rate_bps(self, now_ns: int) -> float:
        return self.sender.rate_bps(now_ns)

    def on_sent(self, nbytes: int, now_ns: int) -> None:
        pass

    def on_feedback(self, fb: frames.Feedback | None, now_ns: int) -> None:
        if fb is not None:
            self.sender.on_message(fb.msg_type, fb.class_id, fb.degree, now_ns)


def rate_controller(
    scheme: str, s: sc.Scenario, line_rate_bps: int, flow_index: int = 0
) -> RateController:
    """The flow's source rate; ``flow_index`` seeds what a host draws at random."""
    p = s.schemes.get(scheme)
    if isinstance(p, sc.Bfcc) and p.sender_reaction == "match_switch":
        # The switches' RT (the controller's defaults) and expiry: the cut
        # and its lifetime are the switch's.
        return BfccSenderRate(
            SenderReactionConfig(
                base_rate_bps=line_rate_bps,
                rate_thresholds=dict(DEFAULT_RATE_THRESHOLDS),
                expiry_ns=p.expiry_ns,
            )
        )
    if isinstance(p, sc.Bfcc | sc.NoControl | sc.Ns3Aqm | sc.Dadctcp | sc.P4Aqm):
        return FixedRate(line_rate_bps)
    if isinstance(p, sc.Pmqecn):
        return PmqecnRate(
            RpConfig(
                line_rate=line_rate_bps,
                min_rate=min(sc.parse_rate("100kbps"), line_rate_bps),
                initial_rate=min(sc.parse_rate(p.initial_rate), line_rate_bps),
                r_a=sc.parse_rate(p.ra),
                n_c=p.rounds,
                timer_period=p.rp_timer_us / 1e6,
                # The switch's answer changes once per controller cycle.
                feedback_interval=p.optimizer_interval_s or 1.0,
            )
        )
    if isinstance(p, sc.P4qcn):
        return QcnFamilyRate(
            QcnReactionPoint(
                QcnRpParams(
                    line_rate_bps=line_rate_bps,
                    min_rate_bps=min(sc.parse_rate(p.min_rate), line_rate_bps),
                    beta=p.beta,
                    fast_recovery_cycles=p.fast_recovery_cycles,
                    rai_bps=sc.parse_rate(p.rai),
                    byte_counter_bytes=p.byte_counter_bytes,
                    timer_ns=None if p.rate_timer_us is None else round(p.rate_timer_us * 1000),
                    feedback_packets_per_cut=p.feedback_packets_per_cut,
                    random_beta=p.random_beta,
                    seed=s.flow_seed(flow_index),
                    initial_rate_bps=(
                        None
                        if p.initial_rate is None
                        else min(float(sc.parse_rate(p.initial_rate)), line_rate_bps)
                    ),
                )
            )
        )
    assert isinstance(p, sc.DcqcnHost)
    return QcnFamilyRate(DcqcnReactionPoint(dcqcn_rp_params(p, line_rate_bps)))


class CnpNotifier:
    """DCQCN's notification point: a CNP per CE-marked flow, at most one per interval."""

    def __init__(self, interval_ns: int) -> None:
        self.np = DcqcnNotificationPoint(interval_ns)

    def on_data(self, flow_id: int, ce: bool, now_ns: int) -> bool:
        return self.np.on_packet(flow_id, ce, now_ns)


def notifier(scheme: str, s: sc.Scenario) -> CnpNotifier | None:
    """TCN is a marking scheme; its sources react like DCQCN's (NP + RP).
    P4QCN's three-point variant: the receiver notifies the source at most
    once per flow per N (seed 003 4.2.4)."""
    p = s.schemes.get(scheme)
    if isinstance(p, sc.DcqcnHost):
        return CnpNotifier(round(p.cnp_interval_us * 1000))
    if isinstance(p, sc.P4qcn) and p.architecture == "three_point":
        return CnpNotifier(round(p.feedback_interval_us * 1000))
    return None


# PFC in the harness: the routed pipelines put every data packet in queue 0;
# congestion messages go to a queue of their own at a higher TM priority.
PFC_DATA_QID = 0
PFC_CONTROL_QID = 1


def pfc_config(scheme: str, s: sc.Scenario, profile: HwProfile) -> PfcConfig | None:
    """The scheme's PFC at every switch, thresholds in the chip's cells of
    the scenario's largest data frame; None: PFC off."""
    pfc = getattr(s.schemes.get(scheme), "pfc", None)
    if pfc is None:
        return None
    pkt = max(f.packet_bytes for f in s.flows)
    return PfcConfig(
        priority=pfc.priority,
        qids=frozenset({PFC_DATA_QID}),
        control_qid=PFC_CONTROL_QID,
        xoff_cells=cells(pfc.xoff_packets, pkt, profile),
        xon_cells=cells(pfc.xon, pkt, profile),
        pause_quanta=pfc.pause_quanta,
    )


def check_buildable(s: sc.Scenario, source: str = "") -> None:
    """Build, without ns-3, every switch pipeline and sender rate controller
    `eval run` would build, for every scheme and link rate: a scenario whose
    parameters the controller or a baseline refuses is then refused by
    `eval check` (ScenarioError naming the scheme), not minutes into a run."""
    from bfrt_controller.errors import ConfigError
    from hw_profiles import load_profile

    profile = load_profile(s.chip)
    # The setups' warnings (saturated thresholds) are for `eval run`'s log,
    # once per run, not once per switch and rate here.
    logging.disable(logging.WARNING)
    try:
        for variant in list(s.link_rates) or [""]:
            topo = Topology(s, variant or None)
            for scheme in s.schemes.enabled():
                where = f"{scheme} at {variant}" if variant else scheme
                try:
                    for w in s.switches:
                        switch_setup(topo, w, scheme, profile, 0)
                    for f in s.flows:
                        rate = max(1, round(topo.access_rate(f.src) * f.load))
                        rate_controller(scheme, s, rate)
                    pfc_config(scheme, s, profile)
                except (ConfigError, ValueError) as exc:
                    raise sc.ScenarioError(source, f"schemes.{scheme}", f"{where}: {exc}") from None
    finally:
        logging.disable(logging.NOTSET)
