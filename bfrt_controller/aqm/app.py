# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM family on a switch: push the intended state; change queues'
settings, or switch a queue's mechanism, as one batch.

The app owns the intended state (the config plus what an operator changed
since): per queue an aqm_queue entry (its slot in the registers, curve,
mechanism and ECN mode; a DualPI2 pair's two queues, their l4s_queue
classification and the TM's strict priority of L over C) and per curve
RED's red_level, CoDel's codel_due or the PI's pi_terms entries
(levels.py, pi.py). A change is validated whole (the queue's fields, then
the chip's limits and table budgets of the whole config) before one batch
writes it (switch_batch: a queue is never without an entry, and a switched
queue's slot is zeroed in every register).
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
    port_guard_rows,
    queue_key,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..common import QueueChange as Change
from ..errors import ConfigError
from ..switch import EntryWrite, Switch, TmQueueWrite, Write
from . import names as n
from .batch import switch_batch
from .config import AqmConfig, QueueSpec, check_against, curve_of
from .levels import codel_entries, codel_tail_step_ticks, red_entries, ticks_ceil
from .mechanisms import ALL_SETTINGS, CURVE_FAMILY, MODES, USED_BY
from .pi import level_of, pi_terms_entries

log = logging.getLogger("tofcc.aqm")

QUEUES = "queues"
# Every entry of a queue has one priority: its ranges never overlap.
ENTRY_PRIORITY = 1
# What `set` may change, and its type; `mechanism` switches the queue's
# mode (its other settings back to that mechanism's defaults).
SETTABLE: dict[str, type | tuple[str, ...]] = {
    "mechanism": MODES,
    "min_th_cells": int,
    "max_th_cells": int,
    "max_p": float,
    "w_q_shift": int,
    "target_us": float,
    "interval_us": float,
    "count_cap": int,
    "target_delay_us": float,
    "t_update_us": float,
    "alpha_per_s": float,
    "beta_per_s": float,
    "mark_max": float,
    "l_queue": int,
    "l_step_us": float,
    "k_cells": int,
    "k1_cells": int,
    "k2_cells": int,
    "ecn": bool,
}
# What a change reports: the mode, then every setting.
CHANGE_FIELDS = ("mode", *(f for f in SETTABLE if f != "mechanism"))
assert set(CHANGE_FIELDS) - {"mode"} == ALL_SETTINGS
# The L4S queue of a DualPI2 pair is served before its classic queue.
L_PRIORITY = 1
C_PRIORITY = 0
ECN_TO_L4S = {0: False, 1: True, 2: False, 3: True}  # Not-ECT, ECT(1), ECT(0), CE


def queue_settings(q: QueueSpec) -> str:
    """The settings a queue's mode uses, for `tofcc status`."""
    if q.mode == "red":
        return (
            f"min_th {q.min_th_cells} max_th {q.max_th_cells} cells, max_p {q.max_p:g}, "
            f"w_q 2^-{q.w_q_shift}"
        )
    if q.mode == "codel":
        return f"target {q.target_us:g} us, interval {q.interval_us:g} us, count_cap {q.count_cap}"
    if q.mode in ("pie", "dualpi2"):
        g = q.pi_gains()
        text = (
            f"target {g.target_us:g} us, update {q.setting('t_update_us'):g} us, "
            f"alpha_per_s {g.alpha:g}, beta_per_s {g.beta:g}"
        )
        if q.mode == "pie":
            return f"{text}, mark below {q.setting('mark_max'):g}"
        return f"{text}; L queue {q.l_queue}, step {q.setting('l_step_us'):g} us"
    if q.mode == "dctcp":
        return f"K {q.setting('k_cells')} cells"
    if q.mode == "dadctcp":
        return f"K1 {q.setting('k1_cells')}, K2 {q.setting('k2_cells')} cells"
    return "-"


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
        """The config with `live`'s changes, each queue and the whole checked.
        A queue whose mode changed keeps only its port, queue and ECN mode
        from the config: the other mechanism's settings do not carry over."""
        queues = []
        for q in self.config.queues:
            changes = live.get(queue_key(q.port, q.queue), {})
            base = q.model_dump()
            if changes.get("mode", q.mode) != q.mode:
                base = {"port": q.port, "queue": q.queue, "ecn": q.ecn}
            try:
                queues.append(QueueSpec.model_validate({**base, **changes}))
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
        """Change some queues' settings (or mechanism), all or none: every
        value is checked, and the whole config against the chip, before one
        batch is written."""
        modes = {queue_key(q.port, q.queue): q.mode for q in self.effective.queues}
        live = {k: dict(v) for k, v in self.live.items()}
        for (port, queue), fields in updates.items():
            key = queue_key(port, queue)
            if key not in modes:
                raise ConfigError("queue", f"no AQM queue {key} (known: {', '.join(modes)})")
            for name in fields:
                if name not in SETTABLE:
                    raise ConfigError(
                        f"{key} {name}", f"not settable (settable: {', '.join(SETTABLE)})"
                    )
            mode = str(fields.get("mechanism", modes[key]))
            queue_live = live.setdefault(key, {})
            if mode != modes[key]:
                # A switch: the earlier mechanism's changes go with it.
                queue_live.clear()
                queue_live["mode"] = mode
            for name, value in fields.items():
                if name == "mechanism":
                    continue
                if name not in USED_BY[mode]:
                    raise ConfigError(
                        f"set {key} {name}",
                        f"queue {key} runs {mode}, which does not use {name} "
                        f"({mode} uses {', '.join(sorted(USED_BY[mode])) or 'nothing'})",
                    )
                queue_live[name] = value
        new = self._with(live, "set")
        return self._commit(live, new, why)

    def _commit(self, live: dict[str, dict[str, Any]], new: AqmConfig, why: str) -> list[Change]:
        old = self.effective
        changes = [
            Change(queue_key(a.port, a.queue), name, getattr(a, name), getattr(b, name), why)
            for a, b in zip(old.queues, new.queues, strict=True)
            for name in CHANGE_FIELDS
            if getattr(a, name) != getattr(b, name)
        ]
        if not changes:
            return []
        switched = [
            (slot, a.mode, b.mode)
            for slot, (a, b) in enumerate(zip(old.queues, new.queues, strict=True))
            if a.mode != b.mode
        ]
        self.switch.write(switch_batch(self._writes_for(old), self._writes_for(new), switched))
        self.live, self.effective = live, new
        for ch in changes:
            log.info("queue %s %s %s -> %s (%s)", ch.queue, ch.what, ch.old, ch.new, ch.why)
        return changes

    def queue_writes(self, slot: int, q: QueueSpec, cfg: AqmConfig | None = None) -> list[Write]:
        """The queue's aqm_queue entry, and a DualPI2 pair's L queue entry,
        classification and priorities (its curve's entries are curve_writes')."""
        key = {n.K_EGRESS_PORT: Match(q.port), n.K_EGRESS_QID: Match(q.queue)}
        curve = curve_of(cfg or self.effective, q)
        ecn = int(q.ecn)
        if q.mode == "none":
            return [EntryWrite(n.AQM_QUEUE, key, n.NO_AQM)]
        if q.mode == "red":
            data = {"slot": slot, "curve": curve, "ecn": ecn, "block_last": (1 << q.w_q_shift) - 1}
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_RED, data)]
        if q.mode == "codel":
            data = {
                "slot": slot,
                "curve": curve,
                "ecn": ecn,
                "target_ns": round(q.target_us * 1000),
                "interval_ticks": ticks_ceil(q.interval_us * 1000),
                "tail_step_ticks": codel_tail_step_ticks(q.interval_us, q.count_cap),
            }
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_CODEL, data)]
        if q.mode == "dctcp":
            data = {"ecn": ecn, "k_cells": int(q.setting("k_cells"))}
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_DCTCP, data)]
        if q.mode == "dadctcp":
            k1, k2 = int(q.setting("k1_cells")), int(q.setting("k2_cells"))
            data = {"slot": slot, "ecn": ecn, "k1_cells": k1, "k2_cells": k2}
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_DADCTCP, data)]
        # The PI: T_update as its negation in 64 ns ticks (the step is due
        # when now - T_update is at or after the last step).
        minus_t_update = -ticks_ceil(q.setting("t_update_us") * 1000) & 0xFFFFFFFF
        pi = {"slot": slot, "curve": curve, "ecn": ecn, "minus_t_update_ticks": minus_t_update}
        if q.mode == "pie":
            pie = {**pi, "mark_max_level": level_of(q.setting("mark_max"))}
            return [EntryWrite(n.AQM_QUEUE, key, n.SET_PIE, pie)]
        return self._dualpi2_writes(slot, q, key, pi)

    def _dualpi2_writes(
        self, slot: int, q: QueueSpec, key: dict[str, Match], pi: dict[str, int]
    ) -> list[Write]:
        assert q.l_queue is not None
        l_key = {n.K_EGRESS_PORT: Match(q.port), n.K_EGRESS_QID: Match(q.l_queue)}
        l_data = {"slot": slot, "step_ns": round(q.setting("l_step_us") * 1000)}
        writes: list[Write] = [
            EntryWrite(n.AQM_QUEUE, key, n.SET_DUALPI2_C, pi),
            EntryWrite(n.AQM_QUEUE, l_key, n.SET_DUALPI2_L, l_data),
        ]
        writes += [
            EntryWrite(
                n.L4S_QUEUE,
                {n.K_UCAST_EGRESS_PORT: Match(q.port), n.K_IPV4_ECN: Match(ecn)},
                n.SET_L4S_QUEUE,
                {"qid": q.l_queue if l4s else q.queue},
            )
            for ecn, l4s in ECN_TO_L4S.items()
        ]
        # Strict priority, L over C: the RFC's time-shifted priority as
        # close as the TM allows (tna/aqm/README.md).
        writes += [
            TmQueueWrite(q.port, q.l_queue, max_priority=L_PRIORITY),
            TmQueueWrite(q.port, q.queue, max_priority=C_PRIORITY),
        ]
        return writes

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
        if q.mode == "codel":
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
        if q.mode not in ("pie", "dualpi2"):
            return []
        return [
            EntryWrite(
                n.PI_TERMS,
                {n.K_CURVE: Match(curve), n.K_SOJOURN_NS: Match(t.value, mask=t.mask)},
                n.SET_PI_TERMS,
                {"term": t.term, "beta_term": t.beta_term},
                priority=ENTRY_PRIORITY,
            )
            for t in pi_terms_entries(q.pi_gains())
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
            curve = (str(CURVE_FAMILY[q.mode]), curve_of(cfg, q))
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
                if name not in CHANGE_FIELDS:
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
            intended = [
                w
                for w in self.queue_writes(slot, q) + self.curve_writes(q)
                if isinstance(w, EntryWrite)
            ]
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
                    **{f: q.setting(f) for f in sorted(USED_BY[q.mode] - {"ecn"})},
                    "settings": queue_settings(q),
                    "entries": f"{len(present)}/{len(intended)}",
                    "drops": self.switch.read_counter(n.AQM_DROPS, q.port)[0],
                    "marks": self.switch.read_counter(n.AQM_MARKS, q.port)[0],
                }
            )
        rows += port_guard_rows(self.switch, cfg)
        return rows
