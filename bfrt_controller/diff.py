# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What an apply would change: each intended write against what the switch holds.

Reads only (a read-only BF-Runtime client works beside a running daemon).
An apply writes the config's whole intended state and removes nothing, so
the diff lists the writes that would change something: entries the switch
lacks or holds with other values, registers, TM queues and ports that
differ. A backend that cannot read mirror sessions back has them listed as
such ("unknown"), not as changes.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from .ports import canonical_fec, canonical_speed, same_port
from .switch import (
    EntryWrite,
    MirrorSessionWrite,
    PortWrite,
    RegisterClear,
    RegisterWrite,
    Switch,
    TmPfcWrite,
    TmPoolWrite,
    TmPpgWrite,
    TmQueueWrite,
    TmShapingWrite,
    Write,
)


@dataclass(frozen=True)
class Difference:
    change: str  # add | change | remove | unknown
    where: str
    current: str
    intended: str
    # The table of an entry's difference ("" for registers, TM, ports).
    table: str = ""


@dataclass(frozen=True)
class TableSummary:
    """The differences of one constant table (thousands of fixed entries,
    such as PMQECN's drain tables), counted instead of listed."""

    table: str
    counts: tuple[tuple[str, int], ...]  # (change, how many)

    def line(self) -> str:
        short = self.table.rsplit(".", 1)[-1]
        parts = ", ".join(f"{n:,} {c}{'' if n == 1 else 's'}" for c, n in self.counts)
        return f"{short}: {parts}"


def summarise(
    diffs: Sequence[Difference], constant_tables: Collection[str]
) -> tuple[list[Difference], list[TableSummary]]:
    """The differences to list one by one, and one summary per constant table."""
    listed = [d for d in diffs if d.table not in constant_tables]
    by_table: dict[str, Counter[str]] = {}
    for d in diffs:
        if d.table in constant_tables:
            by_table.setdefault(d.table, Counter())[d.change] += 1
    summaries = [TableSummary(t, tuple(sorted(c.items()))) for t, c in sorted(by_table.items())]
    return listed, summaries


def as_json(
    writes_checked: int, listed: Sequence[Difference], summaries: Sequence[TableSummary]
) -> dict[str, object]:
    return {
        "writes_checked": writes_checked,
        "changes": sum(d.change != "unknown" for d in listed)
        + sum(n for s in summaries for c, n in s.counts if c != "unknown"),
        "differences": [asdict(d) for d in listed],
        "constant_tables": [{"table": s.table, **dict(s.counts)} for s in summaries],
    }


def fmt_field(name: str, value: object) -> str:
    """A key or data field as an operator reads it: MACs as aa:bb:..,
    IPv4 addresses dotted."""
    if not isinstance(value, int) or isinstance(value, bool):
        return str(value)
    low = name.lower().rsplit(".", 1)[-1]
    if "mac" in low and 0 <= value < 1 << 48:
        return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))
    if ("addr" in low or low in ("src", "dst", "ip")) and 0 <= value < 1 << 32:
        return str(ipaddress.IPv4Address(value))
    return str(value)


def _fmt(values: dict[str, object]) -> str:
    return ", ".join(f"{k}={fmt_field(k, v)}" for k, v in values.items()) or "-"


def _key_text(name: str, m: object) -> str:
    value = fmt_field(name, getattr(m, "value", m))
    prefix_len = getattr(m, "prefix_len", None)
    mask = getattr(m, "mask", None)
    if prefix_len is not None:
        return f"{name}={value}/{prefix_len}"
    if mask is not None:
        return f"{name}={value}&&&{fmt_field(name, mask)}"
    return f"{name}={value}"


def _entry_where(w: EntryWrite) -> str:
    key = ", ".join(_key_text(k, m) for k, m in w.key.items())
    prio = f" priority {w.priority}" if w.priority else ""
    return f"{w.table} [{key}]{prio}"


def _diff_entry(switch: Switch, w: EntryWrite) -> Difference | None:
    if w.op == "default":
        return Difference("unknown", f"{w.table} default", "not read back", w.action or "", w.table)
    st = switch.read_entry(w.table, w.key, w.priority)
    if w.op == "delete":
        if st is None:
            return None
        return Difference("remove", _entry_where(w), st.action, "-", w.table)
    intended = f"{w.action} {_fmt(dict(w.data))}"
    if st is None:
        return Difference("add", _entry_where(w), "-", intended, w.table)
    held: dict[str, object] = {k: st.data.get(k) for k in w.data}
    if st.action != w.action or held != dict(w.data):
        # Another action (the AQM family's switch of mechanism): its own
        # parameters, not the intended action's names with None beside them.
        shown: dict[str, object] = dict(st.data) if st.action != w.action else held
        current = f"{st.action} {_fmt(shown)}"
        return Difference("change", _entry_where(w), current, intended, w.table)
    return None


def _diff_tm(switch: Switch, w: TmQueueWrite) -> Difference | None:
    held: dict[str, object] = {}
    if w.dwrr_weight is not None:
        held["dwrr_weight"] = switch.read_tm_weight(w.port, w.queue)
    if w.max_priority is not None:
        held["max_priority"] = switch.read_tm_priority(w.port, w.queue)
    if held == w.fields():
        return None
    where = f"tm port {w.port} queue {w.queue}"
    return Difference("change", where, _fmt(held), _fmt(dict(w.fields())))


