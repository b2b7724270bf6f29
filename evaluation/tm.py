# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The traffic manager of one egress port, as the P4 programs see it.

A FIFO per queue id; strict priority between TM priority levels (higher
first) and weighted round robin among the queues of one level, which is how
the controller's TmQueueWrite (max_priority, dwrr_weight) configures a Tofino
port. Max-rate shapers, as TmShapingWrite configures them (the port's and
each queue's, read live from the controller's table, so a change applies to
the next packet): a token bucket of `max_burst_bytes` filling at
`max_rate_kbps`; a queue may send when its bucket and the port's hold its
head frame's bytes (at most a full bucket), and the frame takes them from
both. A shaped port whose queues all wait reports when the first becomes
eligible (`next_eligible_ns`). Admission is against the port's buffer in
bytes (tail drop). Depths are reported per queue in cells of the chip's
size, like enq_qdepth (on arrival) and deq_qdepth (as the packet leaves),
and the sojourn like deq_timedelta.

Priority flow control (802.1Qbb) on the egress side: a queue whose priority
the link partner paused (`pause`) sends nothing until the pause ends or is
lifted; the other queues go on. Each packet carries the ingress port it came
in on (`ingress_port`), so the switch can give its ingress accounting back
when the packet leaves.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from models import speedups

# (port, queue) -> (max_rate_kbps, max_burst_bytes); queue None: the port.
Shaping = Mapping[tuple[int, int | None], tuple[int, int]]


@dataclass(frozen=True)
class Dequeued:
    frame: bytes
    qid: int
    enq_qdepth_cells: int  # depth of its queue when it arrived, this packet excluded
    enq_qdepth_packets: int
    sojourn_ns: int
    # The port the switch received it on, for PFC's ingress accounting (None: made here).
    ingress_port: int | None = None
    # Depth of its queue as it leaves, this packet excluded (deq_qdepth).
    deq_qdepth_cells: int = 0


