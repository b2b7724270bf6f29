# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP configuration: what an operator writes, validated before anything is sent.

Thresholds are in the paper's unit, packets (`k_packets`, `k_port_packets`),
and become cells through `packet_bytes` and the chip's cell size. Structure
and types are checked by pydantic, chip limits by `check_against`; every
error names its field and nothing is written when any field is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from hw_profiles import HwProfile
from models.dadctcp_thresholds import TICK_NS
from models.switch.dadctcp import DADCTCP_QUEUE_SLOTS

from ..common import (
    PortNumber,
    Route,
    SourceBinding,
    Strict,
    check_port,
    check_queue_id,
    check_routes,
    check_source_bindings,
    cycle_interval,
    no_repeats,
)
from ..errors import ConfigError
from ..validation import load_yaml, parse_on_chip

Mode = Literal["dadctcp", "dctcp"]
MODES: tuple[Mode, ...] = ("dadctcp", "dctcp")
# Algorithm 2's interval: the paper gives none; a control loop of the
# controller's usual pace.
DEFAULT_INTERVAL_S = 0.1
# A queue whose latest departure is older than this, against the freshest
# departure on the switch, holds nothing (Algorithm 2 reads it as idle). It
# must exceed the longest gap between two departures of a queue that holds
# packets: about queues x MTU / port rate under round robin (6 x 1500 B at
# 100 Mb/s: 0.72 ms; at 10 Gb/s: 7.2 us).
DEFAULT_IDLE_AGE_US = 2000.0
# The departure stamps count the clock's ticks: an idle age below one tick
# would be written as one tick (what the switch can tell apart).
MIN_IDLE_AGE_US = TICK_NS / 1000


class QueueSpec(Strict):
    queue: Annotated[int, Field(ge=0)]
    # K1 (DA-DCTCP) or K (DCTCP) before any reallocation, in packets.
    k_packets: Annotated[int, Field(ge=1)]


class DscpQueue(Strict):
    """Packets with this DSCP take this egress queue (the rest: queue 0)."""

    dscp: Annotated[int, Field(ge=0, le=63)]
    queue: Annotated[int, Field(ge=0)]


class PortSpec(Strict):
    """An egress port whose queues share K_port (Eq. 11a)."""

    port: PortNumber
    k_port_packets: Annotated[int, Field(ge=1)]
    queues: Annotated[list[QueueSpec], Field(min_length=1)]
    # Drop packets that would be marked but cannot carry CE (else leave them).
    drop_not_ect: bool = False


class DadctcpConfig(Strict):
    program: Literal["dadctcp"] = "dadctcp"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    trusted_ports: list[PortNumber] = []
    source_bindings: list[SourceBinding] = []
    # dadctcp: K1, K2 = 2 K1 and the slope, thresholds moved by Algorithm 2;
    # dctcp: mark when q > K, thresholds fixed (the paper's baseline).
    mode: Mode = "dadctcp"
    packet_bytes: Annotated[int, Field(ge=64, le=9216)] = 1500
    interval_s: Annotated[float, cycle_interval(60)] = DEFAULT_INTERVAL_S
    idle_age_us: Annotated[float, Field(ge=MIN_IDLE_AGE_US, le=60e6)] = DEFAULT_IDLE_AGE_US
    dscp_queues: list[DscpQueue] = []
    ports: Annotated[list[PortSpec], Field(min_length=1)]

    def port_index(self, port: int) -> int:
        for i, p in enumerate(self.ports):
            if p.port == port:
                return i
        known = ", ".join(str(p.port) for p in self.ports)
        raise ConfigError("port", f"no DA-DCTCP port {port} (known: {known})")


def check_k_port(field: str, k_port_packets: int, packet_bytes: int, profile: HwProfile) -> None:
    """K2 = 2 K1 of a port's largest possible K1 (all of K_port) must be a
    depth the chip can report."""
    k2_cells = 2 * k_port_packets * profile.bytes_to_cells(packet_bytes)
    if k2_cells > profile.max_qdepth_cells:
        raise ConfigError(
            field,
            f"{k_port_packets} packets of {packet_bytes} B give K2 = {k2_cells} cells, beyond "
            f"the {profile.max_qdepth_cells} cells {profile.chip}'s queue depth can report "
            "(is it in cells?)",
        )


def check_port_spec(field: str, p: PortSpec, packet_bytes: int, profile: HwProfile) -> None:
    check_port(f"{field}.port", p.port, profile, front_panel=True)
    check_k_port(f"{field}.k_port_packets", p.k_port_packets, packet_bytes, profile)
    for j, q in enumerate(p.queues):
        check_queue_id(f"{field}.queues[{j}].queue", q.queue, profile)
    no_repeats(f"{field}.queues", (q.queue for q in p.queues), " queue")
    total = sum(q.k_packets for q in p.queues)
    if total != p.k_port_packets:
        raise ConfigError(
            f"{field}.queues",
            f"k_packets sum to {total}, not k_port_packets {p.k_port_packets} (Eq. 11a: the "
            "queues of a port share K_port)",
        )


def check_against(cfg: DadctcpConfig, profile: HwProfile) -> None:
    """Chip limits; raises ConfigError naming the first field out of range."""
    check_routes(cfg.routes, profile)
    for i, port in enumerate(cfg.trusted_ports):
        check_port(f"trusted_ports[{i}]", port, profile)
    host_ports = {
        r.port: f"routes[{i}].port"
        for i, r in reversed(list(enumerate(cfg.routes)))
        if r.port not in cfg.trusted_ports
    }
    check_source_bindings(
        cfg.source_bindings,
        cfg.trusted_ports,
        host_ports,
        lambda field, port: check_port(field, port, profile),
    )
    for i, p in enumerate(cfg.ports):
        check_port_spec(f"ports[{i}]", p, cfg.packet_bytes, profile)
    no_repeats("ports", (p.port for p in cfg.ports), " port")
    for i, d in enumerate(cfg.dscp_queues):
        check_queue_id(f"dscp_queues[{i}].queue", d.queue, profile)
    no_repeats("dscp_queues", (d.dscp for d in cfg.dscp_queues), ".dscp")
    slots = sum(len(p.queues) for p in cfg.ports)
    if slots > DADCTCP_QUEUE_SLOTS:
        raise ConfigError(
            "ports", f"{slots} queues exceed the program's {DADCTCP_QUEUE_SLOTS} queue slots"
        )


def parse_config(raw: object, source: str = "") -> DadctcpConfig:
    return parse_on_chip(DadctcpConfig, raw, source, check_against)


def load_config(path: str | Path) -> DadctcpConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "dadctcp.yaml"
