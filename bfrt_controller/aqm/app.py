# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""RED and CoDel on a switch: push the intended state; change queues'
settings as one batch.

The app owns the intended state (the config plus what an operator changed
since): per queue an aqm_queue entry (its slot in the registers, curve,
mechanism and ECN mode) and per curve RED's red_level or CoDel's codel_due
entries (bfrt_controller/aqm/levels.py). A change is validated whole (the
queue's fields, then the chip's limits and table budgets of the whole
config) before one batch deletes the stale entries and writes the new ones.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from models.switch.core import Match

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    diff_writes,
    port_guard_rows,
    queue_key,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..common import QueueChange as Change
from ..errors import ConfigError
from ..switch import EntryWrite, Switch, Write
from . import names as n
from .config import AqmConfig, QueueSpec, check_against, curve_of
from .levels import codel_entries, codel_tail_step_ticks, red_entries, ticks_ceil

log = logging.getLogger("tofcc.aqm")

QUEUES = "queues"
# Every entry of a queue has one priority: its ranges never overlap.
ENTRY_PRIORITY = 1
# What `set` may change, and its type.
SETTABLE: dict[str, type] = {
    "min_th_cells": int,
    "max_th_cells": int,
    "max_p": float,
    "w_q_shift": int,
    "target_us": float,
    "interval_us": float,
    "count_cap": int,
    "ecn": bool,
}
# The settings each mode reads; `set` refuses to write one to a queue whose
# mode ignores it (it would be reported as written and change nothing).
USED_BY: dict[str, frozenset[str]] = {
    "red": frozenset({"min_th_cells", "max_th_cells", "max_p", "w_q_shift", "ecn"}),
    "codel": frozenset({"target_us", "interval_us", "count_cap", "ecn"}),
}


def queue_settings(q: QueueSpec) -> str:
    """The settings a queue's mode uses, for `tofcc status`."""
    if q.mode == "red":
        return (
            f"min_th {q.min_th_cells} max_th {q.max_th_cells} cells, max_p {q.max_p:g}, "
            f"w_q 2^-{q.w_q_shift}"
        )
    return f"target {q.target_us:g} us, interval {q.interval_us:g} us, count_cap {q.count_cap}"


class AqmApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: AqmConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        # Per queue ("port/queue"), the fields changed since the config.
        self.live: dict[str, dict[str, Any]] = {}
        self.effective = config

    # ---- run-time changes ------------------------------------------
    def _with(self, live: dict[str, dict[str, Any]], field: str) -> AqmConfig:
        """The config with `live`'s changes, each queue and the whole checked."""
        queues = []
        for q in self.config.queues:
            changes = live.get(queue_key(q.port, q.queue), {})
            try:
                queues.append(QueueSpec.model_validate({**q.model_dump(), **changes}))
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = ".".join(str(x) for x in err["loc"])
                where = f"{field} {queue_key(q.port, q.queue)}{' ' + loc if loc else ''}"
                raise ConfigError(where, str(err["msg"]).removeprefix("Value error, ")) from None
        cfg = self.config.model_copy(update={"queues": queues})
        check_against(cfg, self.profile)
        return cfg

    def set_queues(
        self, updates: dict[tuple[int, int], dict[str, object]], why: str = "operator"
    ) -> list[Change]:
        """Change some queues' settings, all or none: every value is checked,
        and the whole config against the chip, before one batch is written."""
        modes = {queue_key(q.port, q.queue): q.mode for q in self.config.queues}
        live = {k: dict(v) for k, v in self.live.items()}
        for (port, queue), fields in updates.items():
            key = queue_key(port, queue)
            if key not in modes:
                raise ConfigError("queue", f"no AQM queue {key} (known: {', '.join(modes)})")
            for name, value in fields.items():
                if name not in SETTABLE:
                    raise ConfigError(
                        f"{key} {name}", f"not settable (settable: {', '.join(SETTABLE)})"
                    )
                if name not in USED_BY[modes[key]]:
                    raise ConfigError(
                        f"set {key} {name}",
                        f"queue {key} runs {modes[key]}, which does not use {name} "
                        f"({modes[key]} uses {', '.join(sorted(USED_BY[modes[key]]))})",
                    )
                live.setdefault(key, {})[name] = value
        new = self._with(live, "set")
        return self._commit(live, new, why)

    def _commit(self, live: dict[str, dict[str, Any]], new: AqmConfig, why: str) -> list[Change]:
        old = self.effective
        changes = [
            Change(queue_key(a.port, a.queue), name, getattr(a, name), getattr(b, name), why)
            for a, b in zip(old.queues, new.queues, strict=True)
            for name in SETTABLE
            if getattr(a, name) != getattr(b, name)
        ]
        if not changes:
            return []
        # Stale entries go in the same batch as the new ones.
        self.switch.write(diff_writes(self._writes_for(old), self._writes_for(new)))
        self.live, self.effective = live, new
        for ch in changes:
            log.info("queue %s %s %s -> %s (%s)", ch.queue, ch.what, ch.old, ch.new, ch.why)
        return changes

    def queue_writes(
        self, slot: int, q: QueueSpec, cfg: AqmConfig | None = None
    ) -> list[EntryWrite]:
        """The queue's aqm_queue entry (its curve's entries are curve_writes')."""
        key = {n.K_EGRESS_PORT: Match(q.port), n.K_EGRESS_QID: Match(q.queue)}
        curve = curve_of(cfg or self.effective, q)
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

    def curve_writes(self, q: QueueSpec, cfg: AqmConfig | None = None) -> list[EntryWrite]:
        """The entries of the curve `q` reads (shared with every queue of the
        same settings)."""
        cfg = cfg or self.effective
        curve = curve_of(cfg, q)
        if q.mode == "red":
            entries = red_entries(
                q.min_th_cells, q.max_th_cells, q.max_p, q.w_q_shift, cfg.levels.max_steps
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
        return self._writes_for(self.effective)

    def _writes_for(self, cfg: AqmConfig) -> list[Write]:
        writes: list[Write] = [
            *route_writes(cfg.routes),
            *trusted_port_writes(cfg.trusted_ports),
            *source_binding_writes(cfg.source_bindings),
        ]
        written: set[tuple[str, int]] = set()
        for slot, q in enumerate(cfg.queues):
            writes += self.queue_writes(slot, q, cfg)
            curve = (q.mode, curve_of(cfg, q))
            if curve not in written:
                written.add(curve)
                writes += self.curve_writes(q, cfg)
        return by_table(writes)

    def live_state(self) -> dict[str, Any]:
        return {key: dict(fields) for key, fields in self.live.items()}

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Validate every saved change first (a corrupt state file is an error
        naming the field, never half-restored), then take them all."""
        known = {queue_key(q.port, q.queue) for q in self.config.queues}
        live: dict[str, dict[str, Any]] = {}
        for key, fields in state.items():
            if key not in known or not isinstance(fields, dict):
                raise ConfigError(
                    f"{source}.{key}", f"not a queue of the config ({', '.join(known)})"
                )
            for name in fields:
                if name not in SETTABLE:
                    raise ConfigError(f"{source}.{key}.{name}", "not settable")
            live[key] = dict(fields)
        self.effective = self._with(live, source)
        self.live = live

    def status(self) -> list[dict[str, object]]:
        """Per queue (its entry as the switch holds it, drops and marks), then
        per port (trust, source binding)."""
        cfg = self.effective
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
                    # The settings the queue's mode uses, as it runs them now.
                    **{f: getattr(q, f) for f in sorted(USED_BY[q.mode] - {"ecn"})},
                    "settings": queue_settings(q),
                    "entries": f"{len(present)}/{len(intended)}",
                    "drops": self.switch.read_counter(n.AQM_DROPS, q.port)[0],
                    "marks": self.switch.read_counter(n.AQM_MARKS, q.port)[0],
                }
            )
        rows += port_guard_rows(self.switch, cfg)
        return rows
