# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What every program's controller shares, because every program shares the
includes it configures (tna/include: routing, the trusted-port check and
source binding).

Config building blocks, the writes for routing, trust and source binding,
their validation, and the batch
ordering live here once; program modules add only what is theirs.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from hw_profiles import HwProfile
from models import cycle_speedups
from models.switch.core import Match

from .errors import ConfigError
from .logs import logfmt_value
from .switch import EntryWrite, MirrorSessionWrite, RegisterClear, RegisterWrite, Switch, Write

log = logging.getLogger("tofcc")

# Control-plane names of the shared includes (forwarding.p4, trust.p4,
# source_guard.p4), the same in every program.
IPV4_LPM = "SwitchIngress.forward.ipv4_lpm"
ROUTE = "SwitchIngress.forward.route"
TRUSTED_PORTS = "SwitchIngress.trust.trusted_ports"
TRUSTED = "SwitchIngress.trust.trusted"
UNTRUSTED_FEEDBACK_DROPS = "SwitchIngress.trust.untrusted_feedback_drops"
SOURCE_BINDINGS = "SwitchIngress.source_guard.source_bindings"
BOUND = "SwitchIngress.source_guard.bound"
SPOOFED_SOURCE = "SwitchIngress.source_guard.spoofed_source"
SPOOFED_SOURCE_DROPS = "SwitchIngress.source_guard.spoofed_source_drops"
K_DST_ADDR = "hdr.ipv4.dst_addr"
K_SRC_ADDR = "hdr.ipv4.src_addr"
K_INGRESS_PORT = "ig_intr_md.ingress_port"
K_BRIDGED_INGRESS_PORT = "hdr.bridged.ingress_port"

# source_bindings' size (tna/include/size.p4, SOURCE_BINDING_ENTRIES).
SOURCE_BINDINGS_SIZE = 1024
# A binding of exactly this prefix admits every source: the port is listed
# (so the config says it on purpose) but not checked.
ANY_SOURCE = "0.0.0.0/0"

MAC_PATTERN = r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$"

# The shortest controller cycle, in seconds. Every cycle ends in a read-back
# of what the switch holds over BF-Runtime (PMQECN: each class's counters and
# sojourn registers; DA-DCTCP: two register arrays; BFCC's shaper: bp_state),
# each a gRPC round trip served by the switch's CPU (bf_switchd), and a full
# switch's PMQECN cycle takes 20-50 ms on the controller itself (README,
# benchmarks/control_loop.py). Below 10 ms the loop is back-to-back reads
# that load the switch's CPU and measure nothing new (issue 44: 1e-9 s gave
# ~4,000 cycles/s). The evaluation's simulated controllers, on a simulated
# clock with no switch to read, may run faster (evaluation/schemes.py).
MIN_CYCLE_INTERVAL_S = 0.01
CYCLE_INTERVAL_DOC = (
    "seconds between two controller cycles, each a read-back of the switch: at least "
    f"{MIN_CYCLE_INTERVAL_S:g} s (a cycle's gRPC reads take milliseconds on the switch's CPU)"
)


def check_cycle_interval(field: str, seconds: float, max_s: float) -> float:
    """A command line's --interval against the configs' bounds."""
    if not (math.isfinite(seconds) and MIN_CYCLE_INTERVAL_S <= seconds <= max_s):
        raise ConfigError(
            field,
            f"must be a number of seconds in [{MIN_CYCLE_INTERVAL_S:g}, {max_s:g}] (each cycle "
            f"reads the switch back: below {MIN_CYCLE_INTERVAL_S:g} s it only loads the "
            f"switch's CPU), got {seconds:g}",
        )
    return seconds


def cycle_interval(max_s: float) -> FieldInfo:
    """The Field of a controller cycle's interval, MIN_CYCLE_INTERVAL_S..max_s."""
    return Field(ge=MIN_CYCLE_INTERVAL_S, le=max_s, description=CYCLE_INTERVAL_DOC)


