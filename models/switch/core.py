# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4 objects of a TNA program, as the control plane sees them.

Tables, registers, counters and mirror sessions with the semantics and the
checks of BF-Runtime: unknown names, wrong match kinds and values wider than
their field are rejected with an error naming the object and field, so a
vector or controller that is wrong against the model is wrong against the
switch too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import and_, attrgetter, is_
from typing import Literal, Protocol

from models import speedups

MatchKind = Literal["exact", "lpm", "ternary"]


class P4ModelError(ValueError):
    """A control-plane request the switch would reject."""


class EntryRefused(P4ModelError):
    """Table.upsert_many's refusal of its `index`-th item; the message is
    the one add_or_modify gives that item."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


class UpsertItem(Protocol):
    """An entry to write as Table.upsert_many takes it (a controller's
    EntryWrite)."""

    @property
    def key(self) -> Mapping[str, Match]: ...
    @property
    def action(self) -> str | None: ...
    @property
    def data(self) -> Mapping[str, int]: ...
    @property
    def priority(self) -> int: ...


@dataclass(frozen=True)
class KeyField:
    name: str
    bits: int
    match: MatchKind


@dataclass(frozen=True)
class Action:
    name: str
    params: tuple[tuple[str, int], ...] = ()


NO_ACTION = Action("NoAction")


@dataclass(frozen=True)
class Match:
    """One key field of an entry: exact uses value; lpm value/prefix_len; ternary value/mask."""

    value: int
    prefix_len: int | None = None
    mask: int | None = None


@dataclass
class Entry:
    key: dict[str, Match]
    action: str
    data: dict[str, int]
    priority: int = 0


@dataclass
class LookupResult:
    hit: bool
    action: str
    data: dict[str, int]


def _check_width(what: str, value: int, width: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise P4ModelError(f"{what}: expected an integer, got {value!r}")
    if value < 0 or value >= (1 << width):
        raise P4ModelError(f"{what}: value {value} does not fit in {width} bits")


# A Match as the plain tuple it compares equal by: the position index keys
# on these (ints hash in C; a Match's dataclass hash runs Python).
_MATCH_FIELDS = attrgetter("value", "prefix_len", "mask")

# Keys remembered per table state: enough for every flow or class key of a
# run, while a key on a timestamp (elapsed-time tables) stops growing there.
MEMO_KEYS = 4096

# Batches at least this long written into an empty table are remembered
# (Table._keep_fresh_build): PMQECN's drain tables, about 9,000 entries the
# same for every switch, were a sixth of a pmqecn-s1 run, written and
# grouped again on each switch a run starts. A table's few-entry pushes
# are not worth the identity check.
FRESH_BUILD_MIN = 256


@dataclass(frozen=True)
class _FreshBuild:
    """An empty table's state after one upsert_many: the items (kept, so
    their identities stay theirs), entries, position index, lookup groups."""

    items: tuple[object, ...]
    entries: tuple[Entry, ...]
    pos: dict[tuple[tuple[object, ...], int], int]
    groups: list[tuple[tuple[int, ...], dict[tuple[int, ...], tuple]]]


# The latest fresh build per table shape (name, size, keys, actions), per process.
_FRESH_BUILDS: dict[tuple[object, ...], _FreshBuild] = {}


class Table:
    """A match-action table. Ternary ties break on the lower priority value."""

    def __init__(
        self,
        name: str,
        keys: list[KeyField],
        actions: list[Action],
        default_action: tuple[str, dict[str, int]],
        size: int,
    ) -> None:
        self.name = name
        self.keys = {k.name: k for k in keys}
        self.actions = {a.name: a for a in actions}
        self.size = size
        self._initial_default = default_action
        self.default: tuple[str, dict[str, int]] = default_action
        self._entries: list[Entry] = []
        self._check_action(*default_action)
        # Indexes over `entries`, rebuilt after any change: the position of
        # each (key, priority), and for lookups the entries grouped by the
        # masks their keys apply (tuple-space search), so a table with
        # thousands of entries answers in a few dict lookups.
        self._has_ternary = any(k.match == "ternary" for k in keys)
        self._pos: dict[tuple[tuple[object, ...], int], int] | None = None
        self._groups: list[tuple[tuple[int, ...], dict[tuple[int, ...], tuple]]] | None = None
        self._ranked: list[tuple[tuple[int, ...], dict[tuple[int, ...], tuple], tuple]] = []
        self._ranked_for: object = None
        # Results by key value, valid for one state of the table (its mask
        # groups and default, both replaced, never changed in place, when the
        # table changes): most packets of a run look up a few keys many times.
        self._memo: dict[tuple[int, ...], LookupResult] = {}
        self._memo_for: tuple[object, object] = (None, None)
        self._normal_keys: dict[tuple[tuple[object, ...], ...], dict[str, Match]] = {}
        self._key_names = tuple(self.keys)
        # Each action's parameter widths, for the checks of an entry write.
        self._widths = {a.name: dict(a.params) for a in actions}

    def __getstate__(self) -> dict[str, object]:
        # A compiled core's search structure (models/switch/native) stays
        # with this table; a copy compiles its own.
        state = dict(self.__dict__)
        state.pop("_native_cache", None)
        return state

    @property
    def entries(self) -> list[Entry]:
        return self._entries

    @entries.setter
    def entries(self, value: list[Entry]) -> None:
        self._entries = value
        self._changed()

    def _changed(self) -> None:
        self._pos = None
        self._groups = None

    def _key_id(self, key: Mapping[str, Match], priority: int) -> tuple[tuple[object, ...], int]:
        return (
            tuple(map(_MATCH_FIELDS, map(key.__getitem__, self._key_names))),
            priority if self._has_ternary else 0,
        )

    @property
    def needs_priority(self) -> bool:
        return any(k.match == "ternary" for k in self.keys.values())

    def _action_fits(self, action: str, data: Mapping[str, int]) -> bool:
        """True when _check_action would pass, found without building its
        messages (a controller push writes thousands of entries); False:
        run _check_action, which names what is wrong."""
        widths = self._widths.get(action)
        if widths is None or len(data) != len(widths):
            return False
        for pname, value in data.items():
            width = widths.get(pname)
            if width is None or type(value) is not int or value < 0 or value >> width:
                return False
        return True

    def _check_action(self, action: str, data: Mapping[str, int]) -> None:
        spec = self.actions.get(action)
        if spec is None:
            raise P4ModelError(
                f"{self.name}: unknown action '{action}' (has: {', '.join(self.actions)})"
            )
        widths = dict(spec.params)
        for pname in data:
            if pname not in widths:
                raise P4ModelError(f"{self.name}: action {action} has no parameter '{pname}'")
        for pname, width in spec.params:
            if pname not in data:
                raise P4ModelError(f"{self.name}: action {action} needs parameter '{pname}'")
            _check_width(f"{self.name}: {action}.{pname}", data[pname], width)

    def _normal_form(self, key: Mapping[str, Match]) -> dict[str, Match] | None:
        """The key's normal form when every field is given, a plain int in
        range, and its own Match already normal (as a controller writes
        them): that Match is kept. None: let the memo and the checks do it."""
        if len(key) != len(self._key_names):
            return None
        out: dict[str, Match] = {}
        for fname, spec in self.keys.items():
            m = key.get(fname)
            if type(m) is not Match:
                return None
            value, plen, mask = m.value, m.prefix_len, m.mask
            bits = spec.bits
            if type(value) is not int or value < 0 or value >> bits:
                return None
            if spec.match == "exact":
                if plen is not None or mask is not None:
                    return None
            elif spec.match == "lpm":
                if type(plen) is not int or mask is not None or not 0 <= plen <= bits:
                    return None
                if value & ~(((1 << plen) - 1) << (bits - plen)):
                    return None
            elif (
                plen is not None
                or type(mask) is not int
                or mask < 0
                or mask >> bits
                or value & ~mask
            ):
                return None
            out[fname] = m
        return out

    def _normalise_key(self, key: Mapping[str, Match]) -> dict[str, Match]:
        if not speedups.ENABLED:
            return self._normalise_key_checked(key)
        normal = self._normal_form(key)
        if normal is not None:
            return normal
        # A controller rewrites the same keys cycle after cycle (PMQECN's
        # drain table: thousands per weight change); a key's normal form
        # depends on nothing but the key and the table's fixed key fields.
        # The dict is shared by the entries made from it, never changed.
        try:
            # The types too: Match(True) and Match(1.0) equal Match(1) and
            # hash alike, but the checks refuse them.
            ident = tuple(
                (f, m, type(m.value), type(m.prefix_len), type(m.mask)) for f, m in key.items()
            )
            found = self._normal_keys.get(ident)
        except TypeError:  # an unhashable value: let the checks name it
            return self._normalise_key_checked(key)
        if found is None:
            found = self._normalise_key_checked(key)
            if len(self._normal_keys) < MEMO_KEYS:
                self._normal_keys[ident] = found
        return found

    def _normalise_key_checked(self, key: Mapping[str, Match]) -> dict[str, Match]:
        for fname in key:
            if fname not in self.keys:
                raise P4ModelError(
                    f"{self.name}: unknown key field '{fname}' (has: {', '.join(self.keys)})"
                )
        out: dict[str, Match] = {}
        for fname, spec in self.keys.items():
            what = f"{self.name}: key {fname}"
            m = key.get(fname)
            if m is None:
                if spec.match == "ternary":
                    out[fname] = Match(0, mask=0)
                    continue
                raise P4ModelError(f"{what}: missing ({spec.match} match)")
            _check_width(what, m.value, spec.bits)
            if spec.match == "exact":
                out[fname] = Match(m.value)
            elif spec.match == "lpm":
                plen = spec.bits if m.prefix_len is None else m.prefix_len
                if not 0 <= plen <= spec.bits:
                    raise P4ModelError(f"{what}: prefix length {plen} outside 0..{spec.bits}")
                net_mask = ((1 << plen) - 1) << (spec.bits - plen)
                out[fname] = Match(m.value & net_mask, prefix_len=plen)
            else:
                mask = (1 << spec.bits) - 1 if m.mask is None else m.mask
                _check_width(f"{what} mask", mask, spec.bits)
                out[fname] = Match(m.value & mask, mask=mask)
        return out

    def _positions(self) -> dict[tuple[tuple[object, ...], int], int]:
        if self._pos is None:
            self._pos = {}
            for i, e in enumerate(self._entries):
                self._pos.setdefault(self._key_id(e.key, e.priority), i)
        return self._pos

    def _find(self, key: Mapping[str, Match], priority: int) -> int | None:
        return self._positions().get(self._key_id(key, priority))

    def add(
        self, key: Mapping[str, Match], action: str, data: Mapping[str, int], priority: int = 0
    ) -> None:
        nkey = self._normalise_key(key)
        self._check_action(action, data)
        if self._find(nkey, priority) is not None:
            raise P4ModelError(f"{self.name}: entry already exists for key {key}")
        self._append(nkey, action, data, priority)

    def _append(
        self, nkey: dict[str, Match], action: str, data: Mapping[str, int], priority: int
    ) -> None:
        if len(self._entries) >= self.size:
            raise P4ModelError(f"{self.name}: table full ({self.size} entries)")
        self._entries.append(Entry(nkey, action, dict(data), priority))
        if self._pos is not None:
            self._pos.setdefault(self._key_id(nkey, priority), len(self._entries) - 1)
        self._groups = None

    def _replace(
        self, i: int, nkey: dict[str, Match], action: str, data: Mapping[str, int], priority: int
    ) -> None:
        self._entries[i] = Entry(nkey, action, dict(data), priority)
        self._groups = None

    def modify(
        self, key: Mapping[str, Match], action: str, data: Mapping[str, int], priority: int = 0
    ) -> None:
        nkey = self._normalise_key(key)
        self._check_action(action, data)
        i = self._find(nkey, priority)
        if i is None:
            raise P4ModelError(f"{self.name}: no entry for key {key}")
        self._replace(i, nkey, action, data, priority)

    def add_or_modify(
        self, key: Mapping[str, Match], action: str, data: Mapping[str, int], priority: int = 0
    ) -> None:
        nkey = self._normalise_key(key)
        if speedups.ENABLED:
            self._upsert(nkey, action, data, priority, self._positions())
            return
        if self._find(nkey, priority) is None:
            self.add(key, action, data, priority)
        else:
            self.modify(key, action, data, priority)

    def _upsert(
        self,
        nkey: dict[str, Match],
        action: str,
        data: Mapping[str, int],
        priority: int,
        pos: dict[tuple[tuple[object, ...], int], int],
    ) -> None:
        """add_or_modify's fast path for a key already normal: the key
        placed once (add and modify would each place it again), `pos` the
        position index, fetched once by a caller that writes many."""
        if not self._action_fits(action, data):
            self._check_action(action, data)
        kid = self._key_id(nkey, priority)
        i = pos.get(kid)
        if i is None:
            if len(self._entries) >= self.size:
                raise P4ModelError(f"{self.name}: table full ({self.size} entries)")
            pos[kid] = len(self._entries)
            self._entries.append(Entry(nkey, action, dict(data), priority))
        else:
            self._entries[i] = Entry(nkey, action, dict(data), priority)
        self._groups = None

    def upsert_many(self, items: Sequence[UpsertItem]) -> None:
        """add_or_modify of each item, in order (a controller's push: PMQECN's
        drain tables are thousands of entries per switch, each an upsert).
        The first item refused raises EntryRefused naming its index, the
        items before it written, as add_or_modify one by one leaves them.
        An empty table given the items an empty table of its shape was
        given before takes that table's state (_take_fresh_build)."""
        pos = self._positions() if speedups.ENABLED else None
        fresh = pos is not None and not self._entries and len(items) >= FRESH_BUILD_MIN
        if fresh and self._take_fresh_build(items):
            return
        for k, it in enumerate(items):
            try:
                if pos is None:
                    self.add_or_modify(it.key, it.action or "", it.data, it.priority)
                else:
                    nkey = self._normalise_key(it.key)
                    self._upsert(nkey, it.action or "", it.data, it.priority, pos)
            except P4ModelError as exc:
                raise EntryRefused(k, str(exc)) from None
        if fresh:
            self._keep_fresh_build(items)

    def _shape(self) -> tuple[object, ...]:
        return (self.name, self.size, tuple(self.keys.values()), tuple(self.actions.values()))

    def _keep_fresh_build(self, items: Sequence[UpsertItem]) -> None:
        """Remember this empty table's state after `items`, its lookup
        groups built now, for the next empty table of its shape given the
        same item objects (_take_fresh_build)."""
        self._groups = self._build_groups()
        _FRESH_BUILDS[self._shape()] = _FreshBuild(
            tuple(items), tuple(self._entries), dict(self._positions()), self._groups
        )

    def _take_fresh_build(self, items: Sequence[UpsertItem]) -> bool:
        """Take the state an empty table of this shape reached from the very
        same item objects, in the same order: the loop would rebuild it
        entry for entry. Items are a controller's writes, never changed
        after they are made (PMQECN's drain writes are made once a process
        and pushed to every switch); entries and groups are replaced, never
        changed in place, so the tables share them; the list and position
        index, which writes change in place, are copied."""
        b = _FRESH_BUILDS.get(self._shape())
        if b is None or len(b.items) != len(items) or not all(map(is_, items, b.items)):
            return False
        self._entries = list(b.entries)
        self._pos = dict(b.pos)
        self._groups = b.groups
        return True

    def delete(self, key: dict[str, Match], priority: int = 0) -> None:
        nkey = self._normalise_key(key)
        i = self._find(nkey, priority)
        if i is None:
            raise P4ModelError(f"{self.name}: no entry for key {key}")
        del self._entries[i]
        self._changed()

    def clear(self) -> None:
        self._entries.clear()
        self._changed()
        self.default = self._initial_default

    def set_default(self, action: str, data: dict[str, int]) -> None:
        self._check_action(action, data)
        self.default = (action, dict(data))

    def _masks(self, e: Entry) -> tuple[int, ...]:
        out = []
        for fname, spec in self.keys.items():
            m = e.key[fname]
            if spec.match == "exact":
                out.append((1 << spec.bits) - 1)
            elif spec.match == "lpm":
                assert m.prefix_len is not None
                out.append(((1 << m.prefix_len) - 1) << (spec.bits - m.prefix_len))
            else:
                assert m.mask is not None
                out.append(m.mask)
        return tuple(out)

    def _build_groups(self) -> list[tuple[tuple[int, ...], dict[tuple[int, ...], tuple]]]:
        lpm = [f for f, spec in self.keys.items() if spec.match == "lpm"]
        by_mask: dict[tuple[int, ...], dict[tuple[int, ...], tuple]] = {}
        for i, e in enumerate(self._entries):
            masks = self._masks(e)
            values = tuple(e.key[f].value for f in self.keys)
            # Longest prefix wins; among ternary entries the lowest priority
            # value; among equals the earliest entry.
            rank = (*(e.key[f].prefix_len or 0 for f in lpm), -e.priority, -i)
            group = by_mask.setdefault(masks, {})
            best = group.get(values)
            if best is None or rank > best[0]:
                group[values] = (rank, e)
        return list(by_mask.items())

    def _ranked_groups(self) -> list[tuple[tuple[int, ...], dict[tuple[int, ...], tuple], tuple]]:
        """The mask groups, best entry first: an entry's rank is unique (it
        ends in the entry's position), so once the best hit so far outranks
        every entry of the groups left, none of them can win."""
        groups = self._groups
        assert groups is not None
        if self._ranked_for is not groups:
            self._ranked = sorted(
                ((masks, group, max(hit[0] for hit in group.values())) for masks, group in groups),
                key=lambda item: item[2],
                reverse=True,
            )
            self._ranked_for = groups
        return self._ranked

    def lookup(self, values: dict[str, int]) -> LookupResult:
        if self._groups is None:
            self._groups = self._build_groups()
        if speedups.ENABLED:
            # A remembered answer inline (issue 48: a P4 program looks up
            # 6-11 tables per packet, nearly all answered from memory, and
            # the call into _lookup_ranked was a third of a lookup's cost).
            memo_for = self._memo_for
            if memo_for[0] is self._groups and memo_for[1] is self.default:
                found = self._memo.get(tuple([values[f] for f in self.keys]))
                if found is not None:
                    return found
            return self._lookup_ranked(values)
        key = [values[f] for f in self.keys]
        best: tuple | None = None
        for masks, group in self._groups:
            hit = group.get(tuple(v & m for v, m in zip(key, masks, strict=True)))
            if hit is not None and (best is None or hit[0] > best[0]):
                best = hit
        if best is None:
            return LookupResult(False, self.default[0], dict(self.default[1]))
        e: Entry = best[1]
        return LookupResult(True, e.action, dict(e.data))

    def _lookup_ranked(self, values: dict[str, int]) -> LookupResult:
        # A ternary table such as PMQECN's vq_drain spreads its entries over
        # dozens of masks; the reference tries every mask on every packet.
        key = tuple([values[f] for f in self.keys])
        state = (self._groups, self.default)
        if self._memo_for[0] is not state[0] or self._memo_for[1] is not state[1]:
            self._memo = {}
            self._memo_for = state
        memo = self._memo
        found = memo.get(key)
        if found is None:
            found = self._search_ranked(key)
            if len(memo) < MEMO_KEYS:
                memo[key] = found
        return found

    def _search_ranked(self, key: tuple[int, ...]) -> LookupResult:
        best: tuple | None = None
        for masks, group, top in self._ranked_groups():
            if best is not None and best[0] >= top:
                break
            hit = group.get(tuple(map(and_, key, masks)))
            if hit is not None and (best is None or hit[0] > best[0]):
                best = hit
        # The action data is the entry's own dict, not a copy: the pipelines
        # only read it (a copy per lookup was a measurable share of a run).
        if best is None:
            return LookupResult(False, self.default[0], self.default[1])
        e: Entry = best[1]
        return LookupResult(True, e.action, e.data)


