# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`$PORT` and the port tables beside it (`$PORT_STAT`, `$PORT_STR_INFO`).

The port manager takes no part in pipe_mgr's transaction (as with TM), so
each port is one call of its own, written before the batch's tables, and
put back from what was read before if anything later is refused. A port
already as intended is not written: a `$SPEED` modify deletes and re-adds
the port (bf_rt_port_table_impl.cpp tableEntryMod), a link flap on every
re-push; a speed, lane or FEC change is a delete and an add, because a
modify checks the new speed against the old FEC.

Adding a port resets its TM settings (tm.py PORT_ADD_RESETS: PFC generation
off, shapers and queue rates to the port rate), so every add that replaces
a port the switch had is followed by those settings written back, and only
ports this batch changed are restored. The server reports a `$PORT` modify
as done even when a sub-call (autonegotiation, PFC map, enable) failed
(bf_rt_port_table_impl.cpp tableEntryMod_internal, the `return BF_SUCCESS`
at line 413 after each failure is only logged), so every written port is
read back and a difference is a refused write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hw_profiles import HwProfile
from models.switch.core import P4ModelError

from ...errors import ControllerError, SwitchUnavailable, WriteError
from ...ports import canonical_speed, same_port
from ...switch import PortState, PortWrite, Write
from .client import PORT_FIELDS, PORT_STAT_TABLE, PORT_STR_TABLE, PORT_TABLE, message, require_uint
from .outside import Step
from .session import Session
from .tm import TmRow, TmRowWriter


@dataclass
class PortRecord:
    """What restore needs: the write, the port before the batch, and the
    port's TM settings before the batch (empty when it was not added)."""

    w: PortWrite
    prior: PortState | None
    tm_before: list[TmRow]


def _as_write(dev_port: int, st: PortState) -> PortWrite:
    return PortWrite(dev_port, st.speed, st.fec, st.autoneg, st.lanes, st.enable, False, st.pfc_map)


