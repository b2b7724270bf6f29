# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The shared test-vector format (documented in ptf_tests/README.md, "Vector format").

One YAML file holds vectors for one program. pytest runs them on the
reference model; PTF runs the very same files on tofino-model or hardware.
Loading validates the whole file and names the file, vector and field of
the first thing wrong.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hw_profiles import safe_yaml
from models.switch.headers import FEEDBACK_VERSION

from .values import parse_int_value, parse_prefix

# Where the vectors live in a source checkout.
DEFAULT_VECTOR_ROOT = Path(__file__).resolve().parents[2] / "ptf_tests" / "vectors"


class VectorFormatError(ValueError):
    """A vector file is malformed; the message names file, vector and field."""


IntValue = Annotated[int, BeforeValidator(parse_int_value)]
Port = Annotated[int, Field(ge=0, le=511)]
NonNeg = Annotated[int, Field(ge=0)]
_MAC_TEXT = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")
# Tofino's largest frame (a jumbo frame fits; 2**40 bytes would be built in memory).
MAX_FRAME_BYTES = 16384
# IPv4 options fill at most 40 bytes (IHL 15 words less the 5-word header).
MAX_IPV4_OPTION_BYTES = 40


def _hex_bytes(text: str, limit: int) -> bytes:
    """Bytes of an even-length hex string, at most `limit` of them."""
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"not hex bytes: {text[:40]!r}") from None
    if len(data) > limit:
        raise ValueError(f"{len(data)} bytes, more than {limit}")
    return data


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# A mirror session's port, or a port key, may name the chip's recirculation
# port instead of a number: it differs between chips (hw_profiles), the
# vectors do not.
RECIRCULATION_PORT = "recirculation"


class KeyMatch(Strict):
    value: IntValue
    mask: IntValue | None = None
    prefix_len: Annotated[int, Field(ge=0, le=128)] | None = None
    # The key names the chip's recirculation port (written `recirculation`):
    # the runner puts the target's device port in `value`, and no port
    # mapping moves it.
    recirculation: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, raw: Any) -> Any:
        if raw == RECIRCULATION_PORT:
            return {"value": 0, "recirculation": True}
        if isinstance(raw, str) and "/" in raw:
            value, plen = parse_prefix(raw)
            return {"value": value, "prefix_len": plen}
        if isinstance(raw, int | str) and not isinstance(raw, bool):
            return {"value": raw}
        return raw

    @model_validator(mode="after")
    def _one_kind(self) -> KeyMatch:
        if self.mask is not None and self.prefix_len is not None:
            raise ValueError("give either mask (ternary) or prefix_len (lpm), not both")
        return self


class TableEntrySpec(Strict):
    table: str
    key: dict[str, KeyMatch] = {}
    priority: NonNeg = 0
    action: str
    data: dict[str, IntValue] = {}
    default: bool = False
    # Action data written `recirculation` (the chip's recirculation port, as
    # in a key): the runner puts the target's device port there, and no
    # port mapping moves it.
    recirculation_data: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _recirculation_in_data(cls, raw: Any) -> Any:
        if not isinstance(raw, dict) or not isinstance(raw.get("data"), dict):
            return raw
        named = tuple(n for n, v in raw["data"].items() if v == RECIRCULATION_PORT)
        if not named:
            return raw
        data = {n: (0 if n in named else v) for n, v in raw["data"].items()}
        return {**raw, "data": data, "recirculation_data": named}

    @model_validator(mode="after")
    def _default_has_no_key(self) -> TableEntrySpec:
        if self.default and self.key:
            raise ValueError("a default action entry takes no key")
        return self


# Pipes a switch may run (models/switch/tna.py VALID_PIPES).
PipeCount = Literal[1, 2, 4]


class RegisterSpec(Strict):
    # `register` would shadow a BaseModel attribute; files still say "register".
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    name: str = Field(alias="register")
    index: NonNeg
    value: IntValue
    # The pipe whose copy is checked (a vector of several pipes); None: the
    # pipe the vector's ports are in. A write always goes to every pipe.
    pipe: Annotated[int, Field(ge=0, le=3)] | None = None


