# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN on a switch: push the intended state; change a congestion point's
Eq. 1 as one batch; apply the threshold calculator's Q_P4QCN.

The app owns the *intended* state (the config plus what an operator changed
since). Every change is validated whole, then written as one batch: the
queue's stale ternary entries deleted and its new ones written together;
after a switch restart the whole intended state is pushed again.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Annotated, Any

from pydantic import Field

from models.p4qcn_thresholds import P4qcnThresholds
from models.switch.core import Match

from ..buffer_view import pause_rows
from ..common import (
    IntendedStateApp,
    Strict,
    by_table,
    check_chip,
    host_feedback_writes,
    port_guard_rows,
    queue_key,
)
from ..common import QueueChange as Change
from ..errors import ConfigError
from ..pfc_watchdog import PfcWatchdog, WatchdogEvent
from ..switch import EntryWrite, Switch, TmPfcWrite, TmPoolWrite, TmPpgWrite, Write
from ..validation import parse_model
from . import names as n
from .config import (
    MAX_FEEDBACK_INTERVAL_US,
    Mode,
    P4qcnConfig,
    QueueSpec,
    check_against,
    check_entry_budget,
    check_pfc_bound,
    check_queue,
    interval_ticks,
)
from .levels import ternary_entries

log = logging.getLogger("tofcc.p4qcn")

# status() sections (the ports section is the shared PORTS_SECTION).
QUEUES = "congestion points"
CLASSES = "traffic classes"
# Every entry of a queue has one priority: its ranges never overlap.
ENTRY_PRIORITY = 1
# What `set` may change, and its type.
SETTABLE: dict[str, type] = {
    "q_min_cells": int,
    "q_max_cells": int,
    "feedback_interval_us": float,
    "mode": str,
}
MODES: tuple[Mode, ...] = ("two_point", "three_point")
# `set watchdog=on|off`: the PFC watchdog's switch, kept in the live state
# (the model target's state file) under this key when off.
WATCHDOG_KEY = "watchdog"
WATCHDOG_STATES = ("on", "off")


class SavedQueue(Strict):
    """One queue's QueueLive as the model target's state file holds it."""

    q_min_cells: Annotated[int, Field(ge=0)]
    q_max_cells: Annotated[int, Field(ge=0)]
    feedback_interval_us: Annotated[float, Field(gt=0, le=MAX_FEEDBACK_INTERVAL_US)]
    mode: Mode


@dataclass
class QueueLive:
    """What can change at run time for one congestion point."""

    q_min_cells: int
    q_max_cells: int
    feedback_interval_us: float
    mode: Mode


