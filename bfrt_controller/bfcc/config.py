"""BFCC configuration: what an operator writes, validated before anything is sent.

Structure and types are checked by pydantic; consistency (references between
sections, repeats) and chip limits (ports, queue ids, mirror session ids,
queue-depth and sojourn widths) by `check_against`. Every error names its
field (groups[1].upstream_port, params.t_max_ns) and nothing is written when
any field is wrong.

`params` holds what `tofcc --program bfcc set NAME=VALUE` changes at run time;
they apply to every congestion point and reaction point of the switch.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from hw_profiles import HwProfile, load_profile
from models.switch.bfcc import (
    BFCC_CONGESTION_POINTS,
    BFCC_DEGREE_MILD,
    BFCC_DEGREE_MODERATE,
    BFCC_DEGREE_SEVERE,
    DEFAULT_RATE_THRESHOLDS,
)

from ..common import Mac, PortNumber, Route, Strict, ipv4_prefix
from ..errors import ConfigError
from ..validation import load_yaml, parse_model

U8_MAX = 0xFF
U32_MAX = 0xFFFFFFFF
# bp_refresh_check treats now - at below 2^31 as due, so a longer refresh
# would look due at once.
REFRESH_LIMIT_NS = 1 << 31
MAX_GROUP = 0xFF  # class_id_t is 8 bits; 0 means "no group"


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
    """A monitored egress port; its cp_id is its position in the list."""

    port: PortNumber


class ReactionPoint(Strict):
    """A port facing a downstream BFCC switch: the named group goes to
    `low_qid`, everything else to `high_qid` (strict priority between them)."""

    port: PortNumber
    high_qid: Annotated[int, Field(ge=0)]
    low_qid: Annotated[int, Field(ge=0)]


class Params(Strict):
    """Run-time tunables (`tofcc --program bfcc set NAME=VALUE`)."""

    # CONGESTION_THRESHOLD: a queue deeper than this is congested.
    threshold_cells: Annotated[int, Field(ge=0, le=U32_MAX)]
    # Sojourn <= t_min_ns: mild; <= t_max_ns: moderate; above: severe.
    t_min_ns: Annotated[int, Field(ge=0, le=U32_MAX)]
    t_max_ns: Annotated[int, Field(ge=0, le=U32_MAX)]
    window_pkts: Annotated[int, Field(ge=1, le=U8_MAX)] = 100
    # 0: an unchanged message is never repeated.
    refresh_ns: Annotated[int, Field(ge=0, lt=REFRESH_LIMIT_NS)] = 0
    # Real packets per fake for degree 1, 2, 3 (paper: 9, 3, 1).
    rt1: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[BFCC_DEGREE_MILD]
    rt2: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[BFCC_DEGREE_MODERATE]
    rt3: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[BFCC_DEGREE_SEVERE]
    # 0: backpressure holds until cleared.
    expiry_ns: Annotated[int, Field(ge=0, le=U32_MAX)] = 0

    def rate_thresholds(self) -> dict[int, int]:
        return {
            BFCC_DEGREE_MILD: self.rt1,
            BFCC_DEGREE_MODERATE: self.rt2,
            BFCC_DEGREE_SEVERE: self.rt3,
        }


PARAM_NAMES = tuple(Params.model_fields)


class BfccConfig(Strict):
    program: Literal["bfcc"] = "bfcc"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    # Switch-facing ports: feedback from any other port is a forgery.
    trusted_ports: list[PortNumber] = []
    groups: list[Group] = []
    upstream_ports: list[UpstreamPort] = []
    congestion_points: Annotated[
        list[CongestionPoint], Field(max_length=BFCC_CONGESTION_POINTS)
    ] = []
    reaction_points: list[ReactionPoint] = []
    # The session fakes' real copies recirculate through; its port is the
    # chip's recirculation port (hw profile), never configured.
    recirculation_session: Annotated[int, Field(ge=1)] | None = None
    params: Params


def pipe_of(port: int, profile: HwProfile) -> int:
    """The pipe a port id belongs to: its top bits above the pipe-local port."""
    return port >> (profile.port_id_bits - (profile.pipes - 1).bit_length())


def recirculation_port(cfg: BfccConfig, profile: HwProfile) -> int | None:
    """The recirculation port of the reaction points' pipe (None without any):
    the recirculated real packet must see the same pipe's bp_state again."""
    if not cfg.reaction_points:
        return None
    return profile.recirculation_ports[pipe_of(cfg.reaction_points[0].port, profile)]


def _no_repeats(field: str, values: Iterable[object], what: str = "") -> None:
    seen: dict[object, int] = {}
    for i, v in enumerate(values):
        if v in seen:
            raise ConfigError(f"{field}[{i}]{what}", f"{v!r} repeats {field}[{seen[v]}]{what}")
        seen[v] = i