class Register:
    """A Register<bit<width>, I>(size, initial); one value per index in each pipe.

    Every pipe holds its own copy (Tofino's registers are per pipe); the
    data plane reads and writes `values`, the copy of the pipe running the
    packet (select_pipe), and the control plane writes every pipe
    (write_all) as BF-Runtime does with the all-pipes target. One pipe, the
    default, is the single-pipe model every program was written against.

    A register whose entry is a struct of equal halves (a pair, updated by one
    RegisterAction) names its `members`; its value packs them, first member
    in the high half: BF-Runtime shows each member as `<name>.<member>`."""

    def __init__(
        self,
        name: str,
        width: int,
        size: int,
        initial: int = 0,
        members: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.width = width
        self.size = size
        self.initial = initial
        self.members = members
        self.values = [initial] * size
        self._pipes: list[list[int]] = [self.values]
        self._pipe = 0

    @property
    def member_width(self) -> int:
        return self.width // max(len(self.members), 1)

    def split(self, value: int) -> dict[str, int]:
        """A packed value as {member: value}, first member first."""
        w = self.member_width
        n = len(self.members)
        return {
            m: (value >> (w * (n - 1 - i))) & ((1 << w) - 1) for i, m in enumerate(self.members)
        }

    def pack(self, parts: dict[str, int]) -> int:
        w = self.member_width
        value = 0
        for m in self.members:
            value = (value << w) | parts[m]
        return value

    @property
    def max(self) -> int:
        return (1 << self.width) - 1

    # -- pipes -----------------------------------------------------------
    @property
    def pipes(self) -> int:
        return len(self._pipes)

    def set_pipes(self, pipes: int) -> None:
        """`pipes` copies, each at the initial value (as the program loads)."""
        self._pipes = [[self.initial] * self.size for _ in range(pipes)]
        self._pipe = 0
        self.values = self._pipes[0]

    def select_pipe(self, pipe: int) -> None:
        """The data plane's reads and writes go to `pipe`'s copy from now on."""
        self._pipe = pipe
        self.values = self._pipes[pipe]

    def _check_pipe(self, pipe: int) -> None:
        if isinstance(pipe, bool) or not isinstance(pipe, int) or not 0 <= pipe < len(self._pipes):
            raise P4ModelError(f"{self.name}: no pipe {pipe!r} (the switch has {self.pipes})")

    def _check_index(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.size:
            raise P4ModelError(f"{self.name}: index {index!r} outside 0..{self.size - 1}")

    def read(self, index: int) -> int:
        # type() is int: a bool or a subclass goes the checked way, which
        # names it (issue 48: registers are read and written per packet).
        if speedups.ENABLED and type(index) is int and 0 <= index < self.size:
            return self.values[index]
        self._check_index(index)
        return self.values[index]

    def write(self, index: int, value: int) -> None:
        if (
            speedups.ENABLED
            and type(index) is int
            and type(value) is int
            and 0 <= index < self.size
            and value >= 0
            and not value >> self.width
        ):
            self.values[index] = value
            return
        self._check_index(index)
        _check_width(f"{self.name}[{index}]", value, self.width)
        self.values[index] = value

    def read_pipe(self, pipe: int, index: int) -> int:
        """One pipe's copy of a cell, whichever pipe the data plane runs."""
        self._check_pipe(pipe)
        self._check_index(index)
        return self._pipes[pipe][index]

    def read_pipes(self, index: int) -> list[int]:
        """The cell in every pipe, in pipe order (BF-Runtime's register read)."""
        self._check_index(index)
        return [values[index] for values in self._pipes]

    def write_all(self, index: int, value: int) -> None:
        """A control-plane write: every pipe's copy (the all-pipes target)."""
        self._check_index(index)
        _check_width(f"{self.name}[{index}]", value, self.width)
        for values in self._pipes:
            values[index] = value

    def put_pipes(self, index: int, values: list[int]) -> None:
        """Each pipe's copy back as read_pipes gave it (an undo)."""
        for copy, value in zip(self._pipes, values, strict=True):
            copy[index] = value

    def copies(self) -> list[list[int]]:
        """Every pipe's values, copied (a snapshot)."""
        return [list(values) for values in self._pipes]

    def restore_copies(self, copies: list[list[int]]) -> None:
        self._pipes = [list(values) for values in copies]
        self._pipe = min(self._pipe, len(self._pipes) - 1)
        self.values = self._pipes[self._pipe]

    def clear(self) -> None:
        self._pipes = [[self.initial] * self.size for _ in self._pipes]
        self.values = self._pipes[self._pipe]


class Counter:
    """An indirect Counter of packets and bytes (BF-Runtime reads 64-bit values).

    Per pipe like a register: the data plane counts into the running pipe's
    copy (`packets`, `bytes`), a read returns the sum over the pipes (as
    BF-Runtime reads a counter over all pipes) and a write sets every pipe."""

    def __init__(
        self, name: str, size: int, kind: Literal["packets", "bytes", "packets_and_bytes"]
    ):
        self.name = name
        self.size = size
        self.kind = kind
        self.packets = [0] * size
        self.bytes = [0] * size
        self._pipes: list[tuple[list[int], list[int]]] = [(self.packets, self.bytes)]
        self._pipe = 0

    @property
    def pipes(self) -> int:
        return len(self._pipes)

    def set_pipes(self, pipes: int) -> None:
        self._pipes = [([0] * self.size, [0] * self.size) for _ in range(pipes)]
        self._pipe = 0
        self.packets, self.bytes = self._pipes[0]

    def select_pipe(self, pipe: int) -> None:
        self._pipe = pipe
        self.packets, self.bytes = self._pipes[pipe]

    def _check_index(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.size:
            raise P4ModelError(f"{self.name}: index {index!r} outside 0..{self.size - 1}")

    def count(self, index: int, nbytes: int) -> None:
        if not (speedups.ENABLED and type(index) is int and 0 <= index < self.size):
            self._check_index(index)
        self.packets[index] += 1
        self.bytes[index] += nbytes

    def read(self, index: int) -> tuple[int, int]:
        self._check_index(index)
        if len(self._pipes) == 1:
            return self.packets[index], self.bytes[index]
        return (
            sum(packets[index] for packets, _ in self._pipes),
            sum(nbytes[index] for _, nbytes in self._pipes),
        )

    def read_pipe(self, pipe: int, index: int) -> tuple[int, int]:
        """One pipe's count (BF-Runtime reads it with that pipe as the target)."""
        self._check_index(index)
        if isinstance(pipe, bool) or not isinstance(pipe, int) or not 0 <= pipe < len(self._pipes):
            raise P4ModelError(f"{self.name}: no pipe {pipe!r} (the switch has {self.pipes})")
        packets, nbytes = self._pipes[pipe]
        return packets[index], nbytes[index]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        self._check_index(index)
        for pipe_packets, pipe_bytes in self._pipes:
            pipe_packets[index] = packets
            pipe_bytes[index] = nbytes

    def copies(self) -> list[tuple[list[int], list[int]]]:
        return [(list(packets), list(nbytes)) for packets, nbytes in self._pipes]

    def restore_copies(self, copies: list[tuple[list[int], list[int]]]) -> None:
        self._pipes = [(list(packets), list(nbytes)) for packets, nbytes in copies]
        self._pipe = min(self._pipe, len(self._pipes) - 1)
        self.packets, self.bytes = self._pipes[self._pipe]

    def clear(self) -> None:
        self._pipes = [([0] * self.size, [0] * self.size) for _ in self._pipes]
        self.packets, self.bytes = self._pipes[self._pipe]


@dataclass
class MirrorSession:
    """`$mirror.cfg` `$normal` session. max_pkt_len truncates the copy's
    packet bytes (the mirror header is not counted); 0 means no truncation."""

    sid: int
    egress_port: int
    direction: Literal["INGRESS", "EGRESS", "BOTH"] = "BOTH"
    max_pkt_len: int = 0
    enabled: bool = True
    # $egress_port_queue and $ingress_cos: the copy's queue and iCoS.
    queue: int = 0
    icos: int = 0


@dataclass
class Output:
    port: int
    data: bytes
    qid: int = 0


@dataclass
class P4Objects:
    tables: dict[str, Table] = field(default_factory=dict)
    registers: dict[str, Register] = field(default_factory=dict)
    counters: dict[str, Counter] = field(default_factory=dict)

    def table(self, t: Table) -> Table:
        self.tables[t.name] = t
        return t

    def register(self, r: Register) -> Register:
        self.registers[r.name] = r
        return r

    def counter(self, c: Counter) -> Counter:
        self.counters[c.name] = c
        return c
