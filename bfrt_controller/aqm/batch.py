# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One batch for a change of the AQM family's intended state, ordered so a
packet between two of its writes sees a whole mechanism.

A queue is never without its aqm_queue entry: the entry is modified in
place (upsert), never deleted and re-added. A mechanism switch zeroes the
queue's slot in every register before the entry names the new mechanism
(the old one does not write the new one's registers: they are its own),
and again after it for the PI's when the slot moves between PIE and
DualPI2, which share them. The entries a new entry points at (its curve,
a pair's L4S classification) are written before it; stale ones are deleted
after it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..common import by_table, entry_id
from ..switch import EntryWrite, RegisterWrite, TmQueueWrite, Write
from . import names as n
from .mechanisms import CURVE_FAMILY

# Entries that name a queue's mechanism: written after what they point at.
QUEUE_TABLES = frozenset({n.AQM_QUEUE})


def _clears(slot: int, registers: Iterable[str]) -> list[Write]:
    return [RegisterWrite(r, slot, 0) for r in registers]


def switch_batch(
    before: Iterable[Write], after: Iterable[Write], switched: Iterable[tuple[int, str, str]]
) -> list[Write]:
    """The writes that turn `before` into `after`; `switched` lists the
    (slot, old mode, new mode) of queues whose mechanism changes."""
    old = {entry_id(w): w for w in before if isinstance(w, EntryWrite)}
    new = {entry_id(w): w for w in after if isinstance(w, EntryWrite)}
    changed = [
        w
        for k, w in new.items()
        if k not in old or (old[k].action, old[k].data) != (w.action, w.data)
    ]
    deletes: list[Write] = [
        EntryWrite(w.table, w.key, priority=w.priority, op="delete")
        for k, w in old.items()
        if k not in new
    ]
    tm_old = {(w.port, w.queue): w for w in before if isinstance(w, TmQueueWrite)}
    tm_new = {(w.port, w.queue): w for w in after if isinstance(w, TmQueueWrite)}
    tm: list[Write] = [w for q, w in tm_new.items() if tm_old.get(q) != w]
    # A queue that leaves a DualPI2 pair goes back to the default priority.
    tm += [TmQueueWrite(p, q, max_priority=0) for (p, q) in tm_old if (p, q) not in tm_new]
    slots = list(switched)
    first = by_table([w for w in changed if w.table not in QUEUE_TABLES])
    clears = [c for slot, _, _ in slots for c in _clears(slot, n.SLOT_REGISTERS)]
    entries = [w for w in changed if w.table in QUEUE_TABLES]
    again = [
        c
        for slot, was, now in slots
        if CURVE_FAMILY[was] == CURVE_FAMILY[now] == "pi"
        for c in _clears(slot, n.PI_REGISTERS)
    ]
    # The deletes last; an L queue whose pair went stays entry-less (none).
    return [*first, *clears, *entries, *tm, *again, *by_table(deletes)]
