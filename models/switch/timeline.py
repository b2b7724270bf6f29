# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A time-ordered run of a model: packets wait in the traffic manager.

The model alone runs a packet's egress the moment its ingress ends (no
queues, like tofino-model). A Timeline takes the traffic manager's place:
each packet ingress hands on leaves at arrival + the queueing delay its
port and queue have at that time, and runs egress then, with the clock at
its departure (global_tstamp) and deq_timedelta its wait. What egress makes
at that moment - a mirror copy, a packet to a recirculation port, which
re-enters ingress - happens at that moment too. So state a program carries
from egress back to ingress reaches ingress when the chip would deliver it,
after the queue, not when the packet that carries it arrived (issue 50,
finding 2).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from .core import Output
from .tna import TnaProgram

# (port, qid, now_ns) -> how long a packet enqueued now waits, ns.
DelayFn = Callable[[int, int, int], int]


@dataclass(order=True)
class _Event:
    time_ns: int
    seq: int
    # An arrival on `port` (qid unused) or a departure from `port`/`qid`.
    departure: bool = field(compare=False)
    port: int = field(compare=False)
    qid: int = field(compare=False)
    data: bytes = field(compare=False)
    depth: int = field(compare=False, default=0)
    waited_ns: int = field(compare=False, default=0)


@dataclass(frozen=True)
class Emitted:
    time_ns: int
    output: Output


class Timeline:
    """Drives `program` through time; `delay_ns` says how long a packet
    waits in its port's queue (0 for a port without a queue of note, such
    as a recirculation port)."""

    def __init__(self, program: TnaProgram, delay_ns: DelayFn) -> None:
        self.program = program
        self.delay_ns = delay_ns
        self._events: list[_Event] = []
        self._seq = 0
        self.emitted: list[Emitted] = []
        program.tm = self

    def _push(self, event: _Event) -> None:
        heapq.heappush(self._events, event)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def send(self, time_ns: int, port: int, data: bytes) -> None:
        """A packet arrives on `port` at `time_ns` (run() processes it)."""
        self._push(_Event(time_ns, self._next_seq(), False, port, 0, data))

    def enqueue(self, port: int, qid: int, data: bytes, depth: int) -> None:
        """Called by the program as ingress or egress hands a packet on."""
        now = self.program.now_ns
        wait = max(0, int(self.delay_ns(port, qid, now)))
        self._push(_Event(now + wait, self._next_seq(), True, port, qid, data, depth, wait))

    def run(self, until_ns: int | None = None) -> list[Emitted]:
        """Every event up to `until_ns` (all of them: None) in time order;
        returns what left the switch meanwhile."""
        out: list[Emitted] = []
        while self._events and (until_ns is None or self._events[0].time_ns <= until_ns):
            e = heapq.heappop(self._events)
            self.program.now_ns = e.time_ns
            outputs: list[Output] = []
            if e.departure:
                # deq_timedelta saturates at the chip's width (18 bits on Tofino).
                waited = min(e.waited_ns, self.program.profile.max_timedelta_ns)
                self.program._egress_and_out(
                    e.port, e.qid, e.data, outputs, e.depth, deq_timedelta=waited
                )
            else:
                self.program._run(e.port, e.data, outputs, 0)
            out.extend(Emitted(e.time_ns, o) for o in outputs)
        self.emitted.extend(out)
        return out

    def pending(self) -> int:
        return len(self._events)

    def close(self) -> None:
        """Give the program its immediate traffic manager back."""
        if self.program.tm is self:
            self.program.tm = None
