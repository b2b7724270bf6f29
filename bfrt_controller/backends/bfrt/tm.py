# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The traffic manager's fixed per-port and per-queue rows (tm.queue.sched_cfg,
tm.{port,queue}.sched_shaping, tm.port.flowcontrol, tm.queue.cfg): modified
only, outside pipe_mgr's transaction, put back from the snapshot on a
refusal; and the port's TM settings that a `$PORT` add resets, kept and
written back by the port writer."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from hw_profiles import HwProfile
from models.switch.core import P4ModelError

from ...errors import ControllerError, SwitchUnavailable, WriteError
from ...switch import MAX_TM_PRIORITY, TmPfcWrite, TmQueueWrite, TmShapingWrite
from ..model import MAX_DWRR_WEIGHT, check_pfc, check_shaping
from .batch import Checked, Op, Slot, SlotKind
from .client import (
    SHAPING_PROVISIONING,
    SHAPING_UNIT,
    message,
    tm_from_switch,
    tm_to_switch,
)
from .session import Session

# What adding a port resets in the TM, per table: the fields written back
# after a port is re-added. open-p4studio 1f97778f: bf_tm_add_new_port
# (traffic_mgr/common/tm_port.c lines 953-958) sets fc_type (and fc_rx_type)
# to BF_TM_PAUSE_NONE and the port shaper to the port's rate with a 9216-byte
# burst; the chip's add_new_port sets every queue's max_rate to the port rate
# and min_rate to 0 (hw_intf/tm_tofino_hw_intf.c lines 6425-6426,
# tm_tof2_hw_intf.c lines 9176-9177). Weights and priorities are kept.
PORT_ADD_RESETS: dict[str, tuple[str, ...]] = {
    "tm.port.flowcontrol": ("mode_tx",),
    "tm.port.sched_shaping": ("unit", "provisioning", "max_rate", "max_burst_size"),
    "tm.queue.sched_shaping": (
        "unit",
        "provisioning",
        "max_rate",
        "max_burst_size",
        "min_rate",
        "min_burst_size",
    ),
}
# The shaper enables, kept to tell whether a rate is in force.
_ENABLES = {
    "tm.port.sched_shaping": "tm.port.sched_cfg",
    "tm.queue.sched_shaping": "tm.queue.sched_cfg",
}


@dataclass(frozen=True)
class TmRow:
    """One TM row's fields as read: table (without the tf1/tf2 prefix), the
    (port, queue) it belongs to (queue None for a port row), and values."""

    table: str
    port: int
    queue: int | None
    values: tuple[tuple[str, Any], ...]
    enabled: bool  # the row's shaper is on (always True for flow control)