# A name an operator types (`set-threshold voice=20`) and reads in metric
# labels and `status`: ASCII letters, digits, `_` and `-`, starting with a
# letter or `_`, so never all digits (a number reads as an id), never an
# option (`-x`), never two names that look alike (`vоice` with a Cyrillic
# `о`, a zero-width joiner, a space). Names must also differ after case
# folding (`Voice`, `voice`): `no_repeats_folded`.
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
NAME_DOC = "ASCII letters, digits, _ and -, starting with a letter or _, at most 64"


def operator_name(value: str) -> str:
    if NAME_RE.fullmatch(value):
        return value
    odd = next((c for c in value if not c.isascii()), None)
    # Say which character: `vоice` and `voice` look the same in the message.
    why = (
        f" (U+{ord(odd):04X} {unicodedata.name(odd, 'unnamed')} at {value.index(odd)})"
        if odd is not None
        else ""
    )
    raise ValueError(f"a name is {NAME_DOC}{why}, got {value!r}")


Name = Annotated[str, AfterValidator(operator_name), Field(description=NAME_DOC)]


def repeated_name(names: Sequence[str]) -> tuple[int, int] | None:
    """(i, j): names[j] is names[i] up to case, j > i; None when all differ."""
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        folded = name.casefold()
        if folded in seen:
            return seen[folded], j
        seen[folded] = j
    return None


class Strict(BaseModel):
    """Config models reject unknown fields (a typo must not pass silently),
    values of another type (`true` is not 1, "20" is not 20, 20.0 is not a
    count of cells) and nan/inf."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def ipv4_prefix(v: str) -> str:
    """Canonical 'a.b.c.d/len'; a bare address is a /32."""
    try:
        return str(ipaddress.IPv4Network(v if "/" in v else f"{v}/32", strict=True))
    except ValueError as exc:
        raise ValueError(f"not an IPv4 prefix with host bits clear: {exc}") from None


Prefix = Annotated[str, AfterValidator(ipv4_prefix)]
Mac = Annotated[str, Field(pattern=MAC_PATTERN)]
PortNumber = Annotated[int, Field(ge=0)]


class Route(Strict):
    prefix: Prefix
    port: PortNumber
    src_mac: Mac
    dst_mac: Mac


class SourceBinding(Strict):
    """The IPv4 sources the hosts on one port may send from. A packet from
    this port with any other source is dropped and counted
    (tna/include/source_guard.p4); `0.0.0.0/0` alone leaves the port unchecked.
    Strict: a port written "1" or true is refused, not read as 1."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    port: PortNumber
    prefixes: Annotated[list[Prefix], Field(min_length=1)]


def check_chip(config_chip: str, profile: HwProfile) -> None:
    if profile.chip != config_chip:
        raise ConfigError("chip", f"config is for {config_chip} but the switch is {profile.chip}")


def pipe_of(port: int, profile: HwProfile) -> int:
    """The pipe a port id belongs to: its top bits above the pipe-local port."""
    return port >> (profile.port_id_bits - (profile.pipes - 1).bit_length())


def check_queue_id(field: str, value: int, profile: HwProfile) -> None:
    """`value` is a queue id the chip's queue id field holds."""
    if value > profile.max_queue_id:
        raise ConfigError(
            field, f"queue {value} exceeds {profile.chip}'s max queue id {profile.max_queue_id}"
        )


def check_port(field: str, value: int, profile: HwProfile, front_panel: bool = False) -> None:
    """`value` is a port of the chip; with `front_panel`, one that leads to a
    host or switch: not a recirculation or CPU port (a route there loops or
    hands tenants' traffic to the control plane)."""
    if value > profile.max_port:
        raise ConfigError(field, f"port {value} exceeds {profile.chip}'s {profile.max_port}")
    local = value & ((1 << (profile.port_id_bits - (profile.pipes - 1).bit_length())) - 1)
    if local >= profile.ports_per_pipe:
        raise ConfigError(
            field,
            f"port {value} does not exist: {profile.chip} has ports 0.."
            f"{profile.ports_per_pipe - 1} in each pipe",
        )
    if not front_panel:
        return
    if value in profile.recirculation_ports or value in profile.pktgen_ports:
        raise ConfigError(
            field,
            f"port {value} is {profile.chip}'s recirculation port of pipe "
            f"{pipe_of(value, profile)}, not a front-panel port",
        )
    if value in profile.cpu_eth_ports:
        raise ConfigError(
            field,
            f"port {value} is one of {profile.chip}'s CPU Ethernet ports, not a front-panel port",
        )