class CounterSpec(Strict):
    counter: str
    index: NonNeg
    packets: NonNeg | None = None
    bytes: NonNeg | None = None

    @model_validator(mode="after")
    def _something(self) -> CounterSpec:
        if self.packets is None and self.bytes is None:
            raise ValueError("give packets, bytes or both")
        return self


class MirrorSessionSpec(Strict):
    sid: Annotated[int, Field(ge=1, le=1023)]
    port: Port | Literal["recirculation"]
    max_pkt_len: Annotated[int, Field(ge=0, le=16383)] = 0
    direction: Literal["INGRESS", "EGRESS", "BOTH"] = "EGRESS"


class Setup(Strict):
    tables: list[TableEntrySpec] = []
    registers: list[RegisterSpec] = []
    mirror_sessions: list[MirrorSessionSpec] = []

    @model_validator(mode="after")
    def _writes_every_pipe(self) -> Setup:
        for n, r in enumerate(self.registers):
            if r.pipe is not None:
                raise ValueError(
                    f"registers.{n}.pipe: a setup write goes to every pipe (the controller's)"
                )
        return self


class EthSpec(Strict):
    dst: str = "00:00:00:00:00:00"
    src: str = "00:00:00:00:00:00"
    type: IntValue | None = None

    @field_validator("dst", "src")
    @classmethod
    def _mac(cls, v: str) -> str:
        # Built by scapy, which takes colon MACs only ("0" would fail at send time).
        if not _MAC_TEXT.fullmatch(v):
            raise ValueError(f"expected a MAC like 00:00:00:00:00:01, got {v!r}")
        return v


class Ipv4Spec(Strict):
    src: str
    dst: str
    dscp: Annotated[int, Field(ge=0, le=63)] = 0
    ecn: Annotated[int, Field(ge=0, le=3)] = 0
    ttl: Annotated[int, Field(ge=0, le=255)] = 64
    id: Annotated[int, Field(ge=0, le=0xFFFF)] = 1
    flags: Annotated[int, Field(ge=0, le=7)] = 0
    frag: Annotated[int, Field(ge=0, le=0x1FFF)] = 0
    proto: Annotated[int, Field(ge=0, le=255)] | None = None
    ihl: Annotated[int, Field(ge=5, le=15)] | None = None
    options: str | None = None
    chksum: IntValue | None = None

    @field_validator("src", "dst")
    @classmethod
    def _addr(cls, v: str) -> str:
        # Dotted quads only: scapy builds the packet from the text.
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            raise ValueError(f"expected a dotted IPv4 address, got {v!r}") from None
        return v

    @field_validator("options")
    @classmethod
    def _options(cls, v: str | None) -> str | None:
        if v is not None and len(_hex_bytes(v, MAX_IPV4_OPTION_BYTES)) % 4:
            raise ValueError("IPv4 options fill whole 4-byte words")
        return v


class TcpSpec(Strict):
    sport: Annotated[int, Field(ge=0, le=0xFFFF)]
    dport: Annotated[int, Field(ge=0, le=0xFFFF)]
    flags: str = "A"
    seq: NonNeg = 0
    ack: NonNeg = 0
    window: Annotated[int, Field(ge=0, le=0xFFFF)] = 8192


class UdpSpec(Strict):
    sport: Annotated[int, Field(ge=0, le=0xFFFF)]
    dport: Annotated[int, Field(ge=0, le=0xFFFF)]
    chksum: IntValue | None = None


class FeedbackSpec(Strict):
    version: Annotated[int, Field(ge=0, le=15)] = FEEDBACK_VERSION
    msg_type: Annotated[int, Field(ge=0, le=15)]
    class_id: Annotated[int, Field(ge=0, le=0xFFFF)] = 0
    queue_id: Annotated[int, Field(ge=0, le=255)] = 0
    degree: Annotated[int, Field(ge=0, le=255)] = 0
    flow_protocol: Annotated[int, Field(ge=0, le=255)] = 0
    flow_src_port: Annotated[int, Field(ge=0, le=0xFFFF)] = 0
    rate: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] = 0
    target_rate: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] = 0


