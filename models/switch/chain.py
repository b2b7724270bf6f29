# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Model switches wired together: what one emits on a linked port arrives at
the other's input port, both ways.

Used to run switch-to-switch mechanisms (BFCC's backpressure and fake
packets) end to end on the reference models, which tofino-model cannot do
with a single switch. Links carry packets instantly and in order; every
packet a switch emits on an unlinked port is a host-facing output.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .core import P4ModelError
from .tna import TnaProgram

# A packet bouncing between switches forever is a bug (or a loop in the
# routes); the model needs a bound to terminate, hardware would not.
MAX_HOPS = 64

PortRef = tuple[str, int]


@dataclass(frozen=True)
class ChainOutput:
    switch: str
    port: int
    data: bytes


@dataclass(frozen=True)
class LinkCrossing:
    """One packet on a switch-to-switch link, as sent by `src`."""

    src: PortRef
    dst: PortRef
    data: bytes


class Chain:
    def __init__(self, switches: dict[str, TnaProgram], links: list[tuple[PortRef, PortRef]]):
        self.switches = switches
        self.peer: dict[PortRef, PortRef] = {}
        for a, b in links:
            for end in (a, b):
                if end[0] not in switches:
                    raise P4ModelError(f"link end {end}: no switch '{end[0]}'")
                if end in self.peer:
                    raise P4ModelError(f"link end {end} is wired twice")
            self.peer[a] = b
            self.peer[b] = a
        self.crossings: list[LinkCrossing] = []
        self._now_ns = 0

    @property
    def now_ns(self) -> int:
        return self._now_ns

    @now_ns.setter
    def now_ns(self, value: int) -> None:
        # One clock for the whole chain: the links take no time.
        self._now_ns = value
        for sw in self.switches.values():
            sw.now_ns = value

    def send(self, switch: str, port: int, data: bytes) -> list[ChainOutput]:
        """Inject a packet; return what leaves the chain on unlinked ports."""
        if switch not in self.switches:
            raise P4ModelError(f"no switch '{switch}'")
        pending: deque[tuple[str, int, bytes, int]] = deque([(switch, port, data, 0)])
        outputs: list[ChainOutput] = []
        while pending:
            name, in_port, pkt, hops = pending.popleft()
            if hops > MAX_HOPS:
                raise P4ModelError(f"packet crossed more than {MAX_HOPS} links")
            for out in self.switches[name].send(in_port, pkt):
                dst = self.peer.get((name, out.port))
                if dst is None:
                    outputs.append(ChainOutput(name, out.port, out.data))
                else:
                    self.crossings.append(LinkCrossing((name, out.port), dst, out.data))
                    pending.append((dst[0], dst[1], out.data, hops + 1))
        return outputs
