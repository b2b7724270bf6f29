# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Chip facts as data.

Every cell size, queue count or field width used anywhere in tofino-cc comes
from one of the YAML files beside this module, loaded and validated here once.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from . import safe_yaml

PROFILE_DIR = Path(__file__).resolve().parent
Chip = Literal["tofino", "tofino2"]
KNOWN_CHIPS: tuple[str, ...] = get_args(Chip)


class ProfileError(ValueError):
    """A hardware profile file is malformed; the message names the file and key."""


def as_tuple(value: object) -> object:
    """YAML and JSON have lists only; strict mode takes a tuple field from a
    tuple. (A BeforeValidator for every strict model's tuple fields.)"""
    return tuple(value) if isinstance(value, list) else value


# Upper bounds: far above any Tofino, low enough that arithmetic on them stays
# cheap (`1 << port_id_bits` with 2**40 bits exhausts memory).
_MAX_INT = 1 << 32
Count = Annotated[int, Field(gt=0, le=_MAX_INT)]
Bits = Annotated[int, Field(gt=0, le=32)]
# A port number, where 0 is a real value, not a missing size.
Port = Annotated[int, Field(ge=0, le=_MAX_INT)]
Ports = Annotated[tuple[Port, ...], BeforeValidator(as_tuple), Field(min_length=1)]
Name = Annotated[str, Field(min_length=1)]


class ProfileModel(BaseModel):
    """Profile files reject unknown keys and values of another type (`true`
    is not 1, "80" is not 80), as the controller's config models do."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class HwProfile(ProfileModel):
    chip: Chip
    p4_target: Name
    p4_arch: Name
    mau_stages: Annotated[int, Field(gt=0, le=64)]
    pipes: Annotated[int, Field(gt=0, le=16)]
    ports_per_pipe: Count
    port_id_bits: Bits
    cell_bytes: Annotated[int, Field(gt=0, le=4096)]
    buffer_cells: Count
    queue_id_bits: Bits
    queues_per_port_group: Count
    ports_per_port_group: Count
    min_queues_per_port: Count
    enq_qdepth_bits: Bits
    deq_timedelta_bits: Bits
    mirror_session_min: Count
    mirror_session_max: Count
    mirror_header_max_bytes: Count
    bridged_metadata_max_bytes: Count
    recirculation_ports: Ports
    # What one pipe's recirculation port carries, Gb/s (its recirculation budget).
    recirculation_port_gbps: Annotated[int, Field(gt=0, le=10_000)]
    pktgen_ports: Ports
    max_port_gbps: Annotated[int, Field(gt=0, le=10_000)]
    # Switching capacity: ports at a speed = capacity / speed.
    capacity_gbps: Annotated[int, Field(gt=0, le=1_000_000)]
    front_panel_port_min: Port  # first front-panel device port of pipe 0
    cpu_eth_ports: Ports
    front_panel_ports_per_pipe: Count

    @model_validator(mode="after")
    def _relations(self) -> HwProfile:
        _cross_check(self)
        return self

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


def _cross_check(p: HwProfile) -> None:
    """Relations between keys that the code relies on (port ids split into
    pipe and local port; one recirculation port per pipe, in that pipe).
    Each message names its key: pydantic gives a model's own check no field."""
    if p.mirror_session_min > p.mirror_session_max:
        raise ValueError("key 'mirror_session_min' exceeds 'mirror_session_max'")
    for key in ("recirculation_ports", "pktgen_ports", "cpu_eth_ports"):
        for port in getattr(p, key):
            if port > p.max_port:
                raise ValueError(
                    f"key '{key}' port {port} exceeds the {p.port_id_bits}-bit port id"
                )
    if p.pipes & (p.pipes - 1):
        raise ValueError(f"key 'pipes' must be a power of two, got {p.pipes}")
    local_bits = p.port_id_bits - (p.pipes - 1).bit_length()
    if local_bits < 1 or p.ports_per_pipe > 1 << local_bits:
        raise ValueError(
            f"key 'ports_per_pipe' {p.ports_per_pipe} does not fit the "
            f"{p.port_id_bits}-bit port id beside {p.pipes} pipes"
        )
    if p.queues_per_port_group > 1 << p.queue_id_bits:
        raise ValueError(
            f"key 'queues_per_port_group' {p.queues_per_port_group} exceeds the "
            f"{p.queue_id_bits}-bit queue id"
        )
    if p.capacity_gbps < p.max_port_gbps:
        raise ValueError(
            f"key 'capacity_gbps' {p.capacity_gbps} is below one port at "
            f"max_port_gbps {p.max_port_gbps}"
        )
    if p.front_panel_port_min >= p.ports_per_pipe:
        raise ValueError(
            f"key 'front_panel_port_min' {p.front_panel_port_min} is not a port of "
            f"pipe 0 (ports_per_pipe {p.ports_per_pipe})"
        )
    if p.front_panel_port_min + p.front_panel_ports_per_pipe > p.ports_per_pipe:
        raise ValueError(
            f"key 'front_panel_ports_per_pipe' {p.front_panel_ports_per_pipe} from "
            f"port {p.front_panel_port_min} runs past the pipe's {p.ports_per_pipe} ports"
        )
    for key in ("recirculation_ports", "pktgen_ports"):
        ports = getattr(p, key)
        if len(ports) != p.pipes:
            raise ValueError(
                f"key '{key}' must name one port per pipe ({p.pipes}), got {len(ports)}"
            )
        for pipe, port in enumerate(ports):
            if port >> local_bits != pipe or port & ((1 << local_bits) - 1) >= p.ports_per_pipe:
                raise ValueError(
                    f"key '{key}' entry {pipe} (port {port}) is not a port of pipe {pipe}"
                )


