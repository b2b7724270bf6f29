# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The program's own tables, registers and counters: their writes inside the
batch's transaction, their snapshot and undo, and their reads."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from models import cycle_speedups
from models.switch.core import Match, P4ModelError, Register, Table
from models.switch.tna import TnaProgram

from ...errors import ControllerError, SwitchUnavailable
from ...switch import EntryState, EntryWrite, RegisterClear, RegisterWrite
from .batch import Checked, Op, Slot, SlotKind, restore_entry
from .client import ALL_PIPES, MATCH_PRIORITY_BITS, READ_BATCH, message, require_uint
from .session import Session


def register_fields(r: Register, value: int) -> dict[str, int]:
    """A register cell's data fields: `<name>.f1`, or for a struct register
    (a pair one RegisterAction updates) one field per member, as bf-rt.json
    declares them (the model packs members, first in the high half)."""
    if not r.members:
        return {f"{r.name}.f1": value}
    return {f"{r.name}.{m}": v for m, v in r.split(value).items()}


def _per_pipe(value: Any) -> list[int]:
    return list(map(int, value)) if isinstance(value, list) else [int(value)]


def pipe_values(r: Register) -> Callable[[Mapping[str, Any]], list[int]]:
    """Reads a cell's value in every pipe from its data, members packed as
    the model does; the field names worked out once for a read of many
    cells (a full switch's PMQECN cycle reads 1,536)."""
    if not r.members:
        field = f"{r.name}.f1"
        return lambda data: _per_pipe(data[field])
    fields = [(m, f"{r.name}.{m}") for m in r.members]

    def packed(data: Mapping[str, Any]) -> list[int]:
        parts = {m: _per_pipe(data[name]) for m, name in fields}
        pipes = len(next(iter(parts.values())))
        return [r.pack({m: parts[m][p] for m in r.members}) for p in range(pipes)]

    return packed


def register_pipe_values(r: Register, data: Mapping[str, Any]) -> list[int]:
    """A read cell's value in every pipe, members packed as the model does."""
    return pipe_values(r)(data)


