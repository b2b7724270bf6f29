"""BFCC configuration: what an operator writes, validated before anything is sent.

Structure and types are checked by pydantic; consistency (references between
sections, repeats) and chip limits (ports, queue ids, mirror session ids,
queue-depth and sojourn widths) by `check_against`. Every error names its
field (groups[1].upstream_port, params.t_max_us) and nothing is written when
any field is wrong.

`params` holds what `tofcc --program bfcc set NAME=VALUE` changes at run time;
they apply to every congestion point and reaction point of the switch. They
are in the paper's units (packets, microseconds at the paper's link rate);
the app converts them to the chip's (cells, ns at each port's rate), and a
name in the chip's units is refused with the one to use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args, get_origin

from pydantic import AfterValidator, Field

from hw_profiles import HwProfile, load_profile
from models.switch.bfcc import (
    BFCC_CONGESTION_POINTS,
    BFCC_DEGREE_MILD,
    BFCC_DEGREE_MODERATE,
    BFCC_DEGREE_SEVERE,
    BFCC_EPOCH_BITS,
    BFCC_EPOCH_LOW_BIT,
    DEFAULT_RATE_THRESHOLDS,
)

from ..common import (
    Mac,
    PortNumber,
    Route,
    SourceBinding,
    Strict,
    check_port,
    check_routes,
    check_source_bindings,
    ipv4_prefix,
    no_repeats,
    pipe_of,
)
from ..errors import ConfigError
from ..validation import load_yaml, parse_model

U8_MAX = 0xFF
U32_MAX = 0xFFFFFFFF
# The P4 tests `threshold - measure` by its bit 31: both must stay below 2^31.
SIGN_LIMIT = (1 << 31) - 1
# The refresh epoch is bits 24..19 of the ns clock (bfcc.p4 monitor).
REFRESH_MIN_LOG2 = BFCC_EPOCH_LOW_BIT
REFRESH_MAX_LOG2 = BFCC_EPOCH_LOW_BIT + BFCC_EPOCH_BITS - 1
# Seed 001 sections 3.1 and 5: 10 Mb/s links (7-10 Mb/s measured).
PAPER_RATE_MBPS = 10
# Seed 001 section 5.1: "a packet size of 128 B". Its threshold of 15
# packets is about 2 kB of queue; of 1500-byte packets it would be 22.5 kB.
PAPER_PACKET_BYTES = 128
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 16384
# Names in another unit than the one BFCC is configured in, and why.
WRONG_UNIT = {
    "threshold_cells": "threshold_packets",
    "threshold": "threshold_packets",
    "t_min_ns": "t_min_us",
    "t_max_ns": "t_max_us",
    "t_min_ms": "t_min_us",
    "t_max_ms": "t_max_us",
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "window_pkts": "window_packets",
    "rt1": "rt1_packets",
    "rt2": "rt2_packets",
    "rt3": "rt3_packets",
}
MAX_GROUP = 0xFF  # group_t (the low byte of class_id) is 8 bits; 0 means "no group"


class Group(Strict):
    """A virtual queue: the senders it holds (the same division on every
    switch) and the upstream port behind which they sit, if any."""

    id: Annotated[int, Field(ge=1, le=MAX_GROUP)]
    # One validator per element, so an error names groups[i].senders[j].
    senders: Annotated[list[Annotated[str, AfterValidator(ipv4_prefix)]], Field(min_length=1)]
    # None: the senders are attached here, no upstream switch to slow them.
    upstream_port: PortNumber | None = None


class UpstreamPort(Strict):
    """A port facing an upstream BFCC switch: backpressure for the groups
    behind it leaves through `mirror_session`, addressed with these MACs."""

    port: PortNumber
    mirror_session: Annotated[int, Field(ge=1)]
    src_mac: Mac
    dst_mac: Mac


class CongestionPoint(Strict):
    """A monitored egress port; its cp_id is its position in the list.
    `rate_mbps` is the port's speed: the paper's T_min/T_max (set for
    `params.reference_rate_mbps` links) are scaled to it (None: the
    reference rate, i.e. the paper's values as they are)."""

    port: PortNumber
    rate_mbps: Annotated[int, Field(ge=1)] | None = None


class ReactionPoint(Strict):
    """A port facing a downstream BFCC switch: the named group goes to
    `low_qid`, everything else to `high_qid` (strict priority between them).
    `rate_mbps` is the port's speed, which `params.reduction: shaping` cuts
    to RT/(RT+1) (required then)."""

    port: PortNumber
    high_qid: Annotated[int, Field(ge=0)]
    low_qid: Annotated[int, Field(ge=0)]
    rate_mbps: Annotated[int, Field(ge=1)] | None = None


class Params(Strict):
    """Run-time tunables (`tofcc --program bfcc set NAME=VALUE`), in the
    paper's units; the controller converts them to the chip's."""

    # CONGESTION_THRESHOLD (paper 3.2.1/5.1.1: 15 packets): a queue holding
    # more than this many packets is congested. The chip counts cells, so
    # the P4 threshold is threshold_packets x cells of one packet_bytes frame.
    threshold_packets: Annotated[int, Field(ge=1, le=U32_MAX)]
    # The paper's packets unless given: a data-centre deployment names its own.
    packet_bytes: Annotated[int, Field(ge=MIN_FRAME_BYTES, le=MAX_FRAME_BYTES)] = PAPER_PACKET_BYTES
    # The paper's T_min/T_max (deq_timedelta in BMv2's microseconds: 80,000
    # and 150,000) on reference_rate_mbps links. A port of another speed
    # gets the time the same queued bytes take to drain at its rate.
    t_min_us: Annotated[int, Field(ge=0, le=U32_MAX)]
    t_max_us: Annotated[int, Field(ge=0, le=U32_MAX)]
    reference_rate_mbps: Annotated[int, Field(ge=1)] = PAPER_RATE_MBPS
    window_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = 100
    # 0: an unchanged message is never repeated; else repeated every
    # refresh period: the largest power of two <= refresh_ns, 2^19..2^24 ns.
    refresh_ns: Annotated[int, Field(ge=0, le=U32_MAX)] = 0
    # Real packets per fake for degree 1, 2, 3 (paper: 9, 3, 1).
    rt1_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[BFCC_DEGREE_MILD]
    rt2_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[
        BFCC_DEGREE_MODERATE
    ]
    rt3_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[
        BFCC_DEGREE_SEVERE
    ]
    # 0: backpressure holds until cleared.
    expiry_ns: Annotated[int, Field(ge=0, le=U32_MAX)] = 0
    # 0 (the paper): while backpressure is active every packet to the port
    # is flagged and cut by fakes; 1: only the named group's packets.
    named_group_only: Annotated[int, Field(ge=0, le=1)] = 0
    # What a sender does about backpressure naming its group (seed 001
    # 4.2.2 says both): "none", the switches alone slow it; "match_switch",
    # its first-hop switch relays the message (sender_notify) and the sender
    # cuts its rate to RT/(RT+1), as the switch cuts the port.
    sender_reaction: Literal["none", "match_switch"] = "none"
    # How a reaction point cuts the port toward a congested switch (4.2.2's
    # RT/(RT+1)): "fakes", the paper's fake packets (a fake takes a slot only
    # when the port is saturated); "shaping", the controller shapes the port
    # (or, with named_group_only, the low queue) in the TM to RT/(RT+1) of
    # its rate_mbps while the switch holds backpressure: no fakes, no
    # recirculation, at the controller's polling delay.
    reduction: Literal["fakes", "shaping"] = "fakes"
    # What shaping takes RT/(RT+1) of: "line", the reaction point's
    # rate_mbps; "carried", the rate the port carried over the controller
    # cycle before the backpressure began (its $PORT_STAT byte counter), so
    # the cut bites at any load, like a fake on a saturated port.
    shaping_base: Literal["line", "carried"] = "line"
    # The level of a pipe's recirculation queue (bytes) above which a fake's
    # original leaves itself instead of recirculating, so the recirculation
    # port never drops an original (tna/bfcc/README.md, "Recirculation
    # bandwidth"): keep it below what the port's queue may hold. 64 KiB is
    # 5.2 us at 100 Gb/s.
    recirculation_level_bytes: Annotated[int, Field(ge=0, le=U32_MAX)] = 65536

    def rate_thresholds(self) -> dict[int, int]:
        return {
            BFCC_DEGREE_MILD: self.rt1_packets,
            BFCC_DEGREE_MODERATE: self.rt2_packets,
            BFCC_DEGREE_SEVERE: self.rt3_packets,
        }


PARAM_NAMES = tuple(Params.model_fields)
# Params whose value is a word, not a number (`set sender_reaction=match_switch`).
CHOICE_PARAMS: dict[str, tuple[str, ...]] = {
    name: get_args(f.annotation)
    for name, f in Params.model_fields.items()
    if get_origin(f.annotation) is Literal
}


class BfccConfig(Strict):
    program: Literal["bfcc"] = "bfcc"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    # Switch-facing ports: feedback from any other port is a forgery.
    trusted_ports: list[PortNumber] = []
    # The sources each host port's hosts may use (tna/include/source_guard.p4):
    # a host sending with a sender of another group would be counted, and
    # backpressured, as that group. Every untrusted routed port must be bound.
    source_bindings: list[SourceBinding] = []
    groups: list[Group] = []
    upstream_ports: list[UpstreamPort] = []
    congestion_points: Annotated[
        list[CongestionPoint], Field(max_length=BFCC_CONGESTION_POINTS)
    ] = []
    reaction_points: list[ReactionPoint] = []
    # The mirror session to the recirculation port (hw profile, never
    # configured) of the first pipe the config uses; each further pipe takes
    # the next id. Fakes' originals recirculate through their reaction
    # port's own pipe; backpressure goes round every pipe through them.
    recirculation_session: Annotated[int, Field(ge=1)] | None = None
    params: Params


def config_pipes(cfg: BfccConfig, profile: HwProfile) -> list[int]:
    """The pipes holding a port the config names, in order. Registers are per
    pipe and a sender's packets read bp_state in the ingress pipe of the port
    they arrive on, so backpressure is copied to each of these pipes."""
    ports = (
        {r.port for r in cfg.routes}
        | set(cfg.trusted_ports)
        | {b.port for b in cfg.source_bindings}
        | {u.port for u in cfg.upstream_ports}
        | {cp.port for cp in cfg.congestion_points}
        | {rp.port for rp in cfg.reaction_points}
    )
    return sorted({pipe_of(port, profile) for port in ports})


def recirculation_sessions(cfg: BfccConfig, profile: HwProfile) -> dict[int, int]:
    """pipe -> the mirror session to that pipe's recirculation port, for every
    pipe the config uses: recirculation_session for the first, the next ids
    for the next (none without reaction points). A fake's original
    recirculates through its reaction port's own pipe; backpressure goes
    round the pipes through theirs."""
    if not cfg.reaction_points or cfg.recirculation_session is None:
        return {}
    return {
        pipe: cfg.recirculation_session + i for i, pipe in enumerate(config_pipes(cfg, profile))
    }


def recirculation_ports(cfg: BfccConfig, profile: HwProfile) -> dict[int, int]:
    """pipe -> its recirculation port (hw profile), for the pipes with a session."""
    return {
        pipe: profile.recirculation_ports[pipe] for pipe in recirculation_sessions(cfg, profile)
    }


def recirculation_level_cells(p: Params, profile: HwProfile) -> int:
    """The recirculation table's level_cells: whole cells within the level."""
    return p.recirculation_level_bytes // profile.cell_bytes


_no_repeats = no_repeats


@dataclass(frozen=True)
class RecirculationLoad:
    """The worst case a pipe's recirculation port carries: every reaction
    point whose fakes' originals recirculate through it, at its line rate,
    at the degree that recirculates most (1/(RT+1) of its slots; RT 1 at
    severe: half), against what the port carries (hw profile)."""

    pipe: int
    port: int
    load_gbps: float
    capacity_gbps: float
    # (index in reaction_points, the port's worst share in Gb/s), in order.
    shares: tuple[tuple[int, float], ...]
    rt_packets: int

    @property
    def over(self) -> bool:
        return self.load_gbps > self.capacity_gbps


def line_rate_gbps(rp: ReactionPoint, profile: HwProfile) -> float:
    """A reaction port's speed: its rate_mbps, else the chip's fastest port
    (the worst case a port of unknown speed can be)."""
    return rp.rate_mbps / 1000 if rp.rate_mbps is not None else float(profile.max_port_gbps)


def recirculation_loads(cfg: BfccConfig, p: Params, profile: HwProfile) -> list[RecirculationLoad]:
    """Each pipe's worst-case recirculation (tna/bfcc/README.md, "Recirculation
    bandwidth"), for the pipes with reaction points: a fake's original
    recirculates through its reaction port's own pipe. None when nothing
    recirculates (no reaction point, or reduction shaping: the TM cuts the
    port, no fakes)."""
    if not cfg.reaction_points or p.reduction != "fakes":
        return []
    rt = min(p.rate_thresholds().values())
    share = 1 / (rt + 1)
    by_pipe: dict[int, list[tuple[int, float]]] = {}
    for i, rp in enumerate(cfg.reaction_points):
        by_pipe.setdefault(pipe_of(rp.port, profile), []).append(
            (i, line_rate_gbps(rp, profile) * share)
        )
    return [
        RecirculationLoad(
            pipe,
            profile.recirculation_ports[pipe],
            sum(g for _, g in shares),
            float(profile.recirculation_port_gbps),
            tuple(shares),
            rt,
        )
        for pipe, shares in sorted(by_pipe.items())
    ]


def _gbps(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def check_recirculation_budget(
    cfg: BfccConfig, p: Params, profile: HwProfile, field: str | None = None
) -> None:
    """Refuse reaction points whose worst-case recirculation exceeds their
    pipe's recirculation port (issue 50, finding 3). The data plane never
    drops an original for it (past the port's level an original leaves
    itself instead of a fake), but the cut then falls short of RT/(RT+1)
    whenever the ports are busy: a config that cannot have its cut is
    refused rather than silently weakened. The error names the reaction
    point that crosses the capacity (or `field`, the parameter a `set`
    changed), the pipe and the load."""
    for load in recirculation_loads(cfg, p, profile):
        if not load.over:
            continue
        running = 0.0
        first_over = load.shares[-1][0]
        for i, gbps in load.shares:
            running += gbps
            if running > load.capacity_gbps:
                first_over = i
                break
        ports = ", ".join(str(cfg.reaction_points[i].port) for i, _ in load.shares)
        raise ConfigError(
            field or f"reaction_points[{first_over}].port",
            f"pipe {load.pipe}'s recirculation port {load.port} would carry up to "
            f"{_gbps(load.load_gbps)} Gb/s against its {_gbps(load.capacity_gbps)} Gb/s: "
            f"reaction ports {ports} each recirculate 1/(RT+1) = 1/{load.rt_packets + 1} of "
            "their line rate (rate_mbps, else the chip's fastest port) at the degree with "
            f"the lowest RT ({load.rt_packets}). Raise that RT, give the ports' rate_mbps, "
            "move reaction points to another pipe (each pipe recirculates through its own "
            "port), take reaction points off, or use reduction: shaping",
        )


UNIT_WHY = {
    "threshold_packets": "the paper's CONGESTION_THRESHOLD counts packets; the controller "
    "converts it to cells with packet_bytes and the chip's cell size",
    "t_min_us": "the paper's T_min/T_max are microseconds of deq_timedelta; the controller "
    "converts them to each port's ns",
    "t_max_us": "the paper's T_min/T_max are microseconds of deq_timedelta; the controller "
    "converts them to each port's ns",
    "window_packets": "a window counts congested departures",
    "rt1_packets": "RT counts real packets per fake",
    "rt2_packets": "RT counts real packets per fake",
    "rt3_packets": "RT counts real packets per fake",
}


def check_param_name(name: str, prefix: str = "") -> None:
    """Refuse a parameter BFCC does not have, naming the one in the right
    unit when the name is a known one in another unit."""
    if name in PARAM_NAMES:
        return
    if name in WRONG_UNIT:
        right = WRONG_UNIT[name]
        raise ConfigError(f"{prefix}{name}", f"wrong unit: set {right} instead ({UNIT_WHY[right]})")
    raise ConfigError(f"{prefix}{name}", f"unknown parameter (known: {', '.join(PARAM_NAMES)})")


def cells_per_packet(p: Params, profile: HwProfile) -> int:
    return -(-p.packet_bytes // profile.cell_bytes)


def threshold_cells(p: Params, profile: HwProfile) -> int:
    """The P4's congestion_threshold_cells: depth > it <=> more than
    threshold_packets packets of packet_bytes are queued."""
    return p.threshold_packets * cells_per_packet(p, profile)


def sojourn_limit_ns(profile: HwProfile) -> int:
    """The largest sojourn threshold the data plane can act on: deq_timedelta
    saturates there (Tofino: 18 bits), and the P4 tests differences by bit 31."""
    return min(profile.max_timedelta_ns, SIGN_LIMIT)


@dataclass(frozen=True)
class SojournThresholds:
    """T_min/T_max of one port in ns: derived (exact) and written (at most
    the chip's limit). A saturated threshold is never exceeded."""

    t_min_ns: int
    t_max_ns: int
    written_t_min_ns: int
    written_t_max_ns: int

    @property
    def saturated(self) -> tuple[str, ...]:
        return tuple(
            name
            for name, exact, written in (
                ("t_min", self.t_min_ns, self.written_t_min_ns),
                ("t_max", self.t_max_ns, self.written_t_max_ns),
            )
            if exact > written
        )


def sojourn_thresholds(p: Params, rate_mbps: int | None, profile: HwProfile) -> SojournThresholds:
    """The paper's T_min/T_max carried to a port of `rate_mbps`: the time the
    same queued bytes take to drain, t x reference_rate / rate (floor), in ns."""
    rate = rate_mbps or p.reference_rate_mbps
    limit = sojourn_limit_ns(profile)
    t_min = p.t_min_us * 1000 * p.reference_rate_mbps // rate
    t_max = p.t_max_us * 1000 * p.reference_rate_mbps // rate
    return SojournThresholds(t_min, t_max, min(t_min, limit), min(t_max, limit))


def refresh_period_ns(p: Params) -> int:
    """The refresh the data plane does: the largest power of two <= refresh_ns
    within 2^19..2^24 ns (0: none). Rounding down repeats no later than asked."""
    if p.refresh_ns == 0:
        return 0
    return 1 << min(p.refresh_ns.bit_length() - 1, REFRESH_MAX_LOG2)


def refresh_mask(p: Params) -> int:
    """monitor's refresh_mask: the clock bits above the period, up to bit 24."""
    period = refresh_period_ns(p)
    if period == 0:
        return 0
    return ((1 << (REFRESH_MAX_LOG2 + 1)) - 1) & ~(period - 1)


def check_params(
    p: Params, profile: HwProfile, prefix: str = "", changed: Iterable[str] = ()
) -> None:
    """Limits of the tunables that pydantic cannot see: relations between them
    and the chip's field widths. `changed` picks which of two related fields
    an error names (the one the operator just set)."""
    if p.t_min_us >= p.t_max_us:
        field = "t_max_us" if "t_max_us" in changed and "t_min_us" not in changed else "t_min_us"
        raise ConfigError(
            f"{prefix}{field}",
            f"t_min_us ({p.t_min_us}) must be below t_max_us ({p.t_max_us}), "
            "else degree 2 (moderate) is unreachable",
        )
    cells = threshold_cells(p, profile)
    reach = min(profile.max_qdepth_cells, profile.buffer_cells)
    if cells >= reach:
        raise ConfigError(
            f"{prefix}threshold_packets",
            f"{p.threshold_packets} packets of {p.packet_bytes} B are {cells} cells, which "
            f"{profile.chip}'s queue depth can never exceed (buffer {profile.buffer_cells} "
            f"cells, enq_qdepth {profile.enq_qdepth_bits} bits): is it in packets?",
        )
    level = recirculation_level_cells(p, profile)
    if level >= reach:
        raise ConfigError(
            f"{prefix}recirculation_level_bytes",
            f"{p.recirculation_level_bytes} B are {level} cells, which {profile.chip}'s "
            f"recirculation queue can never exceed (buffer {profile.buffer_cells} cells, "
            f"deq_qdepth {profile.enq_qdepth_bits} bits): no original would ever be kept "
            "from a full recirculation port",
        )
    if 0 < p.refresh_ns < 1 << REFRESH_MIN_LOG2:
        raise ConfigError(
            f"{prefix}refresh_ns",
            f"{p.refresh_ns} ns is below the shortest refresh period, 2^{REFRESH_MIN_LOG2} = "
            f"{1 << REFRESH_MIN_LOG2} ns (0 turns refresh off)",
        )


def param_warnings(p: Params) -> list[str]:
    """Legal but probably unintended settings (logged, not refused)."""
    out = []
    if not p.rt1_packets >= p.rt2_packets >= p.rt3_packets:
        out.append(
            "rt1_packets >= rt2_packets >= rt3_packets expected (a worse degree slows more), "
            f"got {p.rt1_packets}/{p.rt2_packets}/{p.rt3_packets}"
        )
    refresh = refresh_period_ns(p)
    if p.expiry_ns and refresh == 0:
        out.append(
            "expiry_ns is set but refresh_ns is 0: during a long, stable congestion the "
            "upstream's backpressure expires and is never renewed"
        )
    elif p.expiry_ns and refresh >= p.expiry_ns:
        out.append(
            f"the refresh period ({refresh} ns from refresh_ns {p.refresh_ns}) should be below "
            f"expiry_ns ({p.expiry_ns}), else backpressure expires before it is renewed"
        )
    return out


def saturation_reports(cfg: BfccConfig, p: Params, profile: HwProfile) -> list[str]:
    """Congestion points whose derived T_min/T_max the chip cannot measure:
    written as the chip's limit, so the degrees above it never occur."""
    out = []
    limit = sojourn_limit_ns(profile)
    for i, cp in enumerate(cfg.congestion_points):
        t = sojourn_thresholds(p, cp.rate_mbps, profile)
        if t.saturated:
            lost = "degrees 2 and 3 are" if "t_min" in t.saturated else "degree 3 is"
            out.append(
                f"congestion_points[{i}] (port {cp.port}, "
                f"{cp.rate_mbps or p.reference_rate_mbps} Mb/s): T_min {t.t_min_ns} ns, "
                f"T_max {t.t_max_ns} ns exceed what {profile.chip} measures ({limit} ns, "
                f"deq_timedelta {profile.deq_timedelta_bits} bits): written as {limit} ns, "
                f"so {lost} never reported"
            )
    return out


@dataclass(frozen=True)
class SenderNotify:
    """Where group `group`'s senders are told of backpressure naming it: the
    host port their route leaves by, with that route's MACs."""

    group: int
    port: int
    src_mac: str
    dst_mac: str


def _route_of(cfg: BfccConfig, sender: str) -> tuple[int, Route] | None:
    """The route (index, route) the switch uses toward `sender`: the longest
    prefix holding it."""
    net = ipaddress.IPv4Network(sender)
    best: tuple[int, Route] | None = None
    for i, r in enumerate(cfg.routes):
        rnet = ipaddress.IPv4Network(r.prefix)
        if net.subnet_of(rnet) and (
            best is None or rnet.prefixlen > ipaddress.IPv4Network(best[1].prefix).prefixlen
        ):
            best = (i, r)
    return best


def sender_notify_targets(cfg: BfccConfig, strict: bool = True) -> list[SenderNotify]:
    """The groups whose senders are attached here (their route leaves by a
    host port, i.e. not a trusted switch-facing one), and that port. Senders
    behind another switch are told by their own first-hop switch. A relayed
    message must never leave by a trusted port: the switch there would take
    it for backpressure about this switch's port. Raises ConfigError for a
    group whose attached senders sit behind two host ports (the relay is
    one unicast copy); with `strict` False such a group is left out."""
    trusted = set(cfg.trusted_ports)
    out: list[SenderNotify] = []
    for gi, g in enumerate(cfg.groups):
        if g.upstream_port is not None:
            continue
        found: tuple[int, int, Route] | None = None
        split = False
        for si, s in enumerate(g.senders):
            hit = _route_of(cfg, s)
            if hit is None or hit[1].port in trusted:
                continue
            if found is not None and found[2].port != hit[1].port:
                split = True
                if not strict:
                    break
                raise ConfigError(
                    f"groups[{gi}].senders[{si}]",
                    f"{s} is behind port {hit[1].port} but groups[{gi}].senders[{found[0]}] "
                    f"behind port {found[2].port}: sender_reaction match_switch relays a "
                    "group's backpressure to one host port (split the group)",
                )
            found = found or (si, hit[0], hit[1])
        if found is not None and not split:
            r = found[2]
            out.append(SenderNotify(g.id, r.port, r.src_mac, r.dst_mac))
    return out


def check_shaping_rates(cfg: BfccConfig, p: Params, prefix: str = "") -> None:
    """Shaping cuts a fraction of each reaction point's rate: it must be known."""
    if p.reduction != "shaping":
        return
    for i, rp in enumerate(cfg.reaction_points):
        if rp.rate_mbps is None:
            raise ConfigError(
                f"{prefix}reaction_points[{i}].rate_mbps",
                f"required with reduction shaping: port {rp.port} is shaped to RT/(RT+1) "
                "of its rate",
            )


def shaped_rate_kbps(rate_mbps: int, rt_packets: int) -> int:
    """The TM max rate that keeps RT of every RT+1 slots, as the fakes do (floor)."""
    return rate_mbps * 1000 * rt_packets // (rt_packets + 1)


def check_against(cfg: BfccConfig, profile: HwProfile) -> None:
    """Consistency and chip limits; raises ConfigError naming the first bad field."""

    def port(field: str, value: int, front_panel: bool = False) -> None:
        check_port(field, value, profile, front_panel)

    def queue(field: str, value: int) -> None:
        if value > profile.max_queue_id:
            raise ConfigError(
                field, f"queue {value} exceeds {profile.chip}'s max queue id {profile.max_queue_id}"
            )

    def session(field: str, sid: int) -> None:
        if not profile.valid_mirror_session(sid):
            raise ConfigError(
                field,
                f"mirror session {sid} outside {profile.mirror_session_min}.."
                f"{profile.mirror_session_max} on {profile.chip}",
            )

    check_routes(cfg.routes, profile)
    for i, p in enumerate(cfg.trusted_ports):
        port(f"trusted_ports[{i}]", p)
    _no_repeats("trusted_ports", cfg.trusted_ports)
    host_ports: dict[int, str] = {}
    for i, r in enumerate(cfg.routes):
        host_ports.setdefault(r.port, f"routes[{i}].port")
    # front_panel: the recirculation port carries real packets the switch
    # already admitted, whatever their source.
    check_source_bindings(
        cfg.source_bindings,
        cfg.trusted_ports,
        host_ports,
        lambda field, value: port(field, value, front_panel=True),
    )

    for i, u in enumerate(cfg.upstream_ports):
        port(f"upstream_ports[{i}].port", u.port, front_panel=True)
        session(f"upstream_ports[{i}].mirror_session", u.mirror_session)
    _no_repeats("upstream_ports", (u.port for u in cfg.upstream_ports), ".port")
    _no_repeats("upstream_ports", (u.mirror_session for u in cfg.upstream_ports), ".mirror_session")

    _no_repeats("groups", (g.id for g in cfg.groups), ".id")
    upstream = {u.port for u in cfg.upstream_ports}
    seen_senders: dict[str, str] = {}
    for i, g in enumerate(cfg.groups):
        for j, s in enumerate(g.senders):
            field = f"groups[{i}].senders[{j}]"
            if s in seen_senders:
                raise ConfigError(field, f"{s} is already in {seen_senders[s]}")
            seen_senders[s] = field
        if g.upstream_port is not None and g.upstream_port not in upstream:
            raise ConfigError(
                f"groups[{i}].upstream_port",
                f"port {g.upstream_port} is not in upstream_ports "
                f"(known: {sorted(upstream) or 'none'})",
            )

    for i, cp in enumerate(cfg.congestion_points):
        port(f"congestion_points[{i}].port", cp.port, front_panel=True)
    _no_repeats("congestion_points", (cp.port for cp in cfg.congestion_points), ".port")

    trusted = set(cfg.trusted_ports)
    for i, rp in enumerate(cfg.reaction_points):
        port(f"reaction_points[{i}].port", rp.port, front_panel=True)
        queue(f"reaction_points[{i}].high_qid", rp.high_qid)
        queue(f"reaction_points[{i}].low_qid", rp.low_qid)
        if rp.high_qid == rp.low_qid:
            raise ConfigError(
                f"reaction_points[{i}].low_qid",
                f"must differ from high_qid ({rp.high_qid}): the named group is slowed "
                "by strict priority between the two",
            )
        if rp.port not in trusted:
            raise ConfigError(
                f"reaction_points[{i}].port",
                f"port {rp.port} faces a downstream BFCC switch but is not in trusted_ports, "
                "so its backpressure would be dropped as forged",
            )
    _no_repeats("reaction_points", (rp.port for rp in cfg.reaction_points), ".port")

    if cfg.reaction_points:
        if cfg.recirculation_session is None:
            raise ConfigError(
                "recirculation_session", "required when reaction_points are set (fakes need it)"
            )
        check_recirculation_sessions(cfg, profile)

    check_params(cfg.params, profile, "params.")
    check_shaping_rates(cfg, cfg.params)
    check_recirculation_budget(cfg, cfg.params, profile)
    if cfg.params.sender_reaction == "match_switch":
        sender_notify_targets(cfg)


def check_recirculation_sessions(cfg: BfccConfig, profile: HwProfile) -> None:
    """One session per pipe the config uses, from recirculation_session on:
    each must be the chip's and none an upstream port's."""
    upstream = {u.mirror_session: i for i, u in enumerate(cfg.upstream_ports)}
    for k, (pipe, sid) in enumerate(recirculation_sessions(cfg, profile).items()):
        which = f"session {sid}" if k == 0 else f"session {sid} (recirculation_session + {k})"
        if not profile.valid_mirror_session(sid):
            raise ConfigError(
                "recirculation_session",
                f"{which}, pipe {pipe}'s recirculation, is outside "
                f"{profile.mirror_session_min}..{profile.mirror_session_max} on {profile.chip} "
                "(each pipe the config uses takes the next id)",
            )
        if sid in upstream:
            raise ConfigError(
                "recirculation_session",
                f"{which} is upstream_ports[{upstream[sid]}].mirror_session "
                f"(pipe {pipe}'s recirculation takes it; each pipe the config uses takes "
                "the next id from recirculation_session)",
            )


def parse_config(raw: object, source: str = "") -> BfccConfig:
    if isinstance(raw, dict) and isinstance(raw.get("params"), dict):
        prefix = f"{source}: params." if source else "params."
        for name in raw["params"]:
            if name in WRONG_UNIT:
                check_param_name(name, prefix)
    cfg = parse_model(BfccConfig, raw, source)
    try:
        check_against(cfg, load_profile(cfg.chip))
    except ConfigError as exc:
        raise exc.within(source) from None
    return cfg


def load_config(path: str | Path) -> BfccConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "bfcc.yaml"
