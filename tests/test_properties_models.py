# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Property-based tests of the reference models' packet handling (issue 13).

Random frames and mutations of well-formed ones go through PMQECN and BFCC
configured by their controller apps from the embedded default configs.
After every frame: no exception, every register within its width, every
counter at least what it was; a well-formed feedback frame from an untrusted
port is dropped and changes nothing but its port's forgery counter.

Bounded by the hypothesis profile in tests/conftest.py ("ci"; "long" fuzzes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.common import UNTRUSTED_FEEDBACK_DROPS
from bfrt_controller.programs import get_program
from hw_profiles import load_profile
from models.switch.headers import (
    ETHERTYPE_IPV4,
    ETHERTYPE_TOFCC_FEEDBACK,
    IP_PROTO_TCP,
    IP_PROTO_UDP,
    UDP_PORT_TOFCC_FEEDBACK,
    Ethernet,
    Feedback,
    Ipv4,
    Tcp,
    Udp,
)
from models.switch.tna import Snapshot, TnaProgram
from tofcc_common import registry

PROGRAMS = tuple(registry.PROGRAMS)


@dataclass
class Loaded:
    program: TnaProgram
    trusted: frozenset[int]
    clean: Snapshot  # the configured switch before any packet


def _load(name: str) -> Loaded:
    program = get_program(name)
    cfg = program.load_config(program.default_config)
    switch = ModelSwitch(name, load_profile(cfg.chip))
    program.make_app(switch, cfg).push_all()
    return Loaded(switch.model, frozenset(cfg.trusted_ports), switch.model.snapshot())


@pytest.fixture(scope="module", params=PROGRAMS)
def loaded(request: pytest.FixtureRequest) -> Loaded:
    return _load(request.param)


def _header(cls: Any, raw: bytes, **fields: int) -> bytes:
    h = cls.unpack(raw.ljust(cls.size_bytes(), b"\0")[: cls.size_bytes()])
    for name, value in fields.items():
        setattr(h, name, value)
    out: bytes = h.pack()
    return out


def _ipv4(raw: bytes, protocol: int, src: int, dst: int) -> bytes:
    return _header(
        Ipv4, raw, version=4, ihl=5, frag_offset=0, ttl=64, protocol=protocol, src_addr=src,
        dst_addr=dst,
    )  # fmt: skip


# Addresses the default configs route and classify (10.0.1-4.0/24), and any.
addresses = st.one_of(
    st.sampled_from([0x0A000100 + h for h in (1, 2, 3)] + [0x0A000200 + 2, 0x0A000402]),
    st.integers(0, 0xFFFFFFFF),
)
header_bytes = st.binary(min_size=64, max_size=64)


@st.composite
def feedback_frames(draw: st.DrawFn) -> bytes:
    """A frame the parser reads a feedback header from: L2 or UDP-carried."""
    fb = _header(Feedback, draw(header_bytes))
    tail = draw(st.binary(max_size=32))
    if draw(st.booleans()):
        eth = _header(Ethernet, draw(header_bytes), ether_type=ETHERTYPE_TOFCC_FEEDBACK)
        return eth + fb + tail
    eth = _header(Ethernet, draw(header_bytes), ether_type=ETHERTYPE_IPV4)
    ip = _ipv4(draw(header_bytes), IP_PROTO_UDP, draw(addresses), draw(addresses))
    udp = _header(Udp, draw(header_bytes), dst_port=UDP_PORT_TOFCC_FEEDBACK)
    return eth + ip + udp + fb + tail


@st.composite
def data_frames(draw: st.DrawFn) -> bytes:
    """Plain IPv4 TCP/UDP traffic with random fields (not feedback)."""
    eth = _header(Ethernet, draw(header_bytes), ether_type=ETHERTYPE_IPV4)
    proto = draw(st.sampled_from([IP_PROTO_TCP, IP_PROTO_UDP]))
    ip = _ipv4(draw(header_bytes), proto, draw(addresses), draw(addresses))
    if proto == IP_PROTO_TCP:
        l4 = _header(Tcp, draw(header_bytes))
    else:
        l4 = _header(Udp, draw(header_bytes), dst_port=draw(st.integers(0, 0x4CCE)))
    return eth + ip + l4 + draw(st.binary(max_size=64))


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """A well-formed frame with bytes flipped, cut short or extended."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "extend"]))
        if kind == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[draw(st.integers(0, len(data))) :]
        else:
            data += draw(st.binary(min_size=1, max_size=16))
    return bytes(data)


frames = st.one_of(
    st.binary(max_size=128),
    data_frames(),
    feedback_frames(),
    mutated(data_frames()),
    mutated(feedback_frames()),
)


def _state(p: TnaProgram) -> tuple[dict[str, list[int]], dict[str, tuple[list[int], list[int]]]]:
    regs = {n: list(r.values) for n, r in p.p4.registers.items()}
    ctrs = {n: (list(c.packets), list(c.bytes)) for n, c in p.p4.counters.items()}
    return regs, ctrs


def _check_invariants(p: TnaProgram, before: Any, outputs: list[Any]) -> None:
    for name, reg in p.p4.registers.items():
        bad = [v for v in reg.values if not 0 <= v <= reg.max]
        assert not bad, f"{name}: {bad[:3]} outside {reg.width} bits"
    for name, (packets, nbytes) in before[1].items():
        c = p.p4.counters[name]
        assert all(a <= b for a, b in zip(packets, c.packets, strict=True)), name
        assert all(a <= b for a, b in zip(nbytes, c.bytes, strict=True)), name
    for out in outputs:
        assert 0 <= out.port <= p.profile.max_port and isinstance(out.data, bytes)


def _run(loaded: Loaded, steps: list[tuple[int, bytes, int]], check: Callable[..., None]) -> None:
    p = loaded.program
    p.restore(loaded.clean)
    p.now_ns = 0
    for port, data, advance_ns in steps:
        p.now_ns += advance_ns
        before = _state(p)
        outputs = p.send(port, data)
        _check_invariants(p, before, outputs)
        check(p, port, data, before, outputs)


ports = st.integers(0, 511)
steps = st.lists(st.tuples(ports, frames, st.integers(0, 10_000_000)), min_size=1, max_size=12)


@given(steps=steps)
def test_any_frame_keeps_registers_in_width_and_counters_monotonic(
    loaded: Loaded, steps: list[tuple[int, bytes, int]]
) -> None:
    _run(loaded, steps, lambda *a: None)


@given(
    steps=st.lists(
        st.tuples(ports, st.one_of(feedback_frames(), frames), st.integers(0, 10_000_000)),
        min_size=1,
        max_size=12,
    )
)
def test_forged_feedback_from_an_untrusted_port_changes_nothing(
    loaded: Loaded, steps: list[tuple[int, bytes, int]]
) -> None:
    forged_seen = 0

    def check(p: TnaProgram, port: int, data: bytes, before: Any, outputs: list[Any]) -> None:
        nonlocal forged_seen
        drops = p.p4.counters[UNTRUSTED_FEEDBACK_DROPS]
        if drops.packets[port] == before[1][UNTRUSTED_FEEDBACK_DROPS][0][port]:
            return  # not taken for a forgery: the other invariants cover it
        forged_seen += 1
        assert port not in loaded.trusted
        assert outputs == []
        regs, ctrs = _state(p)
        assert regs == before[0], "a forged feedback frame changed a register"
        for name, value in ctrs.items():
            if name != UNTRUSTED_FEEDBACK_DROPS:
                assert value == before[1][name], f"a forged feedback frame counted in {name}"
        assert drops.packets[port] == before[1][UNTRUSTED_FEEDBACK_DROPS][0][port] + 1

    _run(loaded, steps, check)


@given(port=ports, frame=feedback_frames())
def test_well_formed_feedback_is_dropped_exactly_when_its_port_is_untrusted(
    loaded: Loaded, port: int, frame: bytes
) -> None:
    p = loaded.program
    p.restore(loaded.clean)
    drops = p.p4.counters[UNTRUSTED_FEEDBACK_DROPS]
    before = _state(p)
    outputs = p.send(port, frame)
    forged = drops.packets[port] == 1
    assert forged == (port not in loaded.trusted)
    if forged:
        assert outputs == [] and _state(p)[0] == before[0]