class P4TableWriter:
    """Match-action entries, default entries and register cells of the P4
    program. Names and widths are checked against the reference model and
    again by the client against bfrt_info."""

    handles: tuple[type, ...] = (EntryWrite, RegisterWrite, RegisterClear)
    kinds: tuple[SlotKind, ...] = ("entry", "default", "register")

    def __init__(self, session: Session, model: TnaProgram) -> None:
        self.s = session
        self.model = model

    # -- check -------------------------------------------------------------------
    def check(self, i: int, w: EntryWrite | RegisterWrite | RegisterClear) -> Checked:
        if isinstance(w, RegisterWrite):
            return [self._check_register(i, w)]
        if isinstance(w, RegisterClear):
            r = self.model.register(w.register)
            # No key: the server runs a delete without one as tableClear.
            op = Op(i, w, r.name, "clear", ("register", r.name, None))
            return [(op, Slot("register", r.name, ALL_PIPES))]
        return [self._check_entry(i, w)]

    def _check_entry(self, i: int, w: EntryWrite) -> tuple[Op, Slot | None]:
        t = self.model.table(w.table)
        action, data = w.action or "", dict(w.data)
        if w.op == "default":
            if w.key:
                raise P4ModelError(f"{w.table}: a default entry has no key")
            t._check_action(action, data)
            op = Op(i, w, w.table, "default", ("default", w.table))
            op.data = self.s.make_data(w.table, data, action)
            return op, Slot("default", w.table, ALL_PIPES)
        key, ident = self.entry_key(t, w.key, w.priority)
        op = Op(i, w, w.table, w.op, ("entry", w.table, ident), key=key)
        if w.op != "delete":
            t._check_action(action, data)
            op.data = self.s.make_data(w.table, data, action)
        return op, Slot("entry", w.table, ALL_PIPES, key=key)

    def _check_register(self, i: int, w: RegisterWrite) -> tuple[Op, Slot | None]:
        r = self.model.register(w.register)
        index, value = w.index, w.value
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < r.size:
            raise P4ModelError(f"{r.name}: index {index!r} outside 0..{r.size - 1}")
        require_uint(f"{r.name}[{index}]", value, r.width)
        key = self.register_key(r.name, w.index)
        op = Op(i, w, r.name, "register", ("register", r.name, w.index), key=key)
        op.data = self.register_data(r, w.value)
        return op, Slot("register", r.name, ALL_PIPES, key=key, index=w.index)

    def register_data(self, r: Register, value: int) -> Any:
        """A cell's data object. A cycle writes the same few values to many
        cells (PMQECN clears 1024 a cycle), and the client only reads the
        data it is given, so one object per value is made per connection."""
        if not cycle_speedups.ENABLED:
            return self.s.make_data(r.name, register_fields(r, value), None)
        return self.s.cached_data(
            (r.name, value), lambda: self.s.make_data(r.name, register_fields(r, value), None)
        )

    def prepare(self, ops: list[Op], slots: dict[Hashable, Slot]) -> None:
        pass  # keys are known at check time

    def entry_key(self, t: Table, key: Mapping[str, Match], priority: int) -> tuple[Any, tuple]:
        """(client key, identity) of a match entry; raises on bad names or widths."""
        gc = self.s.gc
        nkey = t._normalise_key(dict(key))
        fields = []
        for name, m in nkey.items():
            if m.mask is not None:
                fields.append(gc.KeyTuple(name, m.value, mask=m.mask))
            elif m.prefix_len is not None:
                fields.append(gc.KeyTuple(name, m.value, prefix_len=m.prefix_len))
            else:
                fields.append(gc.KeyTuple(name, m.value))
        ident: tuple = tuple(sorted((n, m.value, m.mask, m.prefix_len) for n, m in nkey.items()))
        if t.needs_priority:
            require_uint(f"{t.name}: $MATCH_PRIORITY", priority, MATCH_PRIORITY_BITS)
            fields.append(gc.KeyTuple("$MATCH_PRIORITY", priority))
            ident = (*ident, priority)
        return self.s.table(t.name).make_key(fields), ident

    def register_key(self, name: str, index: int) -> Any:
        if not cycle_speedups.ENABLED:
            return self.s.make_key(name, **{"$REGISTER_INDEX": index})
        return self.s.index_key(name, "$REGISTER_INDEX", index)

    # -- snapshot and undo -------------------------------------------------------
    def action_values(self, table: str, action: str | None, d: Mapping[str, Any]) -> dict:
        """The parameters of `action` in an entry's data, to write back."""
        try:
            params = self.model.table(table).actions[action or ""].params
        except (P4ModelError, KeyError):
            params = ()
        return {n: int(d[n]) for n, _ in params if n in d}

    def read_prior(self, slot: Slot) -> None:
        if slot.kind == "default":
            d = self.s.get_default(slot.table).to_dict()
            slot.action = d["action_name"]
            slot.prior = self.action_values(slot.table, slot.action, d)
        elif slot.kind == "entry":
            data = self.s.get(slot.table, slot.key)
            slot.present = data is not None
            if data is not None:
                d = data.to_dict()
                slot.action = d["action_name"]
                slot.prior = self.action_values(slot.table, slot.action, d)
        elif slot.index is None:  # a whole register (RegisterClear)
            r = self.model.register(slot.table)
            rows = self.get_indexed(r.name, "$REGISTER_INDEX", range(r.size), r.size)
            read = pipe_values(r)
            slot.prior = [read(data.to_dict()) for data in rows]
        else:
            data = self.s.get(slot.table, slot.key, from_hw=True)
            if data is None:
                raise ControllerError(f"{slot.table}: register cell vanished")
            slot.prior = register_pipe_values(self.model.register(slot.table), data.to_dict())

    def read_priors(self, slots: Sequence[Slot]) -> None:
        """read_prior of every slot, a register's cells in one request (get_indexed)."""
        cells: dict[str, list[Slot]] = {}
        for slot in slots:
            if slot.kind == "register" and slot.index is not None:
                cells.setdefault(slot.table, []).append(slot)
            else:
                self.read_prior(slot)
        for name, mine in cells.items():
            r = self.model.register(name)
            indices = [slot.index for slot in mine if slot.index is not None]
            rows = self.get_indexed(r.name, "$REGISTER_INDEX", indices, r.size)
            for slot, data in zip(mine, rows, strict=True):
                slot.prior = register_pipe_values(r, data.to_dict())

    def restore(self, slot: Slot, exists_now: bool) -> None:
        s = self.s
        wr = s.gc.bfruntime_pb2.WriteRequest
        t = s.table(slot.table)
        if slot.kind == "default":
            data = s.make_data(slot.table, slot.prior, slot.action)
            s.rpc(functools.partial(t.default_entry_set, s.target(), data))
        elif slot.kind == "entry":
            restore_entry(s, slot, exists_now, wr.ROLLBACK_ON_ERROR)
        elif slot.index is None:
            self._restore_register(slot)
        else:
            r = self.model.register(slot.table)
            values: list[int] = slot.prior
            # One write when the pipes agree; otherwise each pipe gets its own value back.
            pipes = [ALL_PIPES] if len(set(values)) == 1 else list(range(len(values)))
            for pipe in pipes:
                value = values[0] if pipe == ALL_PIPES else values[pipe]
                data = s.make_data(slot.table, register_fields(r, value), None)
                mod = functools.partial(
                    t.entry_mod, s.target(pipe), [slot.key], [data], atomicity=wr.ROLLBACK_ON_ERROR
                )
                s.rpc(mod)

    def _restore_register(self, slot: Slot) -> None:
        """Every cell of a cleared register back: each pipe's values in
        calls of up to READ_BATCH cells, or one set for all pipes where
        they agree everywhere."""
        s = self.s
        r = self.model.register(slot.table)
        cells: list[list[int]] = slot.prior
        t = s.table(r.name)
        atomic = s.gc.bfruntime_pb2.WriteRequest.ROLLBACK_ON_ERROR
        same = all(len(set(values)) == 1 for values in cells)
        pipes = [ALL_PIPES] if same else list(range(len(cells[0]) if cells else 0))
        for pipe in pipes:
            for start in range(0, r.size, READ_BATCH):
                idx = range(start, min(start + READ_BATCH, r.size))
                keys = [s.index_key(r.name, "$REGISTER_INDEX", i) for i in idx]
                datas = [
                    s.make_data(
                        r.name, register_fields(r, cells[i][0 if pipe == ALL_PIPES else pipe]), None
                    )
                    for i in idx
                ]
                s.rpc(functools.partial(t.entry_mod, s.target(pipe), keys, datas, atomicity=atomic))

    # -- reads -------------------------------------------------------------------
    def read_register_pipes(self, name: str, index: int) -> list[int]:
        """The cell's value in every pipe, in pipe order."""
        r = self.model.register(name)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < r.size:
            raise P4ModelError(f"{r.name}: index {index!r} outside 0..{r.size - 1}")
        data = self.s.get(r.name, self.register_key(r.name, index), from_hw=True)
        if data is None:
            raise ControllerError(f"{r.name}[{index}]: not returned by the switch")
        return register_pipe_values(r, data.to_dict())

    def get_indexed(self, table: str, field: str, indices: Sequence[int], size: int) -> list[Any]:
        """The data of cells `indices` of an indexed table (register, counter),
        read from the hardware in requests of up to READ_BATCH keys, in
        `indices`' order. The answer is matched to the request by the index
        each returned key carries, not by position."""
        for index in indices:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < size:
                raise P4ModelError(f"{table}: index {index!r} outside 0..{size - 1}")
        s = self.s
        t = s.table(table)
        found: dict[int, Any] = {}
        for start in range(0, len(indices), READ_BATCH):
            chunk = indices[start : start + READ_BATCH]
            keys = [s.index_key(table, field, i) for i in chunk]

            def read(keys: list[Any] = keys) -> dict[int, Any]:
                got: dict[int, Any] = {}
                flags = {"from_hw": True}
                for data, key in t.entry_get(s.target(), keys, flags, **s.read_args()):
                    got[int(key.to_dict()[field]["value"])] = data
                return got

            try:
                found.update(s.rpc(read))
            except SwitchUnavailable:
                raise
            except Exception as exc:
                raise ControllerError(f"reading {table} failed: {message(exc)}") from exc
        missing = [i for i in indices if i not in found]
        if missing:
            raise ControllerError(f"{table}{missing[:5]}: not returned by the switch")
        return [found[i] for i in indices]

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]:
        return [sum(values) for values in self.read_registers_pipes(name, indices)]

    def read_registers_pipes(self, name: str, indices: Sequence[int]) -> list[list[int]]:
        r = self.model.register(name)
        rows = self.get_indexed(r.name, "$REGISTER_INDEX", list(indices), r.size)
        read = pipe_values(r)
        return [read(data.to_dict()) for data in rows]

    def read_counters(self, name: str, indices: Sequence[int]) -> list[tuple[int, int]]:
        c = self.model.counter(name)
        rows = self.get_indexed(c.name, "$COUNTER_INDEX", list(indices), c.size)
        return [counter_totals(data.to_dict()) for data in rows]

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        c = self.model.counter(name)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < c.size:
            raise P4ModelError(f"{c.name}: index {index!r} outside 0..{c.size - 1}")
        key = self.s.make_key(c.name, **{"$COUNTER_INDEX": index})
        data = self.s.get(c.name, key, from_hw=True)
        if data is None:
            raise ControllerError(f"{c.name}[{index}]: not returned by the switch")
        return counter_totals(data.to_dict())

    def read_entry(
        self, table: str, key: Mapping[str, Match], priority: int = 0
    ) -> EntryState | None:
        t = self.model.table(table)
        bkey, _ = self.entry_key(t, key, priority)
        data = self.s.get(table, bkey)
        if data is None:
            return None
        d = data.to_dict()
        action = d["action_name"]
        return EntryState(action, self.action_values(table, action, d))


def counter_totals(d: Mapping[str, Any]) -> tuple[int, int]:
    """(packets, bytes) of a counter entry's data."""

    def total(v: Any) -> int:
        # Some SDEs return one value per pipe; the counter is their sum.
        return sum(int(x) for x in v) if isinstance(v, list) else int(v or 0)

    return total(d.get("$COUNTER_SPEC_PKTS", 0)), total(d.get("$COUNTER_SPEC_BYTES", 0))
