# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
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

from hw_profiles import HwProfile

from ..common import (
    Route,
    check_port,
    check_queue_id,
    check_routes,
    check_source_bindings,
    no_repeats,
)
from ..errors import ConfigError
from ..validation import load_yaml, parse_on_chip
from .recirculation import (
    RecirculationLoad as RecirculationLoad,
)
from .recirculation import (
    check_recirculation_budget as check_recirculation_budget,
)
from .recirculation import (
    check_recirculation_sessions as check_recirculation_sessions,
)
from .recirculation import (
    config_pipes as config_pipes,
)
from .recirculation import (
    line_rate_gbps as line_rate_gbps,
)
from .recirculation import (
    recirculation_level_cells as recirculation_level_cells,
)
from .recirculation import (
    recirculation_loads as recirculation_loads,
)
from .recirculation import (
    recirculation_ports as recirculation_ports,
)
from .recirculation import (
    recirculation_sessions as recirculation_sessions,
)
from .schema import (
    CHOICE_PARAMS as CHOICE_PARAMS,
)
from .schema import (
    MAX_FRAME_BYTES as MAX_FRAME_BYTES,
)
from .schema import (
    MAX_GROUP as MAX_GROUP,
)
from .schema import (
    MIN_FRAME_BYTES as MIN_FRAME_BYTES,
)
from .schema import (
    PAPER_PACKET_BYTES as PAPER_PACKET_BYTES,
)
from .schema import (
    PAPER_RATE_MBPS as PAPER_RATE_MBPS,
)
from .schema import (
    PARAM_NAMES as PARAM_NAMES,
)
from .schema import (
    REFRESH_MAX_LOG2 as REFRESH_MAX_LOG2,
)
from .schema import (
    REFRESH_MIN_LOG2 as REFRESH_MIN_LOG2,
)
from .schema import (
    SIGN_LIMIT as SIGN_LIMIT,
)
from .schema import (
    U8_MAX as U8_MAX,
)
from .schema import (
    U32_MAX as U32_MAX,
)
from .schema import (
    WRONG_UNIT as WRONG_UNIT,
)
from .schema import (
    BfccConfig as BfccConfig,
)
from .schema import (
    CongestionPoint as CongestionPoint,
)
from .schema import (
    Group as Group,
)
from .schema import (
    Params as Params,
)
from .schema import (
    ReactionPoint as ReactionPoint,
)
from .schema import (
    UpstreamPort as UpstreamPort,
)

_no_repeats = no_repeats


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
        check_queue_id(field, value, profile)

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


def parse_config(raw: object, source: str = "") -> BfccConfig:
    if isinstance(raw, dict) and isinstance(raw.get("params"), dict):
        prefix = f"{source}: params." if source else "params."
        for name in raw["params"]:
            if name in WRONG_UNIT:
                check_param_name(name, prefix)
    return parse_on_chip(BfccConfig, raw, source, check_against)


def load_config(path: str | Path) -> BfccConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "bfcc.yaml"
