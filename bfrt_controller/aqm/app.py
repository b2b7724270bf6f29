"""RED and CoDel on a switch: push the intended state from the config.

The app owns the intended state (the config): per queue an aqm_queue entry
(its slot in the registers, mechanism and ECN mode) and its curve, RED's
red_level or CoDel's codel_due entries (bfrt_controller/aqm/levels.py).
The config is validated whole before anything is written; `apply` replaces
it as one batch.
"""

from __future__ import annotations

import logging
from typing import Any

from models.switch.core import Match

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    port_guard_row,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..errors import ConfigError
from ..switch import EntryWrite, Switch, Write
from . import names as n
from .config import AqmConfig, QueueSpec, check_against, curve_of
from .levels import codel_entries, codel_tail_step_ticks, red_entries, ticks_ceil

log = logging.getLogger("tofcc.aqm")

QUEUES = "queues"
# Every entry of a queue has one priority: its ranges never overlap.
ENTRY_PRIORITY = 1


class AqmApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: AqmConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config

    def queue_writes(self, slot: int, q: QueueSpec) -> list[EntryWrite]:
        """The queue's aqm_queue entry (its curve's entries are curve_writes')."""
        key = {n.K_EGRESS_PORT: Match(q.port), n.K_EGRESS_QID: Match(q.queue)}
        curve = curve_of(self.config, q)
        ecn = int(q.ecn)
        if q.mode == "red":
            data = {"slot": slot, "curve": curve, "ecn": ecn, "block_last": (1 << q.w_q_shift) - 1}
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_RED, data)]
        data = {
            "slot": slot,
            "curve": curve,
            "ecn": ecn,
            "target_ns": round(q.target_us * 1000),
            "interval_ticks": ticks_ceil(q.interval_us * 1000),
            "tail_step_ticks": codel_tail_step_ticks(q.interval_us, q.count_cap),
        }
        return [EntryWrite(n.AQM_QUEUE, key, n.SET_CODEL, data)]

    def curve_writes(self, q: QueueSpec) -> list[EntryWrite]:
        """The entries of the curve `q` reads (shared with every queue of the
        same settings)."""
        curve = curve_of(self.config, q)
        if q.mode == "red":
            entries = red_entries(
                q.min_th_cells, q.max_th_cells, q.max_p, q.w_q_shift, self.config.levels.max_steps
            )
            return [
                EntryWrite(
                    n.RED_LEVEL,
                    {n.K_CURVE: Match(curve), n.K_AVG_SUM_CELLS: Match(e.value, mask=e.mask)},
                    n.SET_LEVEL,
                    {"level": e.level, "hard": e.hard},
                    priority=ENTRY_PRIORITY,
                )
                for e in entries
            ]
        return [
            EntryWrite(
                n.CODEL_DUE,
                {n.K_CURVE: Match(curve), n.K_ELAPSED_TICKS: Match(e.value, mask=e.mask)},
                n.SET_DUE,
                {"due_count": e.due_count, "tail": e.tail},
                priority=ENTRY_PRIORITY,
            )
            for e in codel_entries(q.interval_us, q.count_cap)
        ]

    def intended_writes(self) -> list[Write]:
        cfg = self.config
        writes: list[Write] = [
            *route_writes(cfg.routes),
            *trusted_port_writes(cfg.trusted_ports),
            *source_binding_writes(cfg.source_bindings),
        ]
        written: set[tuple[str, int]] = set()
        for slot, q in enumerate(cfg.queues):
            writes += self.queue_writes(slot, q)
            curve = (q.mode, curve_of(cfg, q))
            if curve not in written:
                written.add(curve)
                writes += self.curve_writes(q)
        return by_table(writes)

    def live_state(self) -> dict[str, Any]:
        return {}

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Nothing changes at run time: a non-empty saved state is not ours."""
        if state:
            raise ConfigError(source, f"the aqm program keeps no run-time changes, got {state!r}")

    def status(self) -> list[dict[str, object]]:
        """Per queue (its entry as the switch holds it, drops and marks), then
        per port (trust, source binding)."""
        cfg = self.config
        rows: list[dict[str, object]] = []
        for slot, q in enumerate(cfg.queues):
            intended = self.queue_writes(slot, q) + self.curve_writes(q)
            present = [
                w
                for w in intended
                if self.switch.read_entry(w.table, w.key, w.priority) is not None
            ]
            rows.append(
                {
                    "section": QUEUES,
                    "port": q.port,
                    "queue": q.queue,
                    "mode": q.mode,
                    "ecn": q.ecn,
                    "entries": f"{len(present)}/{len(intended)}",
                    "drops": self.switch.read_counter(n.AQM_DROPS, q.port)[0],
                    "marks": self.switch.read_counter(n.AQM_MARKS, q.port)[0],
                }
            )
        ports = sorted(
            {r.port for r in cfg.routes}
            | set(cfg.trusted_ports)
            | {b.port for b in cfg.source_bindings}
        )
        bindings = {b.port: b.prefixes for b in cfg.source_bindings}
        rows += [port_guard_row(self.switch, p, bindings.get(p, [])) for p in ports]
        return rows