def no_repeats(field: str, values: Iterable[object], what: str = "") -> None:
    """Refuse a value given twice, naming the second and where the first was."""
    seen: dict[object, int] = {}
    for i, v in enumerate(values):
        if v in seen:
            raise ConfigError(f"{field}[{i}]{what}", f"{v!r} repeats {field}[{seen[v]}]{what}")
        seen[v] = i


def check_routes(routes: Sequence[Route], profile: HwProfile) -> None:
    """Routes lead to front-panel ports, one route per prefix (the LPM table
    holds one entry per key: a second would silently replace the first)."""
    for i, r in enumerate(routes):
        check_port(f"routes[{i}].port", r.port, profile, front_panel=True)
    no_repeats("routes", (r.prefix for r in routes), ".prefix")


def mac_to_int(text: str) -> int:
    return int(text.replace(":", ""), 16)


def lpm(prefix: str) -> Match:
    net = ipaddress.IPv4Network(prefix)
    return Match(int(net.network_address), prefix_len=net.prefixlen)


def ternary(prefix: str) -> Match:
    net = ipaddress.IPv4Network(prefix)
    return Match(int(net.network_address), mask=int(net.netmask))


def check_port_guards(
    routes: Sequence[Route],
    trusted_ports: list[int],
    source_bindings: list[SourceBinding],
    profile: HwProfile,
) -> None:
    """Routes, trusted ports and source bindings of an AQM-style program
    (front-panel ports, no repeats, a binding on a routed host port)."""
    check_routes(routes, profile)
    for i, p in enumerate(trusted_ports):
        check_port(f"trusted_ports[{i}]", p, profile, front_panel=True)
    no_repeats("trusted_ports", trusted_ports)
    check_source_bindings(
        source_bindings,
        trusted_ports,
        {r.port: f"routes[{i}].port" for i, r in reversed(list(enumerate(routes)))},
        lambda field, port: check_port(field, port, profile, front_panel=True),
    )


def route_writes(routes: Iterable[Route]) -> list[Write]:
    return [
        EntryWrite(
            IPV4_LPM,
            {K_DST_ADDR: lpm(r.prefix)},
            ROUTE,
            {"port": r.port, "src_mac": mac_to_int(r.src_mac), "dst_mac": mac_to_int(r.dst_mac)},
        )
        for r in routes
    ]


def trusted_port_writes(ports: Iterable[int]) -> list[Write]:
    return [EntryWrite(TRUSTED_PORTS, {K_INGRESS_PORT: Match(p)}, TRUSTED) for p in ports]


def source_binding_entries(binding: SourceBinding) -> int:
    """Entries one binding takes: its prefixes and, unless it admits every
    source, the /0 that catches the rest."""
    return len(binding.prefixes) + (0 if ANY_SOURCE in binding.prefixes else 1)


def check_source_bindings(
    bindings: list[SourceBinding],
    trusted_ports: Iterable[int],
    host_ports: Mapping[int, str],
    check_port_field: Callable[[str, int], None],
) -> None:
    """Source bindings are well formed, fit the table, and bind every host
    port. `host_ports` maps each port the config sends hosts' traffic to
    (routes, feedback ports) to the field that says so; a host port that is
    neither trusted nor bound would let its hosts send as anyone."""
    seen_ports: dict[int, int] = {}
    for i, b in enumerate(bindings):
        field = f"source_bindings[{i}]"
        check_port_field(f"{field}.port", b.port)
        if b.port in seen_ports:
            raise ConfigError(
                f"{field}.port", f"port {b.port} repeats source_bindings[{seen_ports[b.port]}].port"
            )
        seen_ports[b.port] = i
        seen_prefixes: dict[str, int] = {}
        for j, prefix in enumerate(b.prefixes):
            if prefix in seen_prefixes:
                raise ConfigError(
                    f"{field}.prefixes[{j}]",
                    f"{prefix} repeats {field}.prefixes[{seen_prefixes[prefix]}]",
                )
            seen_prefixes[prefix] = j
        if ANY_SOURCE in seen_prefixes and len(b.prefixes) > 1:
            raise ConfigError(
                f"{field}.prefixes[{seen_prefixes[ANY_SOURCE]}]",
                f"{ANY_SOURCE} admits every source, so port {b.port}'s other prefixes bind "
                f"nothing: give {ANY_SOURCE} alone (port not checked) or leave it out",
            )
    total = sum(source_binding_entries(b) for b in bindings)
    if total > SOURCE_BINDINGS_SIZE:
        raise ConfigError(
            "source_bindings",
            f"{total} entries (each prefix, plus one per checked port) exceed the "
            f"{SOURCE_BINDINGS_SIZE}-entry source_bindings table",
        )
    trusted = set(trusted_ports)
    for port, field in host_ports.items():
        if port not in trusted and port not in seen_ports:
            raise ConfigError(
                field,
                f"port {port} is a host port (not in trusted_ports) without source_bindings: "
                "its hosts could send with anyone's address; bind the prefixes they use, "
                f"or {ANY_SOURCE} to leave it unchecked",
            )