M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], raw: Any, source: str) -> M:
    """`raw` as `model`, or ProfileError naming `source` and the key, in one
    line: pydantic's first error in the words these files have always used
    ("missing key 'x'", "key 'x' must be ...")."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ProfileError(f"{source}: {_reason(_first(exc.errors()))}") from None


def _first(errors: list[ErrorDetails]) -> ErrorDetails:
    """A key that is not a string, then an unknown key, then the first field
    in order: a misspelt key is reported as unknown, not as the key missing."""
    for kind in ("invalid_key", "extra_forbidden"):
        for err in errors:
            if err["type"] == kind:
                return err
    return errors[0]


def _key(loc: tuple[int | str, ...]) -> str:
    """'dev_ports' entry 3, 'connector_speeds' entry 0 'speeds', ..."""
    out = f"'{loc[0]}'"
    for part in loc[1:]:
        out += f" entry {part}" if isinstance(part, int) else f" '{part}'"
    return out


# pydantic's error kinds in the words profile files have always used: {key}
# is the key's path, {got} the value, {type} its type's name, the rest
# pydantic's context (gt, le, expected). A kind not here keeps pydantic's words.
_WORDS = {
    "missing": "missing key {key}",
    "extra_forbidden": "unknown key {key}",
    "int_type": "key {key} must be an integer, got {type}",
    "int_parsing": "key {key} must be an integer, got {type}",
    "greater_than": "key {key} must be above {gt}, got {got}",
    "greater_than_equal": "key {key} must be at least {ge}, got {got}",
    "less_than_equal": "key {key} must be at most {le}, got {got}",
    "literal_error": "key {key} must be one of {expected}, got {got!r}",
    "string_type": "key {key} must be a non-empty string",
    "string_too_short": "key {key} must be a non-empty string",
    "tuple_type": "key {key} must be a list",
    "list_type": "key {key} must be a list",
    "too_short": "key {key} must be a non-empty list",
    "model_type": "key {key} must be a mapping",
    "dict_type": "key {key} must be a mapping",
    "value_error": "key {key} {msg}",
}
# The bounds every profile number has, said as people say them.
_WORDS_AT_ZERO = {
    "greater_than": "key {key} must be positive, got {got}",
    "greater_than_equal": "key {key} must not be negative, got {got}",
}


def _reason(err: ErrorDetails) -> str:
    loc, kind, value = tuple(err["loc"]), err["type"], err["input"]
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not loc:
        if kind == "model_type":
            return f"top level must be a mapping, got {type(value).__name__}"
        return msg  # a cross-check: its message names its keys
    if kind == "invalid_key":
        return f"key {loc[-1]!r} must be a string"
    words = _WORDS.get(kind, "key {key}: {msg}")
    if ctx.get("gt", ctx.get("ge")) == 0:
        words = _WORDS_AT_ZERO.get(kind, words)
    return words.format(key=_key(loc), got=value, type=type(value).__name__, msg=msg, **ctx)


def validated_file(model: type[M], path: Path) -> M:
    """The YAML file at `path` as `model`; any fault is one ProfileError line naming the file."""
    try:
        raw = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ProfileError(str(exc)) from None
    return validated(model, raw, str(path))


def parse_profile(raw: Any, source: str) -> HwProfile:
    """Validate a decoded YAML mapping; `source` names the file in errors."""
    return validated(HwProfile, raw, source)


def load_profile_file(path: str | Path) -> HwProfile:
    path = Path(path)
    profile = validated_file(HwProfile, path)
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
    "ProfileModel",
    "as_tuple",
    "load_profile",
    "load_profile_file",
    "parse_profile",
]
