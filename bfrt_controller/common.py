"""What every program's controller shares, because every program shares the
includes it configures (tna/include: routing and the trusted-port check).

Config building blocks, the writes for routing and trust, and the batch
ordering live here once; program modules add only what is theirs.
"""

from __future__ import annotations

import ipaddress
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from hw_profiles import HwProfile
from models.switch.core import Match

from .errors import ConfigError
from .switch import EntryWrite, Switch, Write

log = logging.getLogger("tofcc")

# Control-plane names of the shared includes (forwarding.p4, trust.p4), the
# same in every program.
IPV4_LPM = "SwitchIngress.forward.ipv4_lpm"
ROUTE = "SwitchIngress.forward.route"
TRUSTED_PORTS = "SwitchIngress.trust.trusted_ports"
TRUSTED = "SwitchIngress.trust.trusted"
UNTRUSTED_FEEDBACK_DROPS = "SwitchIngress.trust.untrusted_feedback_drops"
K_DST_ADDR = "hdr.ipv4.dst_addr"
K_INGRESS_PORT = "ig_intr_md.ingress_port"

MAC_PATTERN = r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$"


class Strict(BaseModel):
    """Config models reject unknown fields (a typo must not pass silently),
    values of another type (`true` is not 1, "20" is not 20, 20.0 is not a
    count of cells) and nan/inf."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def as_tuple(value: object) -> object:
    """YAML and JSON have lists only; strict mode takes a tuple field from a tuple."""
    return tuple(value) if isinstance(value, list) else value


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


def check_chip(config_chip: str, profile: HwProfile) -> None:
    if profile.chip != config_chip:
        raise ConfigError("chip", f"config is for {config_chip} but the switch is {profile.chip}")


def pipe_of(port: int, profile: HwProfile) -> int:
    """The pipe a port id belongs to: its top bits above the pipe-local port."""
    return port >> (profile.port_id_bits - (profile.pipes - 1).bit_length())


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


def check_routes(routes: list[Route], profile: HwProfile) -> None:
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


def by_table(writes: list[Write]) -> list[Write]:
    """Group writes to the same table together (stable), so a backend can send
    each table's writes as one call. An app's writes to different tables do
    not depend on each other's order."""

    def table_of(w: Write) -> str:
        return w.table if isinstance(w, EntryWrite) else type(w).__name__

    first: dict[str, int] = {}
    for i, w in enumerate(writes):
        first.setdefault(table_of(w), i)
    return sorted(writes, key=lambda w: first[table_of(w)])


class IntendedStateApp(ABC):
    """A mechanism's app: it owns the intended switch state and can always
    write all of it again (start-up, `apply`, recovery after a restart)."""

    switch: Switch

    @property
    def profile(self) -> HwProfile:
        return self.switch.profile

    @abstractmethod
    def intended_writes(self) -> list[Write]: ...

    def push_all(self) -> None:
        writes = self.intended_writes()
        self.switch.write(writes)
        log.info("pushed intended state: %d writes to %s", len(writes), self.switch.description)
