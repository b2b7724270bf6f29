# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Header types of tna/include/headers.p4, bit for bit.

Each header is a dataclass whose fields carry their P4 bit width; `pack` and
`unpack` give the exact wire bytes, so the reference model and the P4 see
the same packets.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Self

from models import speedups

# Constants of tna/include/defines.p4.
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_TOFCC_FEEDBACK = 0x88B6
UDP_PORT_TOFCC_FEEDBACK = 0x4CCF
IP_PROTO_TCP = 6
IP_PROTO_UDP = 17
FEEDBACK_VERSION = 2
FEEDBACK_TYPE_PMQECN_RATE = 1
FEEDBACK_TYPE_BACKPRESSURE = 2
FEEDBACK_TYPE_BACKPRESSURE_CLEAR = 3
FEEDBACK_TYPE_QCN = 4
ECN_NOT_ECT = 0
ECN_CE = 3
PKT_TYPE_BRIDGED = 1
PKT_TYPE_MIRROR_FEEDBACK = 2
MIRROR_TYPE_FEEDBACK = 2
FEEDBACK_TTL = 64
FEEDBACK_IPV4_TOTAL_LEN = 44
FEEDBACK_UDP_LEN = 24


def ipv4_checksum(header: bytes) -> int:
    """RFC 1071 one's-complement sum of `header` (its checksum field zeroed),
    the IPv4 header checksum. The one implementation: the model's Ipv4, the
    evaluation's frames and its ECN marking all call it."""
    if len(header) % 2:
        # An IPv4 header is whole 32-bit words; an odd length is a caller's slip.
        raise ValueError(f"IPv4 header of {len(header)} bytes is not whole 16-bit words")
    # Words unpacked in C: this runs for every packet a model or host builds.
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def bits(width: int) -> Any:
    return field(default=0, metadata={"bits": width})


class _Layout(NamedTuple):
    """A header class's wire format, worked out once instead of per packet."""

    names_widths: tuple[tuple[str, int], ...]
    size_bytes: int
    # Straight-line pack/unpack for this class (the field loop unrolled), made
    # the way dataclasses and collections.namedtuple make their methods.
    pack: Callable[[Any], bytes]
    unpack: Callable[[bytes], Any]


# Per class, not inherited: a subclass with more fields has its own layout.
_LAYOUTS: dict[type, _Layout] = {}


def _layout_of(cls: type[Header]) -> _Layout:
    lay = _LAYOUTS.get(cls)
    if lay is None:
        lay = _LAYOUTS[cls] = _compile_layout(cls)
    return lay


def _compile_layout(cls: type[Header]) -> _Layout:
    names_widths = cls._layout_reference()
    size = cls._size_bytes_reference()
    shift = size * 8
    packed, unpacked, assigned = [], [], []
    for name, width in names_widths:
        shift -= width
        mask = (1 << width) - 1
        packed.append(f"((self.{name} & {mask:#x}) << {shift})")
        unpacked.append(f"(value >> {shift}) & {mask:#x}")
        assigned.append(f"    hdr.{name} = (value >> {shift}) & {mask:#x}\n")
    # The same bytes and the same error as Header._pack/_unpack_reference.
    head = (
        "def pack(self):\n"
        f"    return ({' | '.join(packed) or '0'}).to_bytes({size}, 'big')\n"
        "def unpack(data):\n"
        f"    if len(data) < {size}:\n"
        f"        raise ValueError(f'{cls.__name__} needs {size} bytes, '\n"
        "                         f'packet has {len(data)}')\n"
        f"    value = int.from_bytes(data[:{size}], 'big')\n"
    )
    tail = "    hdr.valid = True\n    return hdr\n"
    # Positional, in field order: every field of a header is an init field.
    source = head + f"    hdr = cls({', '.join(unpacked)})\n" + tail
    scope: dict[str, Any] = {"cls": cls}
    exec(compile(source, f"<{cls.__name__} layout>", "exec"), scope)
    lay = _Layout(names_widths, size, scope["pack"], scope["unpack"])
    # Faster still (issue 48: a third of an unpack, several per packet): the
    # header made without calling __init__ and __post_init__, when a probe
    # shows that gives the same attributes in the same order (a class with
    # its own __init__ or __post_init__ keeps the call).
    fast_source = head + "    hdr = new(cls)\n" + "".join(assigned) + tail
    fast_scope: dict[str, Any] = {"cls": cls, "new": object.__new__}
    exec(compile(fast_source, f"<{cls.__name__} layout>", "exec"), fast_scope)
    probe = bytes((i * 37 + 11) & 0xFF for i in range(size))
    try:
        same = list(vars(fast_scope["unpack"](probe)).items()) == list(
            vars(lay.unpack(probe)).items()
        )
    except Exception:  # a class the bare object does not suit: keep the call
        same = False
    return lay._replace(unpack=fast_scope["unpack"]) if same else lay