def source_binding_writes(bindings: Iterable[SourceBinding]) -> list[Write]:
    """Per port: the bound prefixes first, then the /0 that drops the rest,
    so a batch applied in order never drops a bound host's packet."""
    writes: list[Write] = []
    for b in bindings:
        for prefix in b.prefixes:
            writes.append(
                EntryWrite(
                    SOURCE_BINDINGS, {K_INGRESS_PORT: Match(b.port), K_SRC_ADDR: lpm(prefix)}, BOUND
                )
            )
    for b in bindings:
        if ANY_SOURCE not in b.prefixes:
            writes.append(
                EntryWrite(
                    SOURCE_BINDINGS,
                    {K_INGRESS_PORT: Match(b.port), K_SRC_ADDR: lpm(ANY_SOURCE)},
                    SPOOFED_SOURCE,
                )
            )
    return writes


class FeedbackPort(Strict):
    """A port whose attached senders get feedback, and the mirror session that carries it."""

    port: PortNumber
    feedback_session: Annotated[int, Field(ge=1)]


def check_host_feedback(
    ports: Sequence[FeedbackPort],
    routes: Sequence[Route],
    trusted_ports: Sequence[int],
    source_bindings: list[SourceBinding],
    profile: HwProfile,
) -> None:
    """What every program that sends feedback to hosts checks before its own
    fields: routes, trusted ports (any port of the chip: trust only lets
    feedback in), each feedback port and its mirror session, and a source
    binding for every host port. Raises ConfigError naming the field."""
    check_routes(routes, profile)
    for i, p in enumerate(trusted_ports):
        check_port(f"trusted_ports[{i}]", p, profile)
    no_repeats("trusted_ports", trusted_ports)
    for i, ps in enumerate(ports):
        check_port(f"ports[{i}].port", ps.port, profile, front_panel=True)
        if not profile.valid_mirror_session(ps.feedback_session):
            raise ConfigError(
                f"ports[{i}].feedback_session",
                f"mirror session {ps.feedback_session} outside {profile.mirror_session_min}.."
                f"{profile.mirror_session_max} on {profile.chip}",
            )
    # A session shared by two ports would send feedback for a sender on one
    # port out of the other (another tenant's).
    no_repeats("ports", (ps.port for ps in ports), ".port")
    no_repeats("ports", (ps.feedback_session for ps in ports), ".feedback_session")
    host_ports: dict[int, str] = {}
    for i, r in enumerate(routes):
        host_ports.setdefault(r.port, f"routes[{i}].port")
    for i, ps in enumerate(ports):
        host_ports.setdefault(ps.port, f"ports[{i}].port")
    check_source_bindings(
        source_bindings,
        trusted_ports,
        host_ports,
        lambda field, value: check_port(field, value, profile, front_panel=True),
    )


