# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Start a command from what the switch holds, not from the config file.

The config file is the intended state at start-up; afterwards the switch
carries the truth (operators and the optimizer change it at run time). A
one-shot command against a switch (`set-threshold`, `set-weight`, `set`,
`optimize --once`) therefore first:

1. adopts the live values: each run-time value of the app (a number in its
   `live_state()`) that the app writes verbatim into a table entry or a TM
   queue is read back from there. Which entry field carries which value is
   found by asking the app itself (change the value by one, see which field
   of `intended_writes()` follows), so no program needs its own reader;
2. checks the switch still holds the program's state: a restarted
   bf_switchd comes back with empty tables, and so does one that was never
   configured. If any intended table entry is missing, the whole intended
   state (with the adopted values) is pushed before the command runs. An
   app's static tables (`static_tables()`: fixed entries, thousands in
   PMQECN's drain tables, that no live value moves) are checked by their
   first and last entry, and step 1 never looks in them.

`holds_state` is the cheap form of step 2 for a long-running controller: one
entry read per cycle, so a restart is noticed even when the cycle would
write nothing.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .switch import EntryWrite, Switch, TmQueueWrite, Write

log = logging.getLogger("tofcc.sync")

Path = tuple[str, ...]
Location = tuple[Hashable, ...]


class SyncedApp(Protocol):
    switch: Switch

    def intended_writes(self) -> list[Any]: ...

    def dynamic_writes(self) -> list[Any]: ...

    def static_tables(self) -> frozenset[str]: ...

    def push_all(self) -> None: ...

    def live_state(self) -> dict[str, Any]: ...

    def restore_live(self, state: dict[str, Any]) -> None: ...


@dataclass
class SyncReport:
    adopted: dict[str, tuple[int, int]] = field(default_factory=dict)  # path: (intended, live)
    missing: int = 0  # intended table entries the switch lacked
    pushed: int = 0  # writes pushed because of them


def _location(w: Write) -> Location | None:
    if isinstance(w, EntryWrite) and w.op not in ("delete", "default"):
        key = tuple(sorted((k, m.value, m.mask, m.prefix_len) for k, m in w.key.items()))
        return ("entry", w.table, key, w.priority)
    if isinstance(w, TmQueueWrite):
        return ("tm", w.port, w.queue)
    return None


def _values(w: Write) -> dict[str, int]:
    if isinstance(w, EntryWrite):
        return dict(w.data)
    if isinstance(w, TmQueueWrite):
        return w.fields()
    return {}


def _by_location(writes: list[Write]) -> dict[Location, tuple[Write, dict[str, int]]]:
    out: dict[Location, tuple[Write, dict[str, int]]] = {}
    for w in writes:
        loc = _location(w)
        if loc is not None:
            prev = out.get(loc)
            # Two TM writes to one queue (weight, then priority) merge.
            values = {**(prev[1] if prev else {}), **_values(w)}
            out[loc] = (w, values)
    return out


def _leaves(tree: Any, path: Path = ()) -> Iterator[tuple[Path, int]]:
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(tree, int) and not isinstance(tree, bool):
        yield path, tree


def _set(tree: dict[str, Any], path: Path, value: int) -> None:
    node = tree
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def carriers(app: SyncedApp) -> dict[Path, list[tuple[Location, str, int]]]:
    """For each numeric live value: the (write location, field, scale) that
    carry it as field = scale x value (scale 1: verbatim; a threshold kept in
    cells and written in bytes has the cell size)."""
    live = app.live_state()
    # Static tables carry no live value (common.IntendedStateApp).
    base = _by_location(app.dynamic_writes())
    found: dict[Path, list[tuple[Location, str, int]]] = {}
    try:
        for path, value in _leaves(live):
            for delta in (1, -1):
                trial = copy.deepcopy(live)
                _set(trial, path, value + delta)
                try:
                    app.restore_live(trial)
                    moved = _by_location(app.dynamic_writes())
                # A value one step off may be invalid for the app (a bound, an order).
                except Exception:
                    continue
                hits = []
                for loc, (_, fields) in base.items():
                    after = moved.get(loc, (None, {}))[1]
                    for name, v in fields.items():
                        step = after.get(name, v) - v
                        scale, rest = divmod(step, delta)
                        if step and not rest and scale > 0 and v == scale * value:
                            hits.append((loc, name, scale))
                if hits:
                    found[path] = hits
                    break
    finally:
        app.restore_live(live)
    return found