class PacketSpec(Strict):
    """A packet by layers (built with scapy) or as raw hex."""

    eth: EthSpec | None = None
    ipv4: Ipv4Spec | None = None
    tcp: TcpSpec | None = None
    udp: UdpSpec | None = None
    feedback: FeedbackSpec | None = None
    payload: str | None = None  # hex
    payload_len: Annotated[int, Field(ge=0, le=MAX_FRAME_BYTES)] | None = None
    hex: str | None = None

    @model_validator(mode="after")
    def _coherent(self) -> PacketSpec:
        if self.hex is not None:
            if any(
                getattr(self, f) is not None
                for f in ("eth", "ipv4", "tcp", "udp", "feedback", "payload", "payload_len")
            ):
                raise ValueError("hex excludes every other field")
            _hex_bytes(self.hex, MAX_FRAME_BYTES)
            return self
        if self.eth is None:
            raise ValueError("eth is required unless hex is given")
        if self.tcp is not None and self.udp is not None:
            raise ValueError("tcp and udp are exclusive")
        if (self.tcp is not None or self.udp is not None) and self.ipv4 is None:
            raise ValueError("tcp/udp need ipv4")
        if self.payload is not None and self.payload_len is not None:
            raise ValueError("payload and payload_len are exclusive")
        if self.payload is not None:
            _hex_bytes(self.payload, MAX_FRAME_BYTES)
        return self


class SendSpec(Strict):
    port: Port
    packet: PacketSpec


class ExpectSpec(Strict):
    port: Port
    packet: PacketSpec
    # Bits the switch may set to anything (p4testgen's "do not care" masks
    # over values it cannot predict, e.g. a timestamp): hex as long as the
    # packet, a 0 bit is ignored. Only with a `hex` packet, whose length is
    # then fixed.
    mask: str | None = None

    @model_validator(mode="after")
    def _mask_fits(self) -> ExpectSpec:
        if self.mask is None:
            return self
        if self.packet.hex is None:
            raise ValueError("mask needs a hex packet")
        mask_bytes = _hex_bytes(self.mask, MAX_FRAME_BYTES)
        packet_bytes = bytes.fromhex(self.packet.hex)
        if len(mask_bytes) != len(packet_bytes):
            raise ValueError(f"mask has {len(mask_bytes)} bytes, the packet {len(packet_bytes)}")
        return self


class QueueSpec(Strict):
    """Queue state the egress pipeline of `port` sees (through the test hook)."""

    port: Port
    depth_cells: NonNeg = 0
    sojourn_ns: NonNeg = 0


class EntryKeySpec(Strict):
    """An entry to delete: its table and key."""

    table: str
    key: dict[str, KeyMatch] = {}


class WriteSpec(Strict):
    """A controller's batch between two steps (a live change: a queue's
    mechanism switched, its state cleared): the entries deleted, then those
    added, then the registers written, all before the step's packets."""

    delete: list[EntryKeySpec] = []
    tables: list[TableEntrySpec] = []
    registers: list[RegisterSpec] = []


class Step(Strict):
    # Applied before this step's packets are sent.
    write: WriteSpec | None = None
    send: SendSpec
    # Switch clock (ns since the vector started) when this step's packets are
    # sent; omitted = wherever the clock is. Only targets with a clock the
    # runner can set (the model) run such vectors.
    time_ns: NonNeg | None = None
    repeat: Annotated[int, Field(ge=1, le=10000)] = 1
    queue: list[QueueSpec] = []
    expect: list[ExpectSpec]
    registers: list[RegisterSpec] = []
    counters: list[CounterSpec] = []


class Vector(Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]
    description: str
    # True: tofino-model cannot replay this vector (e.g. it sets the clock
    # with time_ns); PTF modules leave it out, the model runs it.
    model_only: bool = False
    # The pipes the switch runs for this vector (ports may then be in any
    # of them, pipe p's port n being p * 128 + n). PTF moves every port into
    # one pipe, so a vector of several pipes is model_only.
    pipes: PipeCount = 1
    setup: Setup = Setup()
    steps: Annotated[list[Step], Field(min_length=1)]
    registers: list[RegisterSpec] = []
    counters: list[CounterSpec] = []

    @model_validator(mode="after")
    def _pipes_model_only(self) -> Vector:
        if self.pipes > 1 and not self.model_only:
            raise ValueError(f"pipes {self.pipes}: a vector of several pipes is model_only")
        last_pipe = max(
            (
                r.pipe
                for r in [*self.registers, *(r for s in self.steps for r in s.registers)]
                if r.pipe is not None
            ),
            default=0,
        )
        if last_pipe >= self.pipes:
            raise ValueError(
                f"a register check names pipe {last_pipe}; the vector runs {self.pipes}"
            )
        return self

    @model_validator(mode="after")
    def _clock_only_forward(self) -> Vector:
        last = 0
        for n, step in enumerate(self.steps):
            if step.time_ns is not None:
                if step.time_ns < last:
                    raise ValueError(f"steps.{n}.time_ns {step.time_ns} is before {last}")
                last = step.time_ns
        return self

    @property
    def uses_clock(self) -> bool:
        return any(step.time_ns is not None for step in self.steps)


