# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Chip facts as data.

Every cell size, queue count or field width used anywhere in tofino-cc comes
from one of the YAML files beside this module, loaded and validated here once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from . import safe_yaml

PROFILE_DIR = Path(__file__).resolve().parent
KNOWN_CHIPS = ("tofino", "tofino2")


class ProfileError(ValueError):
    """A hardware profile file is malformed; the message names the file and key."""


@dataclass(frozen=True)
class HwProfile:
    chip: str
    p4_target: str
    p4_arch: str
    mau_stages: int
    pipes: int
    ports_per_pipe: int
    port_id_bits: int
    cell_bytes: int
    buffer_cells: int
    queue_id_bits: int
    queues_per_port_group: int
    ports_per_port_group: int
    min_queues_per_port: int
    enq_qdepth_bits: int
    deq_timedelta_bits: int
    mirror_session_min: int
    mirror_session_max: int
    mirror_header_max_bytes: int
    bridged_metadata_max_bytes: int
    recirculation_ports: tuple[int, ...]
    # What one pipe's recirculation port carries, Gb/s (its recirculation budget).
    recirculation_port_gbps: int
    pktgen_ports: tuple[int, ...]
    max_port_gbps: int
    capacity_gbps: int  # switching capacity: ports at a speed = capacity / speed
    front_panel_port_min: int  # first front-panel device port of pipe 0
    cpu_eth_ports: tuple[int, ...]
    front_panel_ports_per_pipe: int

    @property
    def max_queue_id(self) -> int:
        return (1 << self.queue_id_bits) - 1

    @property
    def max_qdepth_cells(self) -> int:
        return (1 << self.enq_qdepth_bits) - 1

    @property
    def max_timedelta_ns(self) -> int:
        return (1 << self.deq_timedelta_bits) - 1

    @property
    def max_port(self) -> int:
        return (1 << self.port_id_bits) - 1

    def bytes_to_cells(self, nbytes: int) -> int:
        """Cells a packet of `nbytes` occupies in the buffer (partial cells count whole)."""
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes}")
        return math.ceil(nbytes / self.cell_bytes)

    def cells_to_bytes(self, cells: int) -> int:
        return cells * self.cell_bytes

    def front_panel_port(self, n: int) -> int:
        """The device port of the n-th front-panel port of pipe 0 (n from 0).

        Test vectors number ports this way, so the same file runs on both chips:
        port 1 is device port 1 on Tofino and 9 on Tofino2."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"front-panel port index must be a non-negative integer, got {n!r}")
        port = self.front_panel_port_min + n
        if port > self.max_port:
            raise ValueError(f"front-panel port {n} is device port {port}, beyond {self.max_port}")
        return port

    def front_panel_ports(self) -> list[int]:
        """Every front-panel device port, pipe by pipe: what a switch with
        many links numbers its ports from (evaluation/topology.py)."""
        local_bits = self.port_id_bits - (self.pipes - 1).bit_length()
        first = self.front_panel_port_min
        return [
            (pipe << local_bits) + first + k
            for pipe in range(self.pipes)
            for k in range(self.front_panel_ports_per_pipe)
        ]

    def has_port(self, port: int) -> bool:
        """Whether device port `port` exists: a pipe the chip has and, within
        it, one of its ports_per_pipe. The 9-bit port field reaches ports no
        pipe has (511 is pipe 3's port 127); the traffic manager drops a
        packet sent to one."""
        local_bits = self.port_id_bits - (self.pipes - 1).bit_length()
        pipe, local = port >> local_bits, port & ((1 << local_bits) - 1)
        return port >= 0 and pipe < self.pipes and local < self.ports_per_pipe

    def valid_mirror_session(self, sid: int) -> bool:
        return self.mirror_session_min <= sid <= self.mirror_session_max


_INT_LIST_KEYS = {"recirculation_ports", "pktgen_ports", "cpu_eth_ports"}
# Integers where 0 is a real value (a port number), not a missing size.
_ZERO_OK_KEYS = {"front_panel_port_min"}
_STR_KEYS = {"chip", "p4_target", "p4_arch"}
# Upper bounds: far above any Tofino, low enough that arithmetic on them stays
# cheap (`1 << port_id_bits` with 2**40 bits exhausts memory).
_MAX_BITS = 32
_BIT_KEYS = {"port_id_bits", "queue_id_bits", "enq_qdepth_bits", "deq_timedelta_bits"}
_MAX_VALUE = {
    "pipes": 16,
    "mau_stages": 64,
    "cell_bytes": 4096,
    "max_port_gbps": 10_000,
    "recirculation_port_gbps": 10_000,
    "capacity_gbps": 1_000_000,
}
_MAX_INT = 1 << 32


def parse_profile(raw: Any, source: str) -> HwProfile:
    """Validate a decoded YAML mapping; `source` names the file in errors."""
    if not isinstance(raw, dict):
        raise ProfileError(f"{source}: top level must be a mapping, got {type(raw).__name__}")
    expected = [f.name for f in fields(HwProfile)]
    for key in raw:
        if not isinstance(key, str):
            raise ProfileError(f"{source}: key {key!r} must be a string")
    unknown = sorted(set(raw) - set(expected))
    if unknown:
        raise ProfileError(f"{source}: unknown key '{unknown[0]}'")
    values: dict[str, Any] = {}
    for key in expected:
        if key not in raw:
            raise ProfileError(f"{source}: missing key '{key}'")
        value = raw[key]
        if key in _STR_KEYS:
            if not isinstance(value, str) or not value:
                raise ProfileError(f"{source}: key '{key}' must be a non-empty string")
        elif key in _INT_LIST_KEYS:
            if not isinstance(value, list) or not value:
                raise ProfileError(f"{source}: key '{key}' must be a non-empty list of ports")
            for item in value:
                if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                    raise ProfileError(
                        f"{source}: key '{key}' must hold non-negative integers, got {item!r}"
                    )
            value = tuple(value)
        else:
            # bool is an int subclass in Python; `true` is never a valid size.
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProfileError(
                    f"{source}: key '{key}' must be an integer, got {type(value).__name__}"
                )
            if value < 0 or (value == 0 and key not in _ZERO_OK_KEYS):
                raise ProfileError(f"{source}: key '{key}' must be positive, got {value}")
            limit = _MAX_BITS if key in _BIT_KEYS else _MAX_VALUE.get(key, _MAX_INT)
            if value > limit:
                raise ProfileError(f"{source}: key '{key}' must be at most {limit}, got {value}")
        values[key] = value
    profile = HwProfile(**values)
    if profile.chip not in KNOWN_CHIPS:
        raise ProfileError(f"{source}: key 'chip' must be one of {KNOWN_CHIPS}")
    if profile.mirror_session_min > profile.mirror_session_max:
        raise ProfileError(f"{source}: key 'mirror_session_min' exceeds 'mirror_session_max'")
    for key in _INT_LIST_KEYS:
        for port in getattr(profile, key):
            if port > profile.max_port:
                raise ProfileError(
                    f"{source}: key '{key}' port {port} exceeds the {profile.port_id_bits}-bit "
                    "port id"
                )
    _cross_check(profile, source)
    return profile


def _cross_check(p: HwProfile, source: str) -> None:
    """Relations between keys that the code relies on (port ids split into
    pipe and local port; one recirculation port per pipe, in that pipe)."""
    if p.pipes & (p.pipes - 1):
        raise ProfileError(f"{source}: key 'pipes' must be a power of two, got {p.pipes}")
    local_bits = p.port_id_bits - (p.pipes - 1).bit_length()
    if local_bits < 1 or p.ports_per_pipe > 1 << local_bits:
        raise ProfileError(
            f"{source}: key 'ports_per_pipe' {p.ports_per_pipe} does not fit the "
            f"{p.port_id_bits}-bit port id beside {p.pipes} pipes"
        )
    if p.queues_per_port_group > 1 << p.queue_id_bits:
        raise ProfileError(
            f"{source}: key 'queues_per_port_group' {p.queues_per_port_group} exceeds the "
            f"{p.queue_id_bits}-bit queue id"
        )
    if p.capacity_gbps < p.max_port_gbps:
        raise ProfileError(
            f"{source}: key 'capacity_gbps' {p.capacity_gbps} is below one port at "
            f"max_port_gbps {p.max_port_gbps}"
        )
    if p.front_panel_port_min >= p.ports_per_pipe:
        raise ProfileError(
            f"{source}: key 'front_panel_port_min' {p.front_panel_port_min} is not a port of "
            f"pipe 0 (ports_per_pipe {p.ports_per_pipe})"
        )
    if p.front_panel_port_min + p.front_panel_ports_per_pipe > p.ports_per_pipe:
        raise ProfileError(
            f"{source}: key 'front_panel_ports_per_pipe' {p.front_panel_ports_per_pipe} from "
            f"port {p.front_panel_port_min} runs past the pipe's {p.ports_per_pipe} ports"
        )
    for key in ("recirculation_ports", "pktgen_ports"):
        ports = getattr(p, key)
        if len(ports) != p.pipes:
            raise ProfileError(
                f"{source}: key '{key}' must name one port per pipe ({p.pipes}), got {len(ports)}"
            )
        for pipe, port in enumerate(ports):
            if port >> local_bits != pipe or port & ((1 << local_bits) - 1) >= p.ports_per_pipe:
                raise ProfileError(
                    f"{source}: key '{key}' entry {pipe} (port {port}) is not a port of pipe {pipe}"
                )


def load_profile_file(path: str | Path) -> HwProfile:
    path = Path(path)
    try:
        raw = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ProfileError(str(exc)) from None
    profile = parse_profile(raw, str(path))
    # tofino2.yaml holding `chip: tofino` would give one chip the other's facts.
    if path.stem in KNOWN_CHIPS and profile.chip != path.stem:
        raise ProfileError(f"{path}: key 'chip' is '{profile.chip}' but the file is {path.name}")
    return profile


@functools.cache
def load_profile(chip: str = "tofino") -> HwProfile:
    """The embedded profile for `chip` ('tofino' or 'tofino2')."""
    if chip not in KNOWN_CHIPS:
        raise ProfileError(f"unknown chip '{chip}'; choose one of {KNOWN_CHIPS}")
    return load_profile_file(PROFILE_DIR / f"{chip}.yaml")


__all__ = [
    "KNOWN_CHIPS",
    "HwProfile",
    "ProfileError",
    "load_profile",
    "load_profile_file",
    "parse_profile",
]