def _read(switch: Switch, w: Write) -> dict[str, int] | None:
    """The switch's current values at a write's location; None: no such entry."""
    if isinstance(w, EntryWrite):
        st = switch.read_entry(w.table, w.key, w.priority)
        return None if st is None else dict(st.data)
    assert isinstance(w, TmQueueWrite)
    out: dict[str, int] = {}
    if w.dwrr_weight is not None:
        out["dwrr_weight"] = switch.read_tm_weight(w.port, w.queue)
    if w.max_priority is not None:
        out["max_priority"] = switch.read_tm_priority(w.port, w.queue)
    return out


def sync_with_switch(app: SyncedApp) -> SyncReport:
    """Push everything if the switch lost any intended table entry; otherwise
    adopt the live values it holds (see the module doc)."""
    report = SyncReport()
    switch = app.switch
    writes = _by_location(app.dynamic_writes())
    cache: dict[Location, dict[str, int] | None] = {}

    def current(loc: Location) -> dict[str, int] | None:
        if loc not in cache:
            cache[loc] = _read(switch, writes[loc][0])
        return cache[loc]

    missing = [
        loc
        for loc, (w, _) in writes.items()
        if isinstance(w, EntryWrite) and _read_cached(cache, loc, switch, w) is None
    ]
    for w in _static_sample(app):
        loc = _location(w)
        if loc is not None and _read(switch, w) is None:
            missing.append(loc)
    if missing:
        # A switch that lost its tables holds defaults (a TM weight of 1023), not
        # values anyone chose: adopting them would push the defaults back.
        report.missing = len(missing)
        report.pushed = len(app.intended_writes())
        log.warning(
            "the switch lacks %d of the program's table entries (restarted?); "
            "pushing the whole intended state (%d writes)",
            len(missing),
            report.pushed,
        )
        app.push_all()
        return report
    report.adopted = _adopt(app, current)
    return report


def adopt_held_values(app: SyncedApp) -> dict[str, tuple[int, int]]:
    """Step 1 alone, reading only: the app's live values become those the
    switch holds (a read-only session: `tofcc save`, `diff`); what was adopted,
    as path: (intended, live). Nothing is pushed, whatever the switch lacks."""
    switch = app.switch
    writes = _by_location(app.dynamic_writes())
    cache: dict[Location, dict[str, int] | None] = {}
    return _adopt(app, lambda loc: _read_cached(cache, loc, switch, writes[loc][0]))


def _adopt(
    app: SyncedApp, current: Callable[[Location], dict[str, int] | None]
) -> dict[str, tuple[int, int]]:
    adopted_values: dict[str, tuple[int, int]] = {}
    live = app.live_state()
    adopted = copy.deepcopy(live)
    for path, where in carriers(app).items():
        old = dict(_leaves(live))[path]
        seen = {
            v[name] // scale
            for loc, name, scale in where
            if (v := current(loc)) is not None and name in v and v[name] % scale == 0
        }
        if len(seen) > 1:
            log.warning("%s differs across the switch (%s); keeping %d", "/".join(path), seen, old)
            continue
        if seen and (new := seen.pop()) != old:
            _set(adopted, path, new)
            adopted_values["/".join(path)] = (old, new)
    if adopted_values:
        app.restore_live(adopted)
        for what, (old, new) in adopted_values.items():
            log.info("live value from the switch: %s = %d (intended %d)", what, new, old)
    return adopted_values


def _static_sample(app: SyncedApp) -> list[Write]:
    """The first and last intended entry of each static table: a switch that
    lost the table (a restart) lacks both, one that holds the program's
    state has them, and reading all of them (thousands) would make every
    one-shot command slow."""
    static = app.static_tables()
    if not static:
        return []
    ends: dict[str, list[EntryWrite]] = {}
    for w in app.intended_writes():
        if isinstance(w, EntryWrite) and w.table in static and _location(w) is not None:
            got = ends.setdefault(w.table, [w, w])
            got[1] = w
    return [
        w for first, last in ends.values() for w in ((first,) if first is last else (first, last))
    ]


def _read_cached(
    cache: dict[Location, dict[str, int] | None], loc: Location, switch: Switch, w: Write
) -> dict[str, int] | None:
    if loc not in cache:
        cache[loc] = _read(switch, w)
    return cache[loc]


def holds_state(app: SyncedApp) -> bool:
    """One read: does the switch still have the app's first table entry?"""
    for w in app.intended_writes():
        if isinstance(w, EntryWrite) and _location(w) is not None:
            return app.switch.read_entry(w.table, w.key, w.priority) is not None
    return True
