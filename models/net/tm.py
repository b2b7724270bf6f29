"""The traffic manager of one egress port, as the P4 programs see it.

A FIFO per queue id; strict priority between TM priority levels (higher
first) and weighted round robin among the queues of one level, which is how
the controller's TmQueueWrite (max_priority, dwrr_weight) configures a Tofino
port. Admission is against the port's buffer in bytes (tail drop). Depths are
reported per queue in cells of the chip's size, like enq_qdepth, and the
sojourn like deq_timedelta.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Dequeued:
    frame: bytes
    qid: int
    enq_qdepth_cells: int  # depth of its queue when it arrived, this packet excluded
    enq_qdepth_packets: int
    sojourn_ns: int


class EgressTm:
    def __init__(self, buffer_bytes: int, cell_bytes: int) -> None:
        if buffer_bytes <= 0 or cell_bytes <= 0:
            raise ValueError("buffer_bytes and cell_bytes must be positive")
        self.buffer_bytes = buffer_bytes
        self.cell_bytes = cell_bytes
        self.priority: dict[int, int] = {}
        self.weight: dict[int, int] = {}
        self._queues: dict[int, deque[tuple[bytes, int, int, int]]] = {}
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

    def enqueue(self, frame: bytes, qid: int, now_ns: int) -> bool:
        """False: the buffer is full and the packet is dropped."""
        if self.bytes + len(frame) > self.buffer_bytes:
            return False
        q = self._queues.setdefault(qid, deque())
        depth = self._cells.get(qid, 0)
        q.append((frame, now_ns, depth, len(q)))
        self._cells[qid] = depth + self.cells(frame)
        self.bytes += len(frame)
        self.packets += 1
        return True

    def _pick(self) -> int | None:
        busy = [qid for qid, q in self._queues.items() if q]
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
        qid = self._pick()
        if qid is None:
            return None
        frame, t_in, depth_cells, depth_pkts = self._queues[qid].popleft()
        self._credit[qid] = self._credit.get(qid, 0) - 1
        self._cells[qid] -= self.cells(frame)
        self.bytes -= len(frame)
        self.packets -= 1
        return Dequeued(frame, qid, depth_cells, depth_pkts, now_ns - t_in)