class EgressTm:
    def __init__(
        self,
        buffer_bytes: int,
        cell_bytes: int,
        port: int = 0,
        shaping: Shaping | None = None,
    ) -> None:
        if buffer_bytes <= 0 or cell_bytes <= 0:
            raise ValueError("buffer_bytes and cell_bytes must be positive")
        self.port = port
        self.shaping: Shaping = shaping if shaping is not None else {}
        # Token buckets by shaper key: (tokens in bytes, time of the count in ns).
        self._buckets: dict[int | None, tuple[float, int]] = {}
        self.buffer_bytes = buffer_bytes
        self.cell_bytes = cell_bytes
        self.priority: dict[int, int] = {}
        self.weight: dict[int, int] = {}
        self._queues: dict[int, deque[tuple[bytes, int, int, int, int | None]]] = {}
        # PFC: the time until which the link partner paused each queue.
        self.paused_until_ns: dict[int, int] = {}
        self._cells: dict[int, int] = {}
        self._credit: dict[int, int] = {}
        self.bytes = 0
        self.packets = 0

    def cells(self, frame: bytes) -> int:
        return -(-len(frame) // self.cell_bytes)

    def queue_cells(self, qid: int) -> int:
        return self._cells.get(qid, 0)

    def queue_packets(self, qid: int) -> int:
        q = self._queues.get(qid)
        return len(q) if q else 0

    def enqueue(self, frame: bytes, qid: int, now_ns: int, ingress_port: int | None = None) -> bool:
        """False: the buffer is full and the packet is dropped."""
        if self.bytes + len(frame) > self.buffer_bytes:
            return False
        q = self._queues.setdefault(qid, deque())
        depth = self._cells.get(qid, 0)
        q.append((frame, now_ns, depth, len(q), ingress_port))
        self._cells[qid] = depth + self.cells(frame)
        self.bytes += len(frame)
        self.packets += 1
        return True

    def _tokens(self, key: int | None, now_ns: int) -> float | None:
        """The bucket of the port's (key None) or a queue's shaper at now;
        None when that shaper is off."""
        cfg = self.shaping.get((self.port, key))
        if cfg is None:
            self._buckets.pop(key, None)
            return None
        rate_kbps, burst = cfg
        tokens, stamp = self._buckets.get(key, (float(burst), now_ns))
        tokens = min(float(burst), tokens + (now_ns - stamp) * rate_kbps / 8e6)
        self._buckets[key] = (tokens, now_ns)
        return tokens

    def _wait_ns(self, qid: int, now_ns: int) -> int:
        """How long queue `qid`'s head frame waits for its shapers' tokens."""
        nbytes = len(self._queues[qid][0][0])
        wait = 0
        for key in (None, qid):
            tokens = self._tokens(key, now_ns)
            if tokens is None:
                continue
            rate_kbps, burst = self.shaping[(self.port, key)]
            short = min(nbytes, burst) - tokens
            if short > 0:
                wait = max(wait, -(-int(short * 8e6) // rate_kbps))
        return wait

    def _charge(self, qid: int, nbytes: int) -> None:
        for key in (None, qid):
            got = self._buckets.get(key)
            if got is not None and (self.port, key) in self.shaping:
                self._buckets[key] = (got[0] - nbytes, got[1])

    def next_eligible_ns(self, now_ns: int) -> int | None:
        """When the first waiting queue's shapers allow it to send (None: no
        queue is waiting on a shaper)."""
        waits = [
            self._wait_ns(qid, now_ns)
            for qid, q in self._queues.items()
            if q and not self.paused(qid, now_ns)
        ]
        return now_ns + min(waits) if waits else None

    def pause(self, qid: int, until_ns: int) -> None:
        """PFC: queue `qid` sends nothing before `until_ns` (a resume passes now)."""
        if until_ns <= 0:
            self.paused_until_ns.pop(qid, None)
        else:
            self.paused_until_ns[qid] = until_ns

    def paused(self, qid: int, now_ns: int) -> bool:
        until = self.paused_until_ns.get(qid)
        if until is None:
            return False
        if until <= now_ns:
            del self.paused_until_ns[qid]
            return False
        return True

    def pause_ends_ns(self, now_ns: int) -> int | None:
        """When the first paused queue holding packets may send again."""
        ends = [
            t for qid, t in self.paused_until_ns.items() if t > now_ns and self._queues.get(qid)
        ]
        return min(ends) if ends else None

    def _pick(self, now_ns: int = 0) -> int | None:
        busy = [qid for qid, q in self._queues.items() if q]
        if speedups.ENABLED and len(busy) == 1 and not self.paused_until_ns and not self.shaping:
            # One queue holding packets, none paused or shaped: the steps
            # below pick it without touching any credit (issue 48: most
            # dequeues of a run, each a max, a sort and two generators).
            return busy[0]
        if busy and self.paused_until_ns:
            busy = [qid for qid in busy if not self.paused(qid, now_ns)]
        if busy and self.shaping:
            busy = [qid for qid in busy if self._wait_ns(qid, now_ns) == 0]
        if not busy:
            return None
        top = max(self.priority.get(qid, 0) for qid in busy)
        level = sorted(qid for qid in busy if self.priority.get(qid, 0) == top)
        if len(level) == 1:
            return level[0]
        # WRR: a queue sends `weight` packets per round; refill when all are spent.
        if all(self._credit.get(qid, 0) <= 0 for qid in level):
            for qid in level:
                self._credit[qid] = max(1, self.weight.get(qid, 1))
        for qid in level:
            if self._credit.get(qid, 0) > 0:
                return qid
        return level[0]

    def dequeue(self, now_ns: int) -> Dequeued | None:
        qid = self._pick(now_ns)
        if qid is None:
            return None
        frame, t_in, depth_cells, depth_pkts, in_port = self._queues[qid].popleft()
        if self.shaping:
            self._charge(qid, len(frame))
        self._credit[qid] = self._credit.get(qid, 0) - 1
        self._cells[qid] -= self.cells(frame)
        self.bytes -= len(frame)
        self.packets -= 1
        return Dequeued(
            frame, qid, depth_cells, depth_pkts, now_ns - t_in, in_port, self._cells[qid]
        )
