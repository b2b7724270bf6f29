# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A batch of table writes, all or nothing.

BF-Runtime is atomic only within one call to one table, so a batch runs in
four steps:

1. check: each writer checks its writes against the reference model (names,
   bit widths) and turns them into the client's key/data objects (which
   checks the names against bfrt_info) - nothing is sent yet;
2. snapshot: each writer reads the prior state of every entry, default
   entry, register cell, mirror session and TM row its writes touch;
3. apply: consecutive writes to the same table (same call, same pipe) go as
   one batched call with ROLLBACK_ON_ERROR, so the switch undoes a refused
   call itself. Two kinds cannot: the server runs ROLLBACK_ON_ERROR as a
   pipe_mgr transaction, in which `bf_mirror_session_set`/`_reset` return
   PIPE_TXN_NOT_SUPPORTED (open-p4studio bf_pipe_mgr_mirror_buffer.c
   api_setup), and the TM tables do not take part in it at all (an aborted
   call keeps its TM updates). `$mirror.cfg` and TM writes therefore go one
   update per call without atomicity, and step 4 undoes them;
4. undo: if a call is refused, the writer that owns each touched slot puts
   it back from the snapshot, newest first.

A switch that goes away (UNAVAILABLE, connection reset, stream torn down)
raises SwitchUnavailable; the caller reconnects. If that happens in the
middle of a batch nothing can be undone: the switch state is whatever it
kept (nothing, if it rebooted), and the caller must re-sync.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from models import cycle_speedups
from models.switch.core import P4ModelError

from ...errors import ControllerError, SwitchUnavailable, WriteError
from ...switch import Write
from .client import ALL_PIPES, MIRROR_TABLE, message
from .session import Session

SlotKind = Literal["entry", "default", "register", "mirror", "tm"]


@dataclass
class Slot:
    """One thing a batch changes, and its state before the batch."""

    kind: SlotKind
    table: str
    pipe: int
    key: Any = None  # the client's key object; None for a default entry
    action: str | None = None  # action of `prior` (entries and default entries)
    prior: Any = None  # entry: {field: value} or None if absent; register: per-pipe list
    present: bool = False  # entries: exists on the switch before the batch
    fields: set[str] = field(default_factory=set)  # tm: the fields the batch writes
    index: int | None = None  # register: the cell


@dataclass
class Op:
    """One write of the batch as a BF-Runtime call on one entry."""

    index: int
    # The write, described only when an error names it: a PMQECN cycle makes
    # a thousand ops and describes none of them.
    source: Any
    table: str
    intent: str  # insert | modify | upsert | delete | default | register | clear | mirror | tm
    slot_id: Hashable
    pipe: int = ALL_PIPES
    key: Any = None
    data: Any = None
    call: str = ""  # the table method, chosen once the prior state is known
    present_after: bool = False
    tm: tuple[int, int] | None = None  # (port, queue) until the key is resolved
    tm_port_level: bool = False  # keyed by dev_port (tm.port.*), not (pg_id, pg_queue)
    tm_fields: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        return self.source if isinstance(self.source, str) else str(self.source.describe())

    @property
    def alone(self) -> bool:
        """Writes outside transactions: one update per call (see the module doc)."""
        return self.table == MIRROR_TABLE or self.intent == "tm"


@dataclass
class Group:
    table: str
    call: str
    pipe: int
    ops: list[Op] = field(default_factory=list)


Checked = list[tuple[Op, Slot | None]]


class SlotWriter(Protocol):
    """What a resource's writer gives the batch: its checks, and the read
    and the undo of the slots it owns."""

    handles: tuple[type, ...]
    kinds: tuple[SlotKind, ...]

    def check(self, i: int, w: Any) -> Checked: ...

    def prepare(self, ops: list[Op], slots: dict[Hashable, Slot]) -> None: ...

    def read_prior(self, slot: Slot) -> None: ...

    def restore(self, slot: Slot, exists_now: bool) -> None: ...


# Slots a refused ROLLBACK_ON_ERROR call puts back on the switch itself.
_SWITCH_UNDOES = frozenset(("entry", "default", "register"))