class P4qcnApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: P4qcnConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        self.live: dict[str, QueueLive] = {
            queue_key(q.port, q.queue): QueueLive(
                q.q_min_cells, q.q_max_cells, q.feedback_interval_us, q.mode
            )
            for q in config.queues
        }
        pfc = config.pfc
        self.watchdog: PfcWatchdog | None = None
        # `enabled` as the config says; `set watchdog=on|off` moves it (live state).
        self.watchdog_default = pfc is None or pfc.watchdog is None or pfc.watchdog.enabled
        self.watchdog_on = self.watchdog_default
        if pfc is not None and pfc.watchdog is not None and pfc.honour:
            wd = pfc.watchdog
            self.watchdog = PfcWatchdog(
                switch,
                list(pfc.ports),
                pfc.cos,
                tuple(pfc.queues),
                wd.detection_ms / 1000,
                wd.restoration_ms / 1000,
                wd.action,
                pfc.generate,
                pfc.ignore_cos,
            )

    # ---- intended state --------------------------------------------
    def effective(self, q: QueueSpec) -> QueueSpec:
        """The queue as configured, with its live changes."""
        return q.model_copy(update=asdict(self.live[queue_key(q.port, q.queue)]))

    def queue_writes(self, q: QueueSpec) -> list[EntryWrite]:
        """The queue's feedback_probability entries (upserts)."""
        data = {
            "three_point": int(q.mode == "three_point"),
            "feedback_interval_ticks": interval_ticks(q.feedback_interval_us),
        }
        return [
            EntryWrite(
                n.FEEDBACK_PROBABILITY,
                {
                    n.K_EGRESS_PORT: Match(q.port),
                    n.K_EGRESS_QID: Match(q.queue),
                    n.K_DEPTH_CELLS: Match(e.value, mask=e.mask),
                },
                n.SET_LEVEL,
                {"level": e.level, **data},
                priority=ENTRY_PRIORITY,
            )
            for e in ternary_entries(
                q.q_min_cells, q.q_max_cells, q.alpha_per_cell, self.config.levels.max_steps
            )
        ]

    def intended_writes(self) -> list[Write]:
        cfg = self.config
        writes = host_feedback_writes(
            cfg.ports,
            cfg.routes,
            cfg.trusted_ports,
            cfg.source_bindings,
            # an egress mirror of the departing packet
            mirror_direction="EGRESS",
            truncate_bytes=n.FEEDBACK_TRUNCATE_BYTES,
            session_table=n.FEEDBACK_SESSION,
            set_session=n.SET_FEEDBACK_SESSION,
            feedback_queue=cfg.feedback.queue,
            feedback_icos=cfg.feedback.icos,
        )
        writes += [
            EntryWrite(
                n.TRAFFIC_CLASS,
                {n.K_DSCP: Match(tc.dscp)},
                n.SET_CLASS,
                {"qid": tc.queue, "icos": tc.icos},
            )
            for tc in cfg.traffic_classes
        ]
        for q in cfg.queues:
            writes += self.queue_writes(self.effective(q))
        return by_table(writes) + self.pfc_writes()

    def pfc_writes(self) -> list[Write]:
        """Each PFC port's TM flow control, as the watchdog leaves it (a port
        whose storm it is breaking stays unhonoured across a re-push)."""
        pfc = self.config.pfc
        if pfc is None:
            return []
        writes: list[Write] = []
        if pfc.generate:
            # The pools first: a PPG's headroom needs skid-pool cells to draw on.
            writes += [
                TmPoolWrite("IG_SKID_POOL", pfc.skid_pool),
                TmPoolWrite(
                    pfc.pool,
                    pfc.pool_size_cells,
                    tuple((c, pfc.xoff_cells) for c in pfc.lossless_icos),
                ),
            ]
            writes += [
                TmPpgWrite(
                    ppg_id(p),
                    p,
                    tuple(pfc.lossless_icos),
                    pfc.xoff_cells,
                    pfc.xon,
                    pfc.headroom_cells,
                    pfc.pool,
                )
                for p in pfc.ports
            ]
        if self.watchdog is not None:
            return writes + [self.watchdog.write_for(p) for p in pfc.ports]
        return writes + [
            TmPfcWrite(p, pfc.cos, tuple(pfc.queues), pfc.generate, pfc.honour, pfc.ignore_cos)
            for p in pfc.ports
        ]

    def service_cycle(self, now_s: float) -> int:
        # The PFC watchdog: each storm broken or restored is a write.
        return len(self.watchdog_once(now_s))

    def watchdog_period_s(self) -> float | None:
        """Half the detection time: a storm is then acted on within the
        detection time plus one poll, whatever the daemon's interval."""
        if self.watchdog is None or not self.watchdog_on:
            return None
        return self.watchdog.detection_s / 2

    def service_watchdog(self, now_s: float) -> int:
        return len(self.watchdog_once(now_s))

    def watchdog_once(self, now_s: float) -> list[WatchdogEvent]:
        """One poll of the PFC watchdog (none configured, or off: nothing)."""
        if self.watchdog is None or not self.watchdog_on:
            return []
        return self.watchdog.poll(now_s)

    def set_watchdog(self, on: bool) -> list[Change]:
        """`set watchdog=on|off`. Off: every port whose storm it is breaking
        honours pauses again (one batch), and it watches nothing until on;
        on: it starts again from a fresh baseline."""
        if self.watchdog is None:
            raise ConfigError(
                WATCHDOG_KEY, "no PFC watchdog in the config (pfc.watchdog, with pfc.honour)"
            )
        if on == self.watchdog_on:
            return []
        wd = self.watchdog
        if not on:
            breaking = [p for p, w in wd.watch.items() if w.storm]
            if breaking and wd.action == "forward":
                self.switch.write(
                    [
                        TmPfcWrite(p, wd.cos, wd.queues, wd.generate, True, wd.ignore_cos)
                        for p in breaking
                    ]
                )
        for w in wd.watch.values():
            w.storm, w.last_us, w.paused_s, w.quiet_s = False, None, 0.0, 0.0
        self.watchdog_on = on
        old, new = ("off", "on") if on else ("on", "off")
        log.info("PFC watchdog %s", new)
        return [Change("pfc", WATCHDOG_KEY, old, new, "operator")]

    def buffer_pools(self) -> list[str]:
        """The TM pool the config's PFC uses (buffer_view.py)."""
        pfc = self.config.pfc
        return [] if pfc is None or not pfc.generate else [pfc.pool]

    def buffer_ppgs(self) -> list[tuple[int, int]]:
        pfc = self.config.pfc
        return [] if pfc is None or not pfc.generate else [(p, ppg_id(p)) for p in pfc.ports]

    def live_state(self) -> dict[str, Any]:
        out: dict[str, Any] = {key: asdict(live) for key, live in self.live.items()}
        if self.watchdog_on != self.watchdog_default:
            out[WATCHDOG_KEY] = "on" if self.watchdog_on else "off"
        return out

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Validate every saved queue first (a corrupt state file is an error
        naming the field, never half-restored), then take them all."""
        state = dict(state)
        watchdog = state.pop(WATCHDOG_KEY, "on" if self.watchdog_default else "off")
        if watchdog not in WATCHDOG_STATES:
            raise ConfigError(f"{source}.{WATCHDOG_KEY}", f"must be on or off, got {watchdog!r}")
        restored: dict[str, QueueLive] = {}
        for key, values in state.items():
            if key not in self.live:
                raise ConfigError(
                    f"{source}.{key}", f"not a queue of the config (known: {', '.join(self.live)})"
                )
            saved = parse_model(SavedQueue, values, f"{source}.{key}")
            restored[key] = QueueLive(**saved.model_dump())
        candidate = self._candidate(restored, source)
        check_entry_budget(source, self.config, candidate)
        self.live.update(restored)
        self.watchdog_on = watchdog == "on"

    # ---- operator changes ------------------------------------------
    def _candidate(self, new_live: dict[str, QueueLive], field: str) -> list[QueueSpec]:
        """Every queue as it would be with `new_live`, each checked whole."""
        out: list[QueueSpec] = []
        for q in self.config.queues:
            key = queue_key(q.port, q.queue)
            live = new_live.get(key, self.live[key])
            if live.q_min_cells > live.q_max_cells:
                raise ConfigError(
                    f"{field} {key}",
                    f"q_min_cells {live.q_min_cells} exceeds q_max_cells {live.q_max_cells}",
                )
            spec = q.model_copy(update=asdict(live))
            check_queue(f"{field} {key}", spec, self.profile)
            check_pfc_bound(f"{field} {key} q_max_cells", spec, self.config.pfc)
            out.append(spec)
        return out

    def set_queues(
        self, updates: dict[tuple[int, int], dict[str, object]], why: str = "operator"
    ) -> list[Change]:
        """Change some queues' Eq. 1, all or none: every value is checked and
        the table budget counted before one batch is written."""
        new_live: dict[str, QueueLive] = {}
        for (port, queue), fields in updates.items():
            self.config.queue_index(port, queue)
            key = queue_key(port, queue)
            values = asdict(self.live[key])
            for name, value in fields.items():
                field = f"{key} {name}"
                if name not in SETTABLE:
                    raise ConfigError(field, f"not settable (settable: {', '.join(SETTABLE)})")
                values[name] = _check_value(field, name, value)
            new_live[key] = QueueLive(**values)
        candidate = self._candidate(new_live, "set")
        check_entry_budget("set", self.config, candidate)
        return self._commit(new_live, why)

    def apply_thresholds(self, t: P4qcnThresholds) -> list[Change]:
        """Q_P4QCN becomes every queue's Q_max (P = 1 from there); a Q_min
        above it comes down to it. Q_PFC is not written: the traffic
        manager's PFC pauses at the config's pfc.xoff_cells."""
        if t.chip != self.profile.chip:
            raise ConfigError("thresholds", f"computed for {t.chip}, switch is {self.profile.chip}")
        # The PFC threshold this switch is configured with, against the
        # Q_flight just computed for the link: Q_max must leave it below
        # Q_PFC, or PFC pauses the link before P4QCN's feedback takes effect
        # (seed 003, 3.2.2). set_queues then holds it to the config's
        # headroom_cells as every change is.
        for q in self.config.queues:
            check_pfc_bound(
                "pfc.xoff_cells",
                q.model_copy(update={"q_max_cells": t.q_p4qcn_cells}),
                self.config.pfc,
                t.q_flight_cells,
                f"{t.port_speed_gbps} Gb/s over {t.cable_m:g} m of cable (thresholds)",
            )
        updates: dict[tuple[int, int], dict[str, object]] = {}
        for q in self.config.queues:
            live = self.live[queue_key(q.port, q.queue)]
            updates[(q.port, q.queue)] = {
                "q_max_cells": t.q_p4qcn_cells,
                "q_min_cells": min(live.q_min_cells, t.q_p4qcn_cells),
            }
        return self.set_queues(updates, why="thresholds")

    def _commit(self, new_live: dict[str, QueueLive], why: str) -> list[Change]:
        changes: list[Change] = []
        for key, nl in new_live.items():
            old = self.live[key]
            for attr in SETTABLE:
                before, after = getattr(old, attr), getattr(nl, attr)
                if before != after:
                    changes.append(Change(key, attr, before, after, why))
        if not changes:
            return []
        writes: list[Write] = []
        old_state = {key: self.live[key] for key in new_live}
        for q in self.config.queues:
            key = queue_key(q.port, q.queue)
            if key not in new_live:
                continue
            before = self.queue_writes(self.effective(q))
            self.live[key] = new_live[key]
            after = self.queue_writes(self.effective(q))
            keep = {_entry_id(w) for w in after}
            # Stale ranges go in the same batch as the new ones.
            writes += [
                EntryWrite(w.table, w.key, priority=w.priority, op="delete")
                for w in before
                if _entry_id(w) not in keep
            ]
            writes += after
        try:
            self.switch.write(by_table(writes))
        except Exception:
            self.live.update(old_state)
            raise
        for ch in changes:
            log.info("queue %s %s %s -> %s (%s)", ch.queue, ch.what, ch.old, ch.new, ch.why)
        return changes

    # ---- status ----------------------------------------------------
    def status(self) -> list[dict[str, object]]:
        """Per congestion point, then per port (trust, source binding, what each
        guard dropped), as read back from the switch (not the intended state)."""
        cfg = self.config
        rows: list[dict[str, object]] = []
        for q in cfg.queues:
            eff = self.effective(q)
            intended = self.queue_writes(eff)
            present = [
                e
                for w in intended
                if (e := self.switch.read_entry(w.table, w.key, w.priority)) is not None
            ]
            ticks = present[0].data["feedback_interval_ticks"] if present else None
            three = present[0].data["three_point"] if present else None
            rows.append(
                {
                    "section": QUEUES,
                    "port": q.port,
                    "queue": q.queue,
                    "mode": None if three is None else MODES[three],
                    "q_min_cells": eff.q_min_cells,
                    "q_max_cells": eff.q_max_cells,
                    "interval_ticks": ticks,
                    "entries": f"{len(present)}/{len(intended)}",
                    "chosen": self.switch.read_counter(n.CHOSEN, q.port)[0],
                    "feedback_sent": self.switch.read_counter(n.FEEDBACK_SENT, q.port)[0],
                    "feedback_suppressed": self.switch.read_counter(n.FEEDBACK_SUPPRESSED, q.port)[
                        0
                    ],
                    "ce_marked": self.switch.read_counter(n.CE_MARKED, q.port)[0],
                }
            )
        for tc in cfg.traffic_classes:
            held = self.switch.read_entry(n.TRAFFIC_CLASS, {n.K_DSCP: Match(tc.dscp)})
            rows.append(
                {
                    "section": CLASSES,
                    "dscp": tc.dscp,
                    "queue": None if held is None else held.data.get("qid"),
                    "icos": None if held is None else held.data.get("icos"),
                    "lossless": cfg.pfc is not None and tc.icos in cfg.pfc.lossless_icos,
                }
            )
        rows += port_guard_rows(self.switch, cfg, (ps.port for ps in cfg.ports))
        if self.watchdog is not None:
            on = int(self.watchdog_on)
            rows += [r | {"enabled": on} for r in self.watchdog.status()]
        if cfg.pfc is not None:
            # Rx and Tx pause time of every priority, not only the lossless one.
            rows += pause_rows(self.switch, cfg.pfc.ports)
        return rows


def ppg_id(port: int) -> int:
    """The PPG the app allocates for a port: its number within its pipe plus
    one (PPG ids are 1..255 per pipe, 0 is NULL; a pipe has at most 72 front
    ports on Tofino, so one each fits the 128 PPGs of a pipe)."""
    return (port & 0x7F) + 1


def _entry_id(w: EntryWrite) -> tuple[object, ...]:
    return (tuple(sorted(w.key.items(), key=lambda kv: kv[0])), w.priority)


def _check_value(field: str, name: str, value: object) -> object:
    kind = SETTABLE[name]
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(field, f"must be a non-negative integer, got {value!r}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(field, f"must be a number, got {value!r}")
        v = float(value)
        if not 0 < v <= MAX_FEEDBACK_INTERVAL_US:
            raise ConfigError(field, f"must be in (0, {MAX_FEEDBACK_INTERVAL_US:g}] us, got {v!r}")
        return v
    if value not in MODES:
        raise ConfigError(field, f"must be one of {', '.join(MODES)}, got {value!r}")
    return value