def _diff_port(switch: Switch, w: PortWrite) -> Difference | None:
    st = switch.read_port(w.dev_port)
    where = f"$PORT {w.dev_port}"
    if w.delete:
        return None if st is None else Difference("remove", where, "added", "-")
    intended = f"{w.speed} x{w.lanes} {w.fec} {w.autoneg} enable={w.enable}"
    if st is None:
        return Difference("add", where, "-", intended)
    if same_port(st, w):
        return None
    held = (
        f"{canonical_speed(st.speed)} x{st.lanes} {canonical_fec(st.fec)} {st.autoneg} "
        f"enable={st.enable}"
    )
    return Difference("change", where, held, intended)


def diff_one(switch: Switch, w: Write) -> Difference | None:
    if isinstance(w, EntryWrite):
        return _diff_entry(switch, w)
    if isinstance(w, RegisterWrite):
        now = switch.read_register(w.register, w.index)
        if now == w.value:
            return None
        return Difference("change", f"{w.register}[{w.index}]", str(now), str(w.value))
    if isinstance(w, RegisterClear):
        # A clear is a run-time step (a PMQECN cycle's idle half), never
        # configured state: no intended state produces one.
        raise TypeError(f"{w.describe()}: a register clear is not configured state")
    if isinstance(w, TmQueueWrite):
        return _diff_tm(switch, w)
    if isinstance(w, MirrorSessionWrite):
        return _diff_mirror(switch, w)
    if isinstance(w, TmShapingWrite):
        # BFCC's shaping loop writes these at run time (never intended state).
        now_kbps = switch.read_tm_shaping(w.port, w.queue)
        if now_kbps == w.max_rate_kbps:
            return None
        where = f"tm port {w.port}" + ("" if w.queue is None else f" queue {w.queue}")

        def fmt(kbps: int | None) -> str:
            return "off" if kbps is None else f"{kbps} kb/s"

        return Difference("change", where, fmt(now_kbps), fmt(w.max_rate_kbps))
    if isinstance(w, TmPfcWrite):
        return _diff_pfc(switch, w)
    if isinstance(w, TmPpgWrite):
        return _diff_ppg(switch, w)
    if isinstance(w, TmPoolWrite):
        return _diff_pool(switch, w)
    return _diff_port(switch, w)


def _diff_mirror(switch: Switch, w: MirrorSessionWrite) -> Difference | None:
    where = f"mirror session {w.sid}"
    try:
        held = switch.read_mirror_session(w.sid)
    except NotImplementedError:
        return Difference("unknown", where, "not read back", w.describe())
    return _held_or_absent(where, held, w, w.delete)


class _Described(Protocol):
    def describe(self) -> str: ...


def _held_or_absent(
    where: str, held: _Described | None, w: _Described, delete: bool
) -> Difference | None:
    """A row the switch may or may not hold (a mirror session, a PPG)
    against the write that adds, changes or deletes it; None when they agree."""
    if delete:
        return None if held is None else Difference("remove", where, held.describe(), "")
    if held == w:
        return None
    before = "" if held is None else held.describe()
    return Difference("add" if held is None else "change", where, before, w.describe())


def _diff_pool(switch: Switch, w: TmPoolWrite) -> Difference | None:
    """The pool's size and the iCoS limits the write sets, against the switch,
    as the target reads them back (Switch.holds: an ASIC keeps PFC limits in 8-cell units)."""
    w = switch.holds(w)
    held = switch.read_tm_pool(w.pool)
    limits = dict(held.pfc_limit_cells)
    now = TmPoolWrite(
        w.pool,
        held.size_cells if w.size_cells is not None else None,
        tuple((c, limits.get(c, 0)) for c, _ in w.pfc_limit_cells),
    )
    if now == w:
        return None
    return Difference("change", f"tm pool {w.pool}", now.describe(), w.describe())


def _diff_ppg(switch: Switch, w: TmPpgWrite) -> Difference | None:
    # On an ASIC the hysteresis (xoff - xon) reads back in the TM's 8-cell units.
    w = switch.holds(w)
    held = switch.read_tm_ppg(w.port, w.ppg_id)
    return _held_or_absent(f"tm ppg {w.ppg_id} port {w.port}", held, w, w.delete)


def _diff_pfc(switch: Switch, w: TmPfcWrite) -> Difference | None:
    """The port's PFC mode and CoS map and each lossless queue's CoS,
    against the write (mode_rx is read-only on the switch: not compared)."""
    queues = w.queues or (0,)
    now = [switch.read_tm_pfc(w.port, q) for q in queues]
    want_cos = [w.pfc_cos if w.queues else now[0][2]] * len(queues)
    got = (now[0][0], tuple(now[0][1]), [n[2] for n in now])
    want = (w.mode_tx, w.cos_to_icos, want_cos)
    if got == want:
        return None

    def fmt(v: tuple[str, tuple[int, ...], list[int]]) -> str:
        cos = ",".join(str(c) for c in v[2]) if w.queues else "-"
        cos_map = ",".join(str(c) for c in v[1])
        return f"tx {v[0]}, cos_to_icos {cos_map}, queue cos {cos}"

    return Difference("change", f"tm port {w.port} PFC", fmt(got), fmt(want))


def diff_writes(switch: Switch, writes: Sequence[Write]) -> list[Difference]:
    return [d for w in writes if (d := diff_one(switch, w)) is not None]