# Model checks raise P4ModelError; the client's make_key/make_data raise
# KeyError/ValueError/TypeError/AssertionError for names it lacks.
CHECK_ERRORS = (P4ModelError, KeyError, ValueError, TypeError, AssertionError)


class Batch:
    """Runs one batch of P4 table, mirror and TM-row writes through the
    writers that own them."""

    def __init__(self, session: Session, writers: Sequence[SlotWriter]) -> None:
        self.session = session
        self.writers = list(writers)
        self._by_kind = {k: w for w in self.writers for k in w.kinds}

    def _writer_for(self, w: Write) -> SlotWriter:
        for writer in self.writers:
            if isinstance(w, writer.handles):
                return writer
        raise P4ModelError(f"{type(w).__name__}: no writer for this kind of write")

    def write(self, writes: Sequence[Write]) -> None:
        ops: list[Op] = []
        slots: dict[Hashable, Slot] = {}
        for i, w in enumerate(writes):
            try:
                checked = self._writer_for(w).check(i, w)
            except CHECK_ERRORS as exc:
                raise WriteError(i, w.describe(), message(exc)) from None
            for op, slot in checked:
                ops.append(op)
                if slot is not None:
                    slots.setdefault(op.slot_id, slot)
        for writer in self.writers:
            writer.prepare(ops, slots)
        wanted, planned = self._undoable(ops, slots)
        self._read_priors([slots[sid] for sid in wanted])
        # Again with what was read: whether each entry exists after each op
        # (_undo's present_after), and $mirror.cfg's add or modify.
        choose_calls(ops, slots)
        if planned is None or any(slot.kind == "mirror" for slot in slots.values()):
            groups = make_groups(ops)
        else:
            groups = planned
        for n, g in enumerate(groups):
            try:
                self._send(g)
            except SwitchUnavailable:
                raise
            except Exception as exc:
                failed, why = refused_op(g, exc)
                applied = [op for done in groups[:n] for op in done.ops]
                self._undo(applied, slots, failed, why)
                raise WriteError(failed.index, failed.what, why) from None

    def _undoable(
        self, ops: list[Op], slots: Mapping[Hashable, Slot]
    ) -> tuple[list[Hashable], list[Group] | None]:
        """The slots whose prior state the batch may need: all of them on the
        reference path. A refused call is undone by the switch itself
        (ROLLBACK_ON_ERROR), so a P4 entry, default entry or register cell
        that only the last call touches is never put back by _undo, and its
        prior is not read: a PMQECN cycle's flip is two calls of 512 cells.
        With them, the calls as planned (None on the reference path)."""
        if not cycle_speedups.ENABLED:
            return list(slots), None
        # The calls of entries and cells do not depend on the prior state
        # (only $mirror.cfg's do, and a mirror op is a call of its own), so
        # the grouping is known before anything is read.
        choose_calls(ops, slots)
        groups = make_groups(ops)
        last = groups[-1] if groups else None
        if last is None or last.ops[0].alone:
            return list(slots), groups
        earlier = {op.slot_id for g in groups[:-1] for op in g.ops}
        only_last = {
            op.slot_id
            for op in last.ops
            if op.slot_id not in earlier and slots[op.slot_id].kind in _SWITCH_UNDOES
        }
        return [sid for sid in slots if sid not in only_last], groups

    def _read_priors(self, slots: list[Slot]) -> None:
        """Every slot's state before the batch. A writer that reads many slots
        in one request (P4TableWriter: register cells, READ_BATCH a request)
        gets all of its own at once; the reference read one slot per request,
        which was a round trip per sojourn cell a PMQECN cycle clears."""
        if not cycle_speedups.ENABLED:
            for slot in slots:
                self._by_kind[slot.kind].read_prior(slot)
            return
        for writer in self.writers:
            mine = [slot for slot in slots if slot.kind in writer.kinds]
            read_many = getattr(writer, "read_priors", None)
            if read_many is not None:
                read_many(mine)
                continue
            for slot in mine:
                writer.read_prior(slot)

    def _atomicity(self, table: str, tm: bool = False) -> int:
        wr = self.session.gc.bfruntime_pb2.WriteRequest
        return int(wr.CONTINUE_ON_ERROR if table == MIRROR_TABLE or tm else wr.ROLLBACK_ON_ERROR)

    def _send(self, g: Group) -> None:
        s = self.session
        t = s.table(g.table)
        target = s.target(g.pipe)
        atomic = self._atomicity(g.table, any(op.intent == "tm" for op in g.ops))
        keys = [op.key for op in g.ops]
        if g.call == "default_entry_set":
            s.rpc(functools.partial(t.default_entry_set, target, g.ops[0].data))
        elif g.call == "entry_del":
            s.rpc(functools.partial(t.entry_del, target, keys, atomicity=atomic))
        else:
            datas = [op.data for op in g.ops]
            call = getattr(t, g.call)
            s.rpc(functools.partial(call, target, keys, datas, atomicity=atomic))

    def _undo(
        self, applied: list[Op], slots: Mapping[Hashable, Slot], failed: Op, why: str
    ) -> None:
        """Put back every slot the applied ops touched, newest first."""
        now: dict[Hashable, bool] = {}
        order: list[Hashable] = []
        for op in applied:
            if op.slot_id not in now:
                order.append(op.slot_id)
            now[op.slot_id] = op.present_after
        problems: list[str] = []
        for sid in reversed(order):
            slot = slots[sid]
            try:
                self._by_kind[slot.kind].restore(slot, now[sid])
            except SwitchUnavailable:
                raise
            except Exception as exc:
                problems.append(f"{slot.table}: {message(exc)}")
        if problems:
            raise ControllerError(
                f"write #{failed.index} ({failed.what}) refused: {why}; "
                f"rollback incomplete, switch state is inconsistent: {'; '.join(problems)}"
            )


