# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The buffer's counters and the ports' pause counters: reads, and the
clears the SDE allows.

open-p4studio 1f97778f, bf_rt_tm/bf_rt_tm_tf1.json (tf2 the same fields):
- tm.counter.queue (tf1 line 3077, tf2 3609), keyed like tm.queue.cfg by
  (pg_id, pg_queue) on the port's pipe: drop_count_packets, usage_cells
  (read_only), watermark_cells (annotation clear_only);
- tm.counter.pool (tf1 3185, tf2 3717), keyed by pool (the eight app pools),
  device-wide: usage_cells (read_only), watermark_cells (clear_only);
- tm.counter.ppg (tf1 3790, tf2 4322), keyed by tm.ppg.cfg's ppg_counter_id
  on the port's pipe: drop_count_packets, guaranteed_min/shared_pool/
  skid_pool_usage_cells (read_only), watermark_cells (clear_only).
Each "supported_operations": [] with tableEntryMod and tableEntryGet only
(bf_rt_tm_table_impl_counters.cpp). A clear is an entry_mod writing 0 to
drop_count_packets and watermark_cells: the drop count is set to what is
written (bfTmQDropCacheSet), a watermark of 0 clears it
(bfTmQWatermarkClear; BfRtTMCounterQueueTable::tableEntryMod_helper line
692) and any other watermark is BF_INVALID_ARG (the clear_only check, lines
86-104). The pool's modify clears only its watermark (line 1148).

`$PORT_STAT` (bf_rt_port/bf_rt_port_tf1.json line 565, tf2 553):
`$TransmitPri<n>Pause1USCount` (tf1 line 1607, tf2 1595 for n = 0) and
`$ReceivePri<n>Pause1USCount` (tf1 1719, tf2 1707); its tableEntryMod with
every given field 0 clears those (portMgrPortThisStatClear,
bf_rt_port_table_impl.cpp line 1772).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hw_profiles import HwProfile
from models.switch.core import P4ModelError

from ...errors import ControllerError
from ...switch import TM_COUNTER_POOLS, BufferCounters, ClearWhat, PauseDirection
from .client import PORT_STAT_TABLE
from .ports import PortWriter
from .session import Session
from .tm import TmRowWriter

PFC_PRIORITIES = 8
_PAUSE_NAME = {"rx": "$ReceivePri{}Pause1USCount", "tx": "$TransmitPri{}Pause1USCount"}
_PPG_USAGES = ("guaranteed_min_usage_cells", "shared_pool_usage_cells", "skid_pool_usage_cells")


def pause_field(cos: int, direction: PauseDirection) -> str:
    if isinstance(cos, bool) or not 0 <= cos < PFC_PRIORITIES or direction not in _PAUSE_NAME:
        raise P4ModelError(f"{PORT_STAT_TABLE}: no {direction} pause counter for CoS {cos}")
    return _PAUSE_NAME[direction].format(cos)


class CounterReader:
    """Reads and clears of the TM counter tables and the pause counters."""

    def __init__(
        self, session: Session, tm: TmRowWriter, ports: PortWriter, profile: HwProfile
    ) -> None:
        self.s, self.tm, self.ports, self.profile = session, tm, ports, profile

    def _queue_row(self, port: int, queue: int) -> tuple[str, int, Any]:
        table = self.tm.name("tm.counter.queue")
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"{table}: dev_port {port} invalid")
        pipe, key, _ = self.tm.queue_key(port, queue, table)
        return table, pipe, key

    def queue(self, port: int, queue: int) -> BufferCounters:
        table, pipe, key = self._queue_row(port, queue)
        d = self._get(table, key, pipe, f"port {port} queue {queue}")
        return BufferCounters(
            int(d["usage_cells"]), int(d["watermark_cells"]), int(d["drop_count_packets"])
        )

    def pool(self, pool: str) -> BufferCounters:
        table = self.tm.name("tm.counter.pool")
        if pool not in TM_COUNTER_POOLS:
            raise P4ModelError(f"{table}: pool {pool!r} invalid")
        d = self._get(table, self.s.make_key(table, pool=pool), None, pool)
        return BufferCounters(int(d["usage_cells"]), int(d["watermark_cells"]))

    def ppg(self, port: int, ppg_id: int) -> BufferCounters:
        table, pipe, key = self._ppg_row(port, ppg_id)
        d = self._get(table, key, pipe, f"port {port} ppg {ppg_id}")
        usage = sum(int(d[u]) for u in _PPG_USAGES)
        return BufferCounters(usage, int(d["watermark_cells"]), int(d["drop_count_packets"]))

    def _ppg_row(self, port: int, ppg_id: int) -> tuple[str, int, Any]:
        cfg = self.tm.name("tm.ppg.cfg")
        pipe = port >> 7
        held = self.s.get(cfg, self.s.make_key(cfg, ppg_id=ppg_id), pipe)
        if held is None or int(held.to_dict().get("dev_port", -1)) != port:
            raise P4ModelError(f"{cfg}: no ppg {ppg_id} on dev_port {port}")
        counter_id = int(held.to_dict()["ppg_counter_id"])
        table = self.tm.name("tm.counter.ppg")
        return table, pipe, self.s.make_key(table, ppg_counter_id=counter_id)

    def _get(self, table: str, key: Any, pipe: int | None, what: str) -> dict[str, Any]:
        data = self.s.get(table, key) if pipe is None else self.s.get(table, key, pipe)
        if data is None:
            raise ControllerError(f"{table}: {what} not returned")
        row: dict[str, Any] = data.to_dict()
        return row

    def pause_us(self, port: int, cos: int, direction: PauseDirection) -> int:
        return self.ports.stat(port, pause_field(cos, direction))

    # -- clears ------------------------------------------------------------------
    def clear(self, what: ClearWhat, ports: Sequence[int], ppgs: Sequence[tuple[int, int]]) -> None:
        """switch.Switch.clear_tm_counters. Each row is one call of its own
        (the TM and the port manager take no part in a transaction); a
        clear that stops half way leaves the rest uncleared, nothing wrong."""
        if what in ("queues", "all"):
            zero = {"drop_count_packets": 0, "watermark_cells": 0}
            for port in ports:
                for q in range(len(self.tm.port_cfg(port)["egress_qid_queues"])):
                    table, pipe, key = self._queue_row(port, q)
                    self.s.call_one(
                        table, "entry_mod", key, self.s.make_data(table, zero, None), pipe
                    )
            for port, ppg_id in ppgs:
                table, pipe, key = self._ppg_row(port, ppg_id)
                self.s.call_one(table, "entry_mod", key, self.s.make_data(table, zero, None), pipe)
            table = self.tm.name("tm.counter.pool")
            data = self.s.make_data(table, {"watermark_cells": 0}, None)
            for pool in TM_COUNTER_POOLS:
                self.s.call_one(table, "entry_mod", self.s.make_key(table, pool=pool), data)
        if what in ("pfc", "all"):
            names = [pause_field(c, d) for d in ("rx", "tx") for c in range(PFC_PRIORITIES)]
            data = self.s.make_data(PORT_STAT_TABLE, dict.fromkeys(names, 0), None)
            for port in ports:
                key = self.s.make_key(PORT_STAT_TABLE, **{"$DEV_PORT": port})
                self.s.call_one(PORT_STAT_TABLE, "entry_mod", key, data)


__all__ = ["PFC_PRIORITIES", "CounterReader", "pause_field"]