class Header:
    """Base of every header: a validity bit plus fixed-width fields.

    Layouts are cached per class (models/speedups.py); the `_reference`
    methods are the original per-call code, kept for the speed benchmark and
    the tests that hold both paths to the same bytes."""

    valid: bool

    def __post_init__(self) -> None:
        self.valid = False

    @classmethod
    def layout(cls) -> tuple[tuple[str, int], ...]:
        if not speedups.ENABLED:
            return cls._layout_reference()
        return _layout_of(cls).names_widths

    @classmethod
    def size_bytes(cls) -> int:
        if not speedups.ENABLED:
            return cls._size_bytes_reference()
        # The cache is read inline here and below: these run several times
        # per packet, and a function call costs as much as the lookup.
        return (_LAYOUTS.get(cls) or _layout_of(cls)).size_bytes

    def pack(self) -> bytes:
        if not speedups.ENABLED:
            return self._pack_reference()
        return (_LAYOUTS.get(type(self)) or _layout_of(type(self))).pack(self)

    @classmethod
    def unpack(cls, data: bytes) -> Self:
        if not speedups.ENABLED:
            return cls._unpack_reference(data)
        hdr: Self = (_LAYOUTS.get(cls) or _layout_of(cls)).unpack(data)
        return hdr

    @classmethod
    def _layout_reference(cls) -> tuple[tuple[str, int], ...]:
        return tuple((f.name, f.metadata["bits"]) for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    @classmethod
    def _size_bytes_reference(cls) -> int:
        total = sum(width for _, width in cls._layout_reference())
        assert total % 8 == 0, f"{cls.__name__} is not byte aligned"
        return total // 8

    def _pack_reference(self) -> bytes:
        value = 0
        for name, width in self._layout_reference():
            value = (value << width) | (getattr(self, name) & ((1 << width) - 1))
        return value.to_bytes(self._size_bytes_reference(), "big")

    @classmethod
    def _unpack_reference(cls, data: bytes) -> Self:
        size = cls._size_bytes_reference()
        if len(data) < size:
            raise ValueError(f"{cls.__name__} needs {size} bytes, packet has {len(data)}")
        value = int.from_bytes(data[:size], "big")
        kwargs: dict[str, int] = {}
        shift = size * 8
        for name, width in cls._layout_reference():
            shift -= width
            kwargs[name] = (value >> shift) & ((1 << width) - 1)
        hdr = cls(**kwargs)
        hdr.valid = True
        return hdr

    def set_valid(self) -> None:
        self.valid = True

    def set_invalid(self) -> None:
        self.valid = False

    def is_valid(self) -> bool:
        return self.valid


@dataclass
class Ethernet(Header):
    dst_addr: int = bits(48)
    src_addr: int = bits(48)
    ether_type: int = bits(16)


@dataclass
class Ipv4(Header):
    version: int = bits(4)
    ihl: int = bits(4)
    dscp: int = bits(6)
    ecn: int = bits(2)
    total_len: int = bits(16)
    identification: int = bits(16)
    flags: int = bits(3)
    frag_offset: int = bits(13)
    ttl: int = bits(8)
    protocol: int = bits(8)
    hdr_checksum: int = bits(16)
    src_addr: int = bits(32)
    dst_addr: int = bits(32)

    def checksum(self) -> int:
        """RFC 791 header checksum over the header with hdr_checksum zeroed."""
        saved = self.hdr_checksum
        self.hdr_checksum = 0
        data = self.pack()
        self.hdr_checksum = saved
        return ipv4_checksum(data)


@dataclass
class Tcp(Header):
    src_port: int = bits(16)
    dst_port: int = bits(16)
    seq_no: int = bits(32)
    ack_no: int = bits(32)
    data_offset: int = bits(4)
    res: int = bits(4)
    flags: int = bits(8)
    window: int = bits(16)
    checksum: int = bits(16)
    urgent_ptr: int = bits(16)


@dataclass
class Udp(Header):
    src_port: int = bits(16)
    dst_port: int = bits(16)
    length: int = bits(16)
    checksum: int = bits(16)


@dataclass
class Feedback(Header):
    version: int = bits(4)
    msg_type: int = bits(4)
    class_id: int = bits(16)
    queue_id: int = bits(8)
    degree: int = bits(8)
    flow_protocol: int = bits(8)
    flow_src_port: int = bits(16)
    rate: int = bits(32)
    target_rate: int = bits(32)


@dataclass
class BridgedMd(Header):
    pkt_type: int = bits(8)
    class_id: int = bits(16)
    pad0: int = bits(7)
    ingress_port: int = bits(9)
    orig_src_mac: int = bits(48)
    orig_dst_mac: int = bits(48)


@dataclass
class FbMirror(Header):
    pkt_type: int = bits(8)
    class_id: int = bits(16)
    queue_id: int = bits(8)
    flow_protocol: int = bits(8)
    flow_src_port: int = bits(16)
    flow_dst_port: int = bits(16)
    rate: int = bits(32)
    target_rate: int = bits(32)
    orig_src_mac: int = bits(48)
    orig_dst_mac: int = bits(48)


@dataclass
class Headers:
    """`struct headers_t`: every header instance, all invalid until parsed."""

    bridged: BridgedMd = field(default_factory=BridgedMd)
    fb_mirror: FbMirror = field(default_factory=FbMirror)
    ethernet: Ethernet = field(default_factory=Ethernet)
    ipv4: Ipv4 = field(default_factory=Ipv4)
    tcp: Tcp = field(default_factory=Tcp)
    udp: Udp = field(default_factory=Udp)
    feedback: Feedback = field(default_factory=Feedback)


@dataclass
class ParsedMd:
    """`struct parsed_md_t`."""

    l4_src_port: int = 0
    l4_dst_port: int = 0
    ipv4_plain: bool = False


@dataclass
class QueueMd:
    """`struct queue_md_t`: queue state as the pipeline sees it."""

    depth_cells: int = 0
    sojourn_ns: int = 0


def emit(*headers: Header) -> bytes:
    """Deparser `emit`: valid headers in order, invalid ones skipped."""
    if speedups.ENABLED:
        # Each layout's pack straight from the cache (issue 48: a deparser
        # emits 4-6 headers per packet; a generator and two method calls per
        # header were most of its cost).
        out = []
        for h in headers:
            pack = _FAST_PACK.get(type(h), _UNKNOWN)
            if pack is _UNKNOWN:
                pack = _fast_pack_of(type(h))
            if pack is None:  # a class with its own pack or is_valid
                if h.is_valid():
                    out.append(h.pack())
            elif h.valid:
                out.append(pack(h))
        return b"".join(out)
    return b"".join(h.pack() for h in headers if h.is_valid())


_UNKNOWN = object()
# The compiled pack of each header class that keeps Header's pack and
# is_valid; None for one that overrides either (it is called as written).
_FAST_PACK: dict[type, Any] = {}


def _fast_pack_of(cls: type[Header]) -> Any:
    plain = cls.pack is Header.pack and cls.is_valid is Header.is_valid
    fast = _FAST_PACK[cls] = _layout_of(cls).pack if plain else None
    return fast
