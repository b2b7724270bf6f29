# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import itertools

import pytest

from evaluation.tm import EgressTm


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
    # deq_qdepth: what stays behind as each leaves, so the last of a burst
    # sees the queue empty (where its enq_qdepth still shows the burst).
    assert (d1.deq_qdepth_cells, d2.deq_qdepth_cells) == (2, 0)
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


def drain(tm: EgressTm, until_ns: int, frame_ns: int) -> list[tuple[int, int]]:
    """Serve the TM as a port does: a frame every frame_ns while one is
    eligible, else wait for the shaper. (time, qid) of each departure."""
    out: list[tuple[int, int]] = []
    now = 0
    while now < until_ns and tm.packets:
        d = tm.dequeue(now)
        if d is None:
            at = tm.next_eligible_ns(now)
            assert at is not None and at > now
            now = at
            continue
        out.append((now, d.qid))
        now += frame_ns
    return out


def test_port_shaper_holds_the_port_to_its_rate() -> None:
    """1000-byte frames on a link that sends one every 800 ns (10 Gb/s),
    shaped to 5 Gb/s: after the burst, one frame every 1600 ns."""
    shaping = {(3, None): (5_000_000, 2000)}
    tm = EgressTm(buffer_bytes=10**6, cell_bytes=80, port=3, shaping=shaping)
    for _ in range(200):
        tm.enqueue(frame(1000), 0, 0)
    out = drain(tm, 10**9, 800)
    assert len(out) == 200
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(out[10:])]
    assert sum(gaps) / len(gaps) == pytest.approx(1600, rel=0.01)
    shaping.clear()  # off: back to the link's pace at once
    for _ in range(5):
        tm.enqueue(frame(1000), 0, 0)
    assert [t for t, _ in drain(tm, 10**9, 800)] == [0, 800, 1600, 2400, 3200]


def test_queue_shaper_slows_its_queue_only() -> None:
    """Queue 1 (low priority) shaped to a tenth of the link; queue 2 (high)
    is not, and an arrival there leaves while queue 1 waits."""
    shaping = {(3, 1): (1_000_000, 1000)}
    tm = EgressTm(buffer_bytes=10**6, cell_bytes=80, port=3, shaping=shaping)
    tm.priority.update({1: 0, 2: 1})
    for _ in range(20):
        tm.enqueue(frame(1000), 1, 0)
    first = tm.dequeue(0)
    assert first is not None and first.qid == 1
    assert tm.dequeue(800) is None  # queue 1 waits for 8 us of tokens
    tm.enqueue(frame(1000), 2, 800)
    d = tm.dequeue(800)
    assert d is not None and d.qid == 2
    assert tm.next_eligible_ns(1600) == 8000
    assert tm.dequeue(7999) is None
    assert tm.dequeue(8000) is not None