class VectorFile(Strict):
    program: str
    description: str = ""
    # A file for one chip only (p4testgen's output, generated per chip);
    # None: every chip.
    chip: Literal["tofino", "tofino2"] | None = None
    # "vector": ports count from pipe 0's first front-panel port and a port
    # mapper moves them to the chip's device ports (ptf_tests/common/ports.py);
    # "device": they already are the chip's device ports (p4testgen chose them
    # from --port-ranges) and nothing may move them.
    ports: Literal["vector", "device"] = "vector"
    setup: Setup = Setup()
    vectors: Annotated[list[Vector], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_names(self) -> VectorFile:
        seen: set[str] = set()
        for v in self.vectors:
            if v.name in seen:
                raise ValueError(f"duplicate vector name '{v.name}'")
            seen.add(v.name)
        return self


def _describe(raw: Any, loc: tuple[int | str, ...]) -> str:
    """'vector <name>: field a.b.c' from a pydantic error location."""
    if len(loc) >= 2 and loc[0] == "vectors" and isinstance(loc[1], int):
        name = f"#{loc[1]}"
        try:
            candidate = raw["vectors"][loc[1]].get("name")
            if isinstance(candidate, str):
                name = f"'{candidate}'"
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
        rest = ".".join(str(p) for p in loc[2:]) or "(the vector)"
        return f"vector {name}: field {rest}"
    return f"field {'.'.join(str(p) for p in loc) or '(top level)'}"


def parse_vector_file(raw: Any, source: str) -> VectorFile:
    # Top-level keys starting with "x-" hold YAML anchors (shared packets)
    # and are not part of the format.
    if isinstance(raw, dict):
        raw = {k: v for k, v in raw.items() if not (isinstance(k, str) and k.startswith("x-"))}
    try:
        return VectorFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _describe(raw, tuple(err["loc"]))
        raise VectorFormatError(f"{source}: {where}: {err['msg']}") from None


def load_vector_file(path: str | Path) -> VectorFile:
    path = Path(path)
    try:
        raw = safe_yaml.load_file(path, hex_ints=True)  # masks are bit patterns
    except safe_yaml.YamlFileError as exc:
        raise VectorFormatError(str(exc)) from None
    return parse_vector_file(raw, str(path))


def vector_files(root: str | Path, program: str | None = None) -> list[Path]:
    """Every vector file under `root` (ptf_tests/vectors), optionally for one program."""
    root = Path(root)
    pattern = f"{program}/*.yaml" if program else "*/*.yaml"
    return sorted(root.glob(pattern))


def generated_files(
    root: str | Path, program: str | None = None, chip: str | None = None
) -> list[Path]:
    """p4testgen's files, <program>/generated/<chip>/p4testgen.yaml
    (scripts/testgen.py), optionally for one program and one chip."""
    pattern = f"{program or '*'}/generated/{chip or '*'}/p4testgen.yaml"
    return sorted(Path(root).glob(pattern))


def known_differences(generated: str | Path) -> dict[str, str]:
    """{vector name: why the model does not reproduce it} from the
    known_differences.yaml beside a generated file ({} if there is none)."""
    side = Path(generated).parent / "known_differences.yaml"
    if not side.is_file():
        return {}
    try:
        raw = safe_yaml.load_file(side) or {}
    except safe_yaml.YamlFileError as exc:
        raise VectorFormatError(str(exc)) from None
    if not isinstance(raw, dict):
        raise VectorFormatError(f"{side}: expected {{vector name: reason}}")
    return {str(k): str(v) for k, v in raw.items()}