def host_feedback_writes(
    ports: Iterable[FeedbackPort],
    routes: Iterable[Route],
    trusted_ports: Iterable[int],
    source_bindings: Iterable[SourceBinding],
    *,
    mirror_direction: Literal["INGRESS", "EGRESS"],
    truncate_bytes: int,
    session_table: str,
    set_session: str,
    feedback_queue: int = 0,
    feedback_icos: int = 0,
) -> list[Write]:
    """What every program that sends feedback to hosts writes before its own
    tables: each port's mirror session (first, so an entry naming it is live
    as soon as written; its copies wait in `feedback_queue` at iCoS
    `feedback_icos`), routes, the trusted ports and source bindings, then
    the table that sends a packet's feedback back out of the port it came in
    on, where its source is."""
    ports = list(ports)
    writes: list[Write] = [
        MirrorSessionWrite(
            ps.feedback_session,
            ps.port,
            truncate_bytes,
            direction=mirror_direction,
            queue=feedback_queue,
            icos=feedback_icos,
        )
        for ps in ports
    ]
    writes += route_writes(routes)
    writes += trusted_port_writes(trusted_ports)
    writes += source_binding_writes(source_bindings)
    writes += [
        EntryWrite(
            session_table,
            {K_BRIDGED_INGRESS_PORT: Match(ps.port)},
            set_session,
            {"session_id": ps.feedback_session},
        )
        for ps in ports
    ]
    return writes


def by_table(writes: list[Write]) -> list[Write]:
    """Group writes to the same table together (stable), so a backend can send
    each table's writes as one call. An app's writes to different tables do
    not depend on each other's order."""

    fast = cycle_speedups.ENABLED

    def table_of(w: Write) -> str:
        if isinstance(w, EntryWrite):
            return w.table
        # Each register is a table of its own on BF-Runtime: grouped only by
        # kind (the reference), PMQECN's sojourn clears alternated between
        # its two registers and went as one call per cell.
        if fast and isinstance(w, RegisterWrite):
            return w.register
        if isinstance(w, RegisterClear):
            # With the register's cell writes on both paths: a clear and a
            # cell write of one register must keep their order.
            return w.register if fast else "RegisterWrite"
        return type(w).__name__

    if fast:
        # The same order in one pass: each table's writes, in order, where
        # the table first appears.
        groups: dict[str, list[Write]] = {}
        for w in writes:
            groups.setdefault(table_of(w), []).append(w)
        return [w for group in groups.values() for w in group]
    first: dict[str, int] = {}
    for i, w in enumerate(writes):
        first.setdefault(table_of(w), i)
    return sorted(writes, key=lambda w: first[table_of(w)])


def entry_id(w: EntryWrite) -> tuple[object, ...]:
    """What names an entry on the switch: table, key, priority."""
    return (w.table, tuple(sorted(w.key.items(), key=lambda kv: kv[0])), w.priority)


def diff_writes(before: Iterable[Write], after: Iterable[Write]) -> list[Write]:
    """The entry writes that turn `before` into `after`, for one batch:
    deletes of entries `after` no longer has, and the new or changed ones
    (the rest are already on the switch). Non-entry writes are ignored."""
    old = {entry_id(w): w for w in before if isinstance(w, EntryWrite)}
    new = {entry_id(w): w for w in after if isinstance(w, EntryWrite)}
    writes: list[Write] = [
        EntryWrite(w.table, w.key, priority=w.priority, op="delete")
        for k, w in old.items()
        if k not in new
    ]
    writes += [
        w
        for k, w in new.items()
        if k not in old or (old[k].action, old[k].data) != (w.action, w.data)
    ]
    return by_table(writes)


def push_writes(switch: Switch, writes: list[Write]) -> None:
    """Write a whole intended state as one batch, and say so."""
    switch.write(writes)
    log.info("event=pushed writes=%d switch=%s", len(writes), logfmt_value(switch.description))