def check_params(
    p: Params, profile: HwProfile, prefix: str = "", changed: Iterable[str] = ()
) -> None:
    """Limits of the tunables that pydantic cannot see: relations between them
    and the chip's field widths. `changed` picks which of two related fields
    an error names (the one the operator just set)."""
    if p.t_min_ns >= p.t_max_ns:
        field = "t_max_ns" if "t_max_ns" in changed and "t_min_ns" not in changed else "t_min_ns"
        raise ConfigError(
            f"{prefix}{field}",
            f"t_min_ns ({p.t_min_ns}) must be below t_max_ns ({p.t_max_ns}), "
            "else degree 2 (moderate) is unreachable",
        )
    if p.threshold_cells >= profile.max_qdepth_cells:
        raise ConfigError(
            f"{prefix}threshold_cells",
            f"{p.threshold_cells} cells can never be exceeded: {profile.chip} reports queue "
            f"depth in {profile.enq_qdepth_bits} bits (max {profile.max_qdepth_cells})",
        )
    # Severe needs sojourn > t_max_ns; the TM's deq_timedelta saturates.
    if p.t_max_ns >= profile.max_timedelta_ns:
        raise ConfigError(
            f"{prefix}t_max_ns",
            f"{p.t_max_ns} ns makes degree 3 (severe) unreachable: {profile.chip} reports "
            f"sojourn in {profile.deq_timedelta_bits} bits (max {profile.max_timedelta_ns} ns)",
        )


def param_warnings(p: Params) -> list[str]:
    """Legal but probably unintended settings (logged, not refused)."""
    out = []
    if not p.rt1 >= p.rt2 >= p.rt3:
        out.append(
            f"rt1 >= rt2 >= rt3 expected (a worse degree slows more), got {p.rt1}/{p.rt2}/{p.rt3}"
        )
    if p.expiry_ns and p.refresh_ns == 0:
        out.append(
            "expiry_ns is set but refresh_ns is 0: during a long, stable congestion the "
            "upstream's backpressure expires and is never renewed"
        )
    elif p.expiry_ns and p.refresh_ns >= p.expiry_ns:
        out.append(
            f"refresh_ns ({p.refresh_ns}) should be below expiry_ns ({p.expiry_ns}), "
            "else backpressure expires before it is renewed"
        )
    return out


def check_against(cfg: BfccConfig, profile: HwProfile) -> None:
    """Consistency and chip limits; raises ConfigError naming the first bad field."""
    recirc = set(profile.recirculation_ports)

    def port(field: str, value: int, front_panel: bool = False) -> None:
        if value > profile.max_port:
            raise ConfigError(field, f"port {value} exceeds {profile.chip}'s {profile.max_port}")
        local = value & ((1 << (profile.port_id_bits - (profile.pipes - 1).bit_length())) - 1)
        if local >= profile.ports_per_pipe:
            raise ConfigError(
                field,
                f"port {value} does not exist: {profile.chip} has ports 0.."
                f"{profile.ports_per_pipe - 1} in each pipe",
            )
        if front_panel and value in recirc:
            raise ConfigError(
                field,
                f"port {value} is {profile.chip}'s recirculation port of pipe "
                f"{pipe_of(value, profile)}, not a link to another switch",
            )

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

    for i, r in enumerate(cfg.routes):
        port(f"routes[{i}].port", r.port)
    for i, p in enumerate(cfg.trusted_ports):
        port(f"trusted_ports[{i}]", p)
    _no_repeats("trusted_ports", cfg.trusted_ports)

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
        first = cfg.reaction_points[0].port
        if pipe_of(rp.port, profile) != pipe_of(first, profile):
            raise ConfigError(
                f"reaction_points[{i}].port",
                f"port {rp.port} is in pipe {pipe_of(rp.port, profile)} but reaction_points[0] "
                f"(port {first}) in pipe {pipe_of(first, profile)}: rate_threshold names one "
                "recirculation session, and a real packet must recirculate through the pipe "
                "that holds its port's backpressure",
            )
    _no_repeats("reaction_points", (rp.port for rp in cfg.reaction_points), ".port")

    if cfg.reaction_points:
        if cfg.recirculation_session is None:
            raise ConfigError(
                "recirculation_session", "required when reaction_points are set (fakes need it)"
            )
        session("recirculation_session", cfg.recirculation_session)
        for i, u in enumerate(cfg.upstream_ports):
            if u.mirror_session == cfg.recirculation_session:
                raise ConfigError(
                    "recirculation_session",
                    f"session {u.mirror_session} is upstream_ports[{i}].mirror_session",
                )

    check_params(cfg.params, profile, "params.")


def parse_config(raw: object, source: str = "") -> BfccConfig:
    cfg = parse_model(BfccConfig, raw, source)
    check_against(cfg, load_profile(cfg.chip))
    return cfg


def load_config(path: str | Path) -> BfccConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "bfcc.yaml"
