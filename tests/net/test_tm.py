from __future__ import annotations

import pytest

from models.net.tm import EgressTm


def frame(n: int, tag: int = 0) -> bytes:
    return bytes([tag]) * n


def test_fifo_depth_in_cells_and_sojourn() -> None:
    tm = EgressTm(buffer_bytes=10_000, cell_bytes=80)
    assert tm.enqueue(frame(100), 0, now_ns=0)  # 2 cells
    assert tm.enqueue(frame(81), 0, now_ns=5)  # 2 cells, saw 2
    assert tm.queue_cells(0) == 4
    d1 = tm.dequeue(now_ns=50)
    d2 = tm.dequeue(now_ns=70)
    assert d1 is not None and d2 is not None
    assert (d1.enq_qdepth_cells, d1.enq_qdepth_packets, d1.sojourn_ns) == (0, 0, 50)
    assert (d2.enq_qdepth_cells, d2.enq_qdepth_packets, d2.sojourn_ns) == (2, 1, 65)
    assert tm.dequeue(now_ns=80) is None
    assert tm.bytes == tm.packets == 0


def test_tail_drop_at_the_buffer() -> None:
    tm = EgressTm(buffer_bytes=250, cell_bytes=80)
    assert tm.enqueue(frame(100), 0, 0)
    assert tm.enqueue(frame(100), 1, 0)
    assert not tm.enqueue(frame(100), 0, 0)
    assert tm.packets == 2


def test_strict_priority_then_weighted_round_robin() -> None:
    tm = EgressTm(buffer_bytes=100_000, cell_bytes=80)
    tm.priority.update({0: 7, 1: 0, 2: 0})
    tm.weight.update({1: 3, 2: 1})
    for i in range(8):
        tm.enqueue(frame(10, 1), 1, i)
        tm.enqueue(frame(10, 2), 2, i)
    tm.enqueue(frame(10, 0), 0, 100)
    order = []
    while (d := tm.dequeue(1000)) is not None:
        order.append(d.qid)
    assert order[0] == 0, "the higher priority queue goes first"
    assert order[1:9] == [1, 1, 1, 2, 1, 1, 1, 2]


def test_rejects_nonsense_sizes() -> None:
    with pytest.raises(ValueError):
        EgressTm(0, 80)