class IntendedStateApp(ABC):
    """A mechanism's app: it owns the intended switch state and can always
    write all of it again (start-up, `apply`, recovery after a restart)."""

    switch: Switch

    @property
    def profile(self) -> HwProfile:
        return self.switch.profile

    @abstractmethod
    def intended_writes(self) -> list[Write]: ...

    def static_tables(self) -> frozenset[str]:
        """Tables whose intended entries depend on nothing an operator or the
        controller tunes at run time (PMQECN's drain tables: thousands of
        fixed entries). sync.py reads a sample of them to see they are still
        there rather than every entry, and never looks for live values in them."""
        return frozenset()

    def dynamic_writes(self) -> list[Write]:
        """The intended writes outside `static_tables()`: what can carry a
        live value. An app with static tables builds these without them."""
        static = self.static_tables()
        return [
            w
            for w in self.intended_writes()
            if not (isinstance(w, EntryWrite) and w.table in static)
        ]

    # The service's hooks (bfrt_controller/service.py): what the daemon runs
    # when it has connected and brought the switch to the intended state,
    # and every cycle after (returning how many changes it wrote). A program
    # with no periodic step of its own is still watched: the supervisor
    # re-pushes a restarted switch, and each cycle reads back what it holds.
    def service_start(self, now_s: float) -> None:  # noqa: B027 - optional hook
        """The daemon connected and pushed; `now_s` is its clock."""

    def service_cycle(self, now_s: float) -> int:
        """One periodic step; the number of changes written."""
        return 0

    def watchdog_period_s(self) -> float | None:
        """How often the daemon runs service_watchdog, on a timer of its own
        beside the cycle's (P4QCN's PFC watchdog: every detection time / 2);
        None: the program has no such watch, or it is off."""
        return None

    def service_watchdog(self, now_s: float) -> int:
        """One poll of the program's watchdog; the number of changes written."""
        return 0

    def push_all(self) -> None:
        push_writes(self.switch, self.intended_writes())


# The port rows both programs' `status` show, under this section title.
PORTS_SECTION = "ports"
PORT_GUARD_COLUMNS: tuple[tuple[str, str], ...] = (
    ("port", "port"),
    ("trusted", "trusted"),
    ("bound sources", "bound_sources"),
    ("forged drops", "forged_drops"),
    ("spoofed drops", "spoofed_drops"),
)


@dataclass
class QueueChange:
    """One value a `set` changed on one queue, as `tofcc set` prints it."""

    queue: str  # "port/queue", as queue_key writes it
    what: str
    old: object
    new: object
    why: str


def queue_key(port: int, queue: int) -> str:
    """A queue's key in a program's live values and its changes: "port/queue"."""
    return f"{port}/{queue}"


class Guarded(Protocol):
    """What every program config has of the shared guards: its routes, the
    ports it trusts for feedback and the sources it binds to ports."""

    @property
    def routes(self) -> Sequence[Route]: ...
    @property
    def trusted_ports(self) -> Sequence[int]: ...
    @property
    def source_bindings(self) -> Sequence[SourceBinding]: ...


def guarded_ports(cfg: Guarded, more: Iterable[int] = ()) -> list[int]:
    """Every port the config names, in order: its routes', trusted and bound
    ports and `more` (the ports of the program's own sections)."""
    return sorted(
        {r.port for r in cfg.routes}
        | set(cfg.trusted_ports)
        | {b.port for b in cfg.source_bindings}
        | set(more)
    )


def port_guard_rows(
    switch: Switch, cfg: Guarded, more: Iterable[int] = ()
) -> list[dict[str, object]]:
    """port_guard_row of every port guarded_ports names."""
    bindings = {b.port: b.prefixes for b in cfg.source_bindings}
    return [port_guard_row(switch, p, bindings.get(p, [])) for p in guarded_ports(cfg, more)]


def port_guard_row(switch: Switch, port: int, prefixes: Iterable[str]) -> dict[str, object]:
    """A port's trust and source binding as the switch holds them (read back,
    not the intended state), with the drops each guard counted there."""
    trusted = switch.read_entry(TRUSTED_PORTS, {K_INGRESS_PORT: Match(port)})
    bound = []
    for prefix in prefixes:
        e = switch.read_entry(
            SOURCE_BINDINGS, {K_INGRESS_PORT: Match(port), K_SRC_ADDR: lpm(prefix)}
        )
        if e is not None and e.action == BOUND:
            bound.append(prefix)
    return {
        "section": PORTS_SECTION,
        "port": port,
        "trusted": trusted is not None,
        "bound_sources": ", ".join(bound) or None,
        "forged_drops": switch.read_counter(UNTRUSTED_FEEDBACK_DROPS, port)[0],
        "spoofed_drops": switch.read_counter(SPOOFED_SOURCE_DROPS, port)[0],
    }