def choose_calls(ops: list[Op], slots: Mapping[Hashable, Slot]) -> None:
    """Pick each op's call, following whether its entry exists through the batch."""
    present = {sid: s.present for sid, s in slots.items()}
    for op in ops:
        exists = present.get(op.slot_id, False)
        if op.intent == "insert":
            op.call, exists = "entry_add", True
        elif op.intent == "upsert":
            op.call, exists = "entry_add_or_mod", True
        elif op.intent == "delete":
            op.call, exists = "entry_del", False
        elif op.intent == "clear":  # a whole register: a delete with no key
            op.call = "entry_del"
        elif op.intent == "default":
            op.call = "default_entry_set"
        elif op.intent == "mirror":
            # $mirror.cfg has no add-or-modify; pick by what the batch has done so far.
            op.call, exists = ("entry_mod" if exists else "entry_add"), True
        else:  # modify, register, tm
            op.call = "entry_mod"
        present[op.slot_id] = op.present_after = exists


def make_groups(ops: list[Op]) -> list[Group]:
    groups: list[Group] = []
    for op in ops:
        g = groups[-1] if groups else None
        # A default entry is one call of its own: default_entry_set takes one data.
        if (
            g is None
            or (g.table, g.call, g.pipe) != (op.table, op.call, op.pipe)
            or op.call == "default_entry_set"
            or op.alone
        ):
            g = Group(op.table, op.call, op.pipe)
            groups.append(g)
        g.ops.append(op)
    return groups


def refused_op(g: Group, exc: BaseException) -> tuple[Op, str]:
    """The op the switch refused (by its per-update error) and why."""
    for idx, err in getattr(exc, "errors", None) or []:
        if isinstance(idx, int) and 0 <= idx < len(g.ops):
            return g.ops[idx], getattr(err, "message", "") or message(exc)
    return g.ops[0], message(exc)


def restore_entry(session: Session, slot: Slot, exists_now: bool, atomic: int) -> None:
    """An entry (or mirror session) back as the snapshot had it: deleted if
    the batch made it, re-added if the batch deleted it, else modified back."""
    t = session.table(slot.table)
    target = session.target()
    if not slot.present:
        if exists_now:
            session.rpc(functools.partial(t.entry_del, target, [slot.key], atomicity=atomic))
        return
    data = session.make_data(slot.table, slot.prior, slot.action)
    call = t.entry_mod if exists_now else t.entry_add
    session.rpc(functools.partial(call, target, [slot.key], [data], atomicity=atomic))