class PortWriter:
    def __init__(self, session: Session, tm: TmRowWriter, profile: HwProfile) -> None:
        self.s = session
        self.tm = tm
        self.profile = profile

    def key(self, dev_port: int) -> Any:
        return self.s.make_key(PORT_TABLE, **{"$DEV_PORT": dev_port})

    def data(self, values: PortWrite, mode_too: bool = True) -> Any:
        fields: dict[str, Any] = {
            "$AUTO_NEGOTIATION": values.autoneg,
            "$PORT_ENABLE": values.enable,
            "$TX_PFC_EN_MAP": values.pfc_map,
            "$RX_PFC_EN_MAP": values.pfc_map,
        }
        if mode_too:
            fields = {
                "$SPEED": values.speed,
                "$FEC": values.fec,
                "$N_LANES": values.lanes,
                **fields,
            }
        return self.s.make_data(PORT_TABLE, fields, None)

    def _call(self, call: str, dev_port: int, data: Any = None) -> None:
        self.s.call_one(PORT_TABLE, call, self.key(dev_port), data)

    def _put(
        self, w: PortWrite, now: PortState | None, tm_before: list[TmRow], all_tm: bool = False
    ) -> bool:
        """Make the port `w` from `now` with the fewest calls; False when it
        already is. A port that is replaced gets `tm_before` back: all of it
        (`all_tm`, a restore) or, at a new speed, only the shapers that are on."""
        if same_port(now, w):
            return False
        if now is None:
            self._call("entry_add", w.dev_port, self.data(w))
            return True
        soft = replace(w, autoneg=now.autoneg, enable=now.enable, pfc_map=now.pfc_map)
        if same_port(now, soft):
            # tableEntryMod_internal sets these (the PFC maps too) on a port
            # as it runs; only a mode change needs the delete and add.
            self._call("entry_mod", w.dev_port, self.data(w, mode_too=False))
            return True
        self._call("entry_del", w.dev_port)
        self._call("entry_add", w.dev_port, self.data(w))
        # A new speed keeps the new port rate for shapers left off.
        speed_changed = canonical_speed(now.speed) != canonical_speed(w.speed)
        self.tm.put_back(tm_before, only_enabled=speed_changed and not all_tm)
        return True

    def _verify(self, w: PortWrite) -> None:
        held = self.read(w.dev_port)
        if w.delete:
            if held is not None:
                raise ControllerError(f"{PORT_TABLE} {w.dev_port}: still added after its delete")
            return
        if not same_port(held, w):
            shown = "not added" if held is None else _as_write(w.dev_port, held).describe()
            raise ControllerError(
                f"{PORT_TABLE} {w.dev_port}: the switch reported the write done but reads "
                f"back {shown} (a sub-call failed; the port manager only logs it)"
            )

    def _apply(self, r: PortRecord) -> bool:
        w = r.w
        if w.delete:
            if r.prior is None:
                return False
            self._call("entry_del", w.dev_port)
        elif not self._put(w, r.prior, r.tm_before):
            return False
        self._verify(w)
        return True

    def restore(self, done: list[PortRecord]) -> None:
        """Put every port of `done` back as it was, newest first, with the TM
        settings it had."""
        problems: list[str] = []
        for r in reversed(done):
            try:
                now = self.read(r.w.dev_port)
                if r.prior is None:
                    if now is not None:
                        self._call("entry_del", r.w.dev_port)
                    continue
                before = _as_write(r.w.dev_port, r.prior)
                if now is None:
                    self._call("entry_add", r.w.dev_port, self.data(before))
                    self.tm.put_back(r.tm_before)
                else:
                    self._put(before, now, r.tm_before, all_tm=True)
            except SwitchUnavailable:
                raise
            except Exception as exc:
                problems.append(f"$PORT {r.w.dev_port}: {message(exc)}")
        if problems:
            raise ControllerError(
                f"rollback of $PORT incomplete, ports are inconsistent: {'; '.join(problems)}"
            )

    def plan(self, writes: Sequence[Write]) -> tuple[list[int], list[Step[PortRecord]]]:
        rest = [i for i, w in enumerate(writes) if not isinstance(w, PortWrite)]
        steps: list[Step[PortRecord]] = []
        for i, w in enumerate(writes):
            if not isinstance(w, PortWrite):
                continue
            try:
                require_uint("$PORT: $DEV_PORT", w.dev_port, 32)
                self.data(w)  # names checked by the client before anything is sent
                prior = self.read(w.dev_port)
                # A port that is there is replaced only with its TM settings in hand.
                tm_before = self.tm.port_settings(w.dev_port) if prior is not None else []
            except SwitchUnavailable:
                raise
            # The server may refuse even a read of a port it does not have.
            except (
                ControllerError,
                P4ModelError,
                KeyError,
                ValueError,
                TypeError,
                AssertionError,
            ) as exc:
                raise WriteError(i, w.describe(), message(exc)) from None
            record = PortRecord(w, prior, tm_before)
            steps.append(Step(i, w.describe(), _bound(self._apply, record), record))
        return rest, steps

    # -- reads -----------------------------------------------------------------------
    def read(self, dev_port: int) -> PortState | None:
        # Only the fields used: a read of every field fails when any one of
        # the port manager's sub-reads does (serdes, 1588 timestamps...:
        # bf_rt_port_table_impl.cpp tableEntryGet_internal, `status |= sts`
        # from line 911 on).
        data = self.s.get(PORT_TABLE, self.key(dev_port), fields=PORT_FIELDS)
        if data is None:
            return None
        d = data.to_dict()
        return PortState(
            str(d["$SPEED"]),
            str(d["$FEC"]),
            str(d["$AUTO_NEGOTIATION"]),
            int(d["$N_LANES"]),
            bool(d["$PORT_ENABLE"]),
            bool(d.get("$PORT_UP", False)),
            # A map the two directions disagree on is not one this app wrote.
            int(d["$TX_PFC_EN_MAP"]) if d["$TX_PFC_EN_MAP"] == d["$RX_PFC_EN_MAP"] else -1,
        )

    def stat(self, port: int, name: str) -> int:
        """One `$PORT_STAT` counter from the MAC itself: without from_hw the
        server answers from a shadow the port manager refreshes every
        PORT_STATS_POLL_TMR_PERIOD_MS = 1000 ms (bf_pm.h line 28;
        bf_rt_port_table_impl.cpp BfRtPortStatTable::tableEntryGet_internal
        line 1846), stale for any poll faster than that; with it, the
        counters asked for are read directly (portMgrPortStatDirectGet, line
        1902), which refuses a port that is not added (bf_pm_intf.c
        bf_pm_port_stat_direct_get line 10449: BF_INVALID_ARG)."""
        if not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"{PORT_STAT_TABLE}: $DEV_PORT {port} invalid")
        key = self.s.make_key(PORT_STAT_TABLE, **{"$DEV_PORT": port})
        data = self.s.get(PORT_STAT_TABLE, key, from_hw=True, fields=(name,))
        if data is None:
            raise ControllerError(f"{PORT_STAT_TABLE}: no $DEV_PORT {port} on this device")
        return int(data.to_dict()[name])

    def front_panel(self, name: str) -> int | None:
        """The device port of a front-panel name ("1/0") as the switch's own
        port map has it: `$PORT_STR_INFO` (bf_rt_port_tf1.json line 2054,
        tf2 line 2042; key `$PORT_NAME`, data `$DEV_PORT`), which the port
        manager answers from its board map (portMgrPortStrToDevPortGet). It
        has no hardware to read: a from_hw read is BF_NOT_SUPPORTED
        (bf_rt_port_table_impl.cpp BfRtPortStrInfoTable::tableEntryGet line 2597)."""
        key = self.s.make_key(PORT_STR_TABLE, **{"$PORT_NAME": name})
        try:
            data = self.s.get(PORT_STR_TABLE, key, from_hw=False)
        except ControllerError as exc:
            # The port manager refuses a name its map lacks.
            raise ControllerError(
                f"{PORT_STR_TABLE}: the switch has no port {name!r}: {exc}"
            ) from exc
        if data is None:
            raise ControllerError(f"{PORT_STR_TABLE}: the switch has no port {name!r}")
        return int(data.to_dict()["$DEV_PORT"])


def _bound(fn: Any, record: PortRecord) -> Any:
    return lambda: fn(record)