class TmRowWriter:
    handles: tuple[type, ...] = (TmQueueWrite, TmShapingWrite, TmPfcWrite)
    kinds: tuple[SlotKind, ...] = ("tm",)

    def __init__(self, session: Session, profile: HwProfile) -> None:
        self.s = session
        self.profile = profile
        self.prefix = "tf2" if profile.chip == "tofino2" else "tf1"

    def name(self, table: str) -> str:
        return f"{self.prefix}.{table}"

    # -- check -------------------------------------------------------------------
    def check(self, i: int, w: TmQueueWrite | TmShapingWrite | TmPfcWrite) -> Checked:
        if isinstance(w, TmShapingWrite):
            return [(op, None) for op in self._check_shaping(i, w)]
        if isinstance(w, TmPfcWrite):
            return [(op, None) for op in self._check_pfc(i, w)]
        return [(self._check_queue(i, w), None)]

    def _op(self, i: int, what: str, table: str, at: tuple[int, int], values: dict) -> Op:
        op = Op(i, what, table, "tm", None, pipe=at[0] >> 7, tm=at)
        op.tm_fields = tuple(values)
        op.data = self.s.make_data(table, values, None)
        return op

    def _check_queue(self, i: int, w: TmQueueWrite) -> Op:
        p = self.profile
        sched = self.name("tm.queue.sched_cfg")
        if not 0 <= w.port <= p.max_port:
            raise P4ModelError(f"{sched}: port {w.port} invalid")
        if not 0 <= w.queue <= p.max_queue_id:
            raise P4ModelError(f"{sched}: queue {w.queue} invalid")
        if not w.fields():
            raise P4ModelError(f"{sched}: the write sets no field")
        if w.dwrr_weight is not None and (
            isinstance(w.dwrr_weight, bool) or not 1 <= w.dwrr_weight <= MAX_DWRR_WEIGHT
        ):
            raise P4ModelError(f"{sched}: dwrr_weight {w.dwrr_weight} invalid")
        if w.max_priority is not None and (
            isinstance(w.max_priority, bool) or not 0 <= w.max_priority <= MAX_TM_PRIORITY
        ):
            raise P4ModelError(f"{sched}: max_priority {w.max_priority} invalid")
        # The (pg_id, pg_queue) key needs a read of tm.port.cfg: prepare().
        return self._op(i, w.describe(), sched, (w.port, w.queue), tm_to_switch(w.fields()))

    def _check_shaping(self, i: int, w: TmShapingWrite) -> list[Op]:
        """Two calls: the shaper's rate (when it is turned on) and its enable
        bit, each on the port's or the queue's table."""
        try:
            check_shaping(w, self.profile.max_port, self.profile.max_queue_id)
        except P4ModelError as exc:
            raise P4ModelError(f"{self.prefix}.{exc}") from None
        level = "port" if w.queue is None else "queue"
        queue = 0 if w.queue is None else w.queue
        writes: list[tuple[str, dict[str, Any]]] = []
        if w.max_rate_kbps is not None:
            shaping = {
                "unit": SHAPING_UNIT,
                "provisioning": SHAPING_PROVISIONING,
                "max_rate": w.max_rate_kbps,
                "max_burst_size": w.max_burst_bytes,
            }
            writes.append((self.name(f"tm.{level}.sched_shaping"), shaping))
        enable = {"max_rate_enable": w.max_rate_kbps is not None}
        writes.append((self.name(f"tm.{level}.sched_cfg"), enable))
        ops = []
        for table, values in writes:
            op = self._op(i, w.describe(), table, (w.port, queue), values)
            op.tm_port_level = w.queue is None
            ops.append(op)
        return ops

    def _check_pfc(self, i: int, w: TmPfcWrite) -> list[Op]:
        """The port's tm.port.flowcontrol mode_tx and cos_to_icos, then each
        lossless queue's tm.queue.cfg pfc_cos (open-p4studio
        bf_rt_tm_tf1.json, tf2 the same fields; mode_rx is read-only there,
        switch.py says why it is not written)."""
        try:
            check_pfc(w, self.profile.max_port, self.profile.min_queues_per_port - 1)
        except P4ModelError as exc:
            raise P4ModelError(f"{self.prefix}.{exc}") from None
        writes: list[tuple[str, int | None, dict[str, Any]]] = [
            (
                self.name("tm.port.flowcontrol"),
                None,
                {"mode_tx": w.mode_tx, "cos_to_icos": list(w.cos_to_icos)},
            )
        ]
        writes += [(self.name("tm.queue.cfg"), q, {"pfc_cos": w.pfc_cos}) for q in w.queues]
        ops = []
        for table, qid, values in writes:
            op = self._op(i, w.describe(), table, (w.port, 0 if qid is None else qid), values)
            op.tm_port_level = qid is None
            ops.append(op)
        return ops

    # -- keys ----------------------------------------------------------------------
    def port_cfg(self, port: int) -> dict[str, Any]:
        table = self.name("tm.port.cfg")
        data = self.s.get(table, self.s.make_key(table, dev_port=port), port >> 7)
        if data is None:
            raise P4ModelError(f"{table}: no dev_port {port} on this device")
        cfg: dict[str, Any] = data.to_dict()
        return cfg

    def port_key(self, port: int, table: str) -> tuple[int, Any, tuple[int, int]]:
        """(pipe, key, (-1, port)) of a port-level TM table (tm.port.*): the
        port is looked up in tm.port.cfg first, so one the device lacks is
        refused before anything is written."""
        self.port_cfg(port)
        return port >> 7, self.s.make_key(table, dev_port=port), (-1, port)

    def queue_key(
        self, port: int, queue_id: int, table: str = ""
    ) -> tuple[int, Any, tuple[int, int]]:
        """(pipe, key, (pg_id, pg_queue)) of a port's queue in a queue-level TM
        table (tm.queue.sched_cfg unless named), from tm.port.cfg."""
        cfg = self.port_cfg(port)
        queues = list(cfg["egress_qid_queues"])
        if not 0 <= queue_id < len(queues):
            raise P4ModelError(
                f"{self.name('tm.port.cfg')}: dev_port {port} has {len(queues)} queues, "
                f"no queue {queue_id}"
            )
        pg = (int(cfg["pg_id"]), int(queues[queue_id]))
        key = self.s.make_key(table or self.name("tm.queue.sched_cfg"), pg_id=pg[0], pg_queue=pg[1])
        return port >> 7, key, pg

    def prepare(self, ops: list[Op], slots: dict[Hashable, Slot]) -> None:
        """Resolve each TM op's key from tm.port.cfg: nothing is written yet,
        so a port or queue the switch lacks refuses the batch."""
        for op in ops:
            if op.tm is None:
                continue
            try:
                if op.tm_port_level:
                    op.pipe, op.key, pg = self.port_key(op.tm[0], op.table)
                else:
                    op.pipe, op.key, pg = self.queue_key(*op.tm, table=op.table)
            except SwitchUnavailable:
                raise
            except (ControllerError, KeyError, ValueError, TypeError, AssertionError) as exc:
                raise WriteError(op.index, op.what, message(exc)) from None
            op.slot_id = ("tm", op.table, op.pipe, pg)
            slot = slots.setdefault(op.slot_id, Slot("tm", op.table, op.pipe, key=op.key))
            slot.fields.update(op.tm_fields)

    # -- snapshot and undo -------------------------------------------------------
    def read_prior(self, slot: Slot) -> None:
        data = self.s.get(slot.table, slot.key, slot.pipe)
        if data is None:
            raise ControllerError(f"{slot.table}: TM queue vanished")
        d = data.to_dict()
        # Only what the batch writes: undo must not touch the other fields.
        slot.prior = {f: tm_from_switch(f, d[f]) for f in sorted(slot.fields) if f in d}

    def restore(self, slot: Slot, exists_now: bool) -> None:
        data = self.s.make_data(slot.table, tm_to_switch(slot.prior), None)
        self.s.call_one(slot.table, "entry_mod", slot.key, data, slot.pipe)

    # -- a port's settings across a `$PORT` add ------------------------------------
    def port_settings(self, port: int) -> list[TmRow]:
        """Every row a port add resets, as it is now."""
        rows: list[TmRow] = []
        queues = len(self.port_cfg(port)["egress_qid_queues"])
        for table, fields in PORT_ADD_RESETS.items():
            for queue in [None] if table.startswith("tm.port") else list(range(queues)):
                values = self._row(table, port, queue)
                enable = _ENABLES.get(table)
                on = (
                    True
                    if enable is None
                    else bool(self._row(enable, port, queue)["max_rate_enable"])
                )
                kept = tuple((f, tm_from_switch(f, values[f])) for f in fields if f in values)
                rows.append(TmRow(table, port, queue, kept, on))
        return rows

    def _row(self, table: str, port: int, queue: int | None) -> dict[str, Any]:
        full = self.name(table)
        if queue is None:
            pipe, key, _ = self.port_key(port, full)
        else:
            pipe, key, _ = self.queue_key(port, queue, full)
        data = self.s.get(full, key, pipe)
        if data is None:
            raise ControllerError(f"{full}: port {port} queue {queue} not returned")
        row: dict[str, Any] = data.to_dict()
        return row

    def put_back(self, rows: list[TmRow], only_enabled: bool = False) -> None:
        """Write `rows` back after a port add, each only where the add changed
        it. `only_enabled`: a port whose speed changed keeps the new speed's
        rates unless a shaper is on."""
        for row in rows:
            if only_enabled and not row.enabled:
                continue
            now = self._row(row.table, row.port, row.queue)
            if all(tm_from_switch(f, now.get(f)) == v for f, v in row.values if f in now):
                continue
            full = self.name(row.table)
            if row.queue is None:
                pipe, key, _ = self.port_key(row.port, full)
            else:
                pipe, key, _ = self.queue_key(row.port, row.queue, full)
            data = self.s.make_data(full, tm_to_switch(dict(row.values)), None)
            self.s.call_one(full, "entry_mod", key, data, pipe)

    # -- reads -----------------------------------------------------------------------
    def queue_field(self, port: int, queue: int, name: str) -> int:
        p = self.profile
        if not 0 <= port <= p.max_port or not 0 <= queue <= p.max_queue_id:
            raise P4ModelError(f"tm.queue.sched_cfg: no queue {queue} on port {port}")
        return int(tm_from_switch(name, self._row("tm.queue.sched_cfg", port, queue)[name]))

    def read_shaping(self, port: int, queue: int | None = None) -> int | None:
        p = self.profile
        level = "port" if queue is None else "queue"
        if not 0 <= port <= p.max_port or (queue is not None and not 0 <= queue <= p.max_queue_id):
            raise P4ModelError(f"tm.{level}.sched_shaping: no port {port} queue {queue}")
        if not self._row(f"tm.{level}.sched_cfg", port, queue)["max_rate_enable"]:
            return None
        return int(self._row(f"tm.{level}.sched_shaping", port, queue)["max_rate"])

    def read_pfc(self, port: int, queue: int) -> tuple[str, tuple[int, ...], int]:
        if not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"{self.name('tm.port.flowcontrol')}: dev_port {port} invalid")
        m = self._row("tm.port.flowcontrol", port, None)
        cos = self._row("tm.queue.cfg", port, queue)
        cos_to_icos = tuple(int(c) for c in m["cos_to_icos"])
        return str(m["mode_tx"]), cos_to_icos, int(cos["pfc_cos"])


__all__ = ["PORT_ADD_RESETS", "TmRow", "TmRowWriter"]
