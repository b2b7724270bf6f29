# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What the tests of the compiled cores (models/switch/native) share: when
they can run, the three paths a packet can take, a counter of the packets a
core decides itself, and random frames."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
from collections.abc import Callable
from typing import Any

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from models import speedups
from models.switch import native
from models.switch.core import P4ModelError
from models.switch.tna import TnaProgram

HAS_CPPYY = importlib.util.find_spec("cppyy") is not None
TURNED_OFF = os.environ.get(native.ENV_SWITCH, "1") == "0"
SKIPS = [
    pytest.mark.skipif(not HAS_CPPYY, reason="cppyy is not installed (the eval extra brings it)"),
    pytest.mark.skipif(TURNED_OFF, reason=f"{native.ENV_SWITCH}=0 turns the cores off"),
]


class Decided:
    """Counts the packets a core decided itself (not handed back)."""

    def __init__(self, model: TnaProgram) -> None:
        core = model.native_core()
        assert core is not None
        self.count = 0

        def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                r = fn(*args)
                self.count += r is not None
                return r

            return call

        model._native = core._replace(ingress=counted(core.ingress), egress=counted(core.egress))


def paths() -> dict[str, contextlib.AbstractContextManager[None]]:
    return {
        "core": contextlib.nullcontext(),
        "python": speedups.native_disabled(),
        "reference": speedups.disabled(),
    }


def state(model: TnaProgram) -> tuple[object, object]:
    snap = model.snapshot()
    return snap.registers, snap.counters


def random_frame(rng: random.Random) -> bytes:
    eth = rng.getrandbits(96).to_bytes(12, "big")
    kind = rng.choice(["tcp", "tcp", "udp", "feedback_udp", "feedback_l2", "arp", "short"])
    if kind == "arp":
        return eth + b"\x08\x06" + bytes(28)
    if kind == "feedback_l2":
        return eth + b"\x88\xb6" + rng.randbytes(rng.choice([16, 20, 8]))
    proto = 6 if kind == "tcp" else 17
    ihl = rng.choice([5, 5, 5, 5, 6])
    frag = rng.choice([0, 0, 0, 0, 0x2000, 5])
    ttl = rng.choice([64, 64, 2, 1, 0])
    tos = rng.choice([0, 1, 2, 3, 10 << 2 | 2, 46 << 2 | 1, 46 << 2])
    src = rng.choice([0x0A000101, 0x0A000202, 0x0B000001])
    dst = rng.choice([0x0A000102, 0x0A000203, 0x0A000304, 0x0A000405, 0x0A000901, 0x0C000001])
    ip = bytes([0x40 | ihl, tos, 0, 60, 0, 1, frag >> 8, frag & 0xFF, ttl, proto, 0, 0])
    ip += src.to_bytes(4, "big") + dst.to_bytes(4, "big")
    if proto == 6:
        l4 = rng.randbytes(20)
    else:
        dport = 0x4CCF if kind == "feedback_udp" else 5001
        l4 = rng.randbytes(2) + dport.to_bytes(2, "big") + rng.randbytes(4)
        if kind == "feedback_udp":
            l4 += rng.randbytes(rng.choice([16, 16, 3]))
    frame = eth + b"\x08\x00" + ip + l4 + rng.randbytes(rng.choice([0, 6, 100]))
    if kind == "short":
        frame = frame[: rng.randint(0, 40)]
    return frame


def outcome(fn: Callable[[], object]) -> object:
    try:
        return ("ok", fn())
    except (P4ModelError, ValueError) as exc:
        return ("refused", type(exc).__name__, str(exc))


def spie_frame(rng: random.Random, port: int) -> bytes:
    """A TCP packet of one of a few flows toward the S-PIE ports (3, 4),
    mostly from its port's own prefix, or one of random_frame's odd ones."""
    if rng.random() < 0.2:
        return random_frame(rng)
    net = port if port in (1, 2) and rng.random() < 0.9 else rng.choice([1, 2])
    src = f"10.0.{net}.{rng.choice([1, 2, 7])}"
    dst = rng.choice(["10.0.3.3", "10.0.3.3", "10.0.4.4", "10.0.1.9"])
    sport = rng.choice([1000, 1001, 2000, 3000, 4000])
    return bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src=src, dst=dst, tos=rng.choice([0, 2]))
        / TCP(sport=sport, dport=80)
        / bytes(rng.choice([0, 100, 1000]))
    )
