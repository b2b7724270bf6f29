# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP on a switch: push the thresholds; every interval, Algorithm 2
(models/dadctcp_thresholds.py) moves threshold from idle queues of a port
to busy ones and the app writes what moved as one batch.

Queue depths come from the program's `last_depth` register: the depth the
queue had as its latest departure left it (cells), the switch's own view of
the queue, read once per interval. The register keeps that value until the
next departure, so `last_departure` (when it left) tells a queue that went
idle from one that still holds packets (`idle_queues`): an idle queue reads
as empty. K per queue is kept in packets (the
paper's unit) and written as cells: K1 = K x cells per packet and K2 = 2 K1
(DA-DCTCP), or K2 = K x cells + 1 with the slope off (DCTCP's q > K).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from models.dadctcp_thresholds import TICK_NS, idle_queues, reallocate, whole_packets
from models.switch.core import Match

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    port_guard_rows,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..errors import ConfigError
from ..switch import EntryWrite, Switch, Write
from . import names as n
from .config import MODES, DadctcpConfig, Mode, check_against, check_k_port

log = logging.getLogger("tofcc.dadctcp")

QUEUES = "queues"
SETTABLE = ("mode", "k_port_packets", "drop_not_ect")
# What live_state writes: the whole saved state, and each port's.
LIVE_KEYS = frozenset({"mode", "ports"})
PORT_LIVE_KEYS = frozenset({"k_port_packets", "drop_not_ect", "k_packets"})


@dataclass
class Change:
    where: str  # "port" or "port/queue"
    what: str
    old: object
    new: object
    why: str


class DadctcpApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: DadctcpConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        self.mode: Mode = config.mode
        self.cells_per_packet = switch.profile.bytes_to_cells(config.packet_bytes)
        # Live thresholds per (port, queue), packets; K_port and drop per port.
        self.k_packets: dict[tuple[int, int], int] = {
            (p.port, q.queue): q.k_packets for p in config.ports for q in p.queues
        }
        self.k_port: dict[int, int] = {p.port: p.k_port_packets for p in config.ports}
        self.drop_not_ect: dict[int, bool] = {p.port: p.drop_not_ect for p in config.ports}
        # Register slots in config order (the P4's 1024 slots).
        self.slot: dict[tuple[int, int], int] = {key: i for i, key in enumerate(self.k_packets)}
        self.last_round_s: float | None = None
        # Departure stamps per slot as read the previous round (None: no round yet).
        self.last_stamps: list[int] | None = None
        self.idle_age_ticks = max(1, round(config.idle_age_us * 1000 / TICK_NS))

    # ---- intended state --------------------------------------------
    def threshold_write(self, port: int, queue: int) -> EntryWrite:
        k_cells = self.k_packets[(port, queue)] * self.cells_per_packet
        if self.mode == "dadctcp":
            k1, k2, use_slope = k_cells, 2 * k_cells, 1
        else:
            k1, k2, use_slope = k_cells + 1, k_cells + 1, 0
        return EntryWrite(
            n.QUEUE_THRESHOLD,
            {n.K_EGRESS_PORT: Match(port), n.K_EGRESS_QID: Match(queue)},
            n.SET_THRESHOLD,
            {
                "slot": self.slot[(port, queue)],
                "k1_cells": k1,
                "k2_cells": k2,
                "use_slope": use_slope,
                "drop_not_ect": int(self.drop_not_ect[port]),
            },
        )

    def threshold_writes(self) -> list[Write]:
        return [self.threshold_write(p, q) for p, q in self.k_packets]

    def intended_writes(self) -> list[Write]:
        cfg = self.config
        writes: list[Write] = [
            *route_writes(cfg.routes),
            *trusted_port_writes(cfg.trusted_ports),
            *source_binding_writes(cfg.source_bindings),
            *(
                EntryWrite(n.QUEUE_SELECT, {n.K_DSCP: Match(d.dscp)}, n.SET_QUEUE, {"qid": d.queue})
                for d in cfg.dscp_queues
            ),
            *self.threshold_writes(),
        ]
        return by_table(writes)

    def static_tables(self) -> frozenset[str]:
        return frozenset({n.IPV4_LPM, n.TRUSTED_PORTS, n.SOURCE_BINDINGS, n.QUEUE_SELECT})

    def live_state(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "ports": {
                str(p): {
                    "k_port_packets": self.k_port[p],
                    "drop_not_ect": self.drop_not_ect[p],
                    "k_packets": {str(q): k for (pp, q), k in self.k_packets.items() if pp == p},
                }
                for p in self.k_port
            },
        }

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Validate the whole saved state first, then take it (never half).
        It holds what live_state writes and nothing else: an unknown key, a
        port written " 4" or a count written "18" is a corrupt file, refused
        naming the field rather than read as something it does not say."""
        _known_keys(source, state, LIVE_KEYS)
        mode = state.get("mode", self.mode)
        if mode not in MODES:
            raise ConfigError(f"{source}.mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
        ports = state.get("ports", {})
        if not isinstance(ports, dict):
            raise ConfigError(f"{source}.ports", "must be a mapping of port to its state")
        k_packets = dict(self.k_packets)
        k_port = dict(self.k_port)
        drop = dict(self.drop_not_ect)
        for key, saved in ports.items():
            field = f"{source}.ports.{key}"
            port = _key(field, key)
            if port not in self.k_port or not isinstance(saved, dict):
                raise ConfigError(field, "not a port of the config, or not a mapping")
            _known_keys(field, saved, PORT_LIVE_KEYS)
            kp = _int(f"{field}.k_port_packets", saved.get("k_port_packets"))
            check_k_port(f"{field}.k_port_packets", kp, self.config.packet_bytes, self.profile)
            k_port[port] = kp
            d = saved.get("drop_not_ect")
            if not isinstance(d, bool):
                raise ConfigError(f"{field}.drop_not_ect", f"must be true or false, got {d!r}")
            drop[port] = d
            ks = saved.get("k_packets", {})
            queues = {q for (pp, q) in self.k_packets if pp == port}
            if not isinstance(ks, dict):
                raise ConfigError(f"{field}.k_packets", "must be a mapping of queue to packets")
            by_queue = {_key(f"{field}.k_packets.{q}", q): k for q, k in ks.items()}
            if set(by_queue) != queues or len(by_queue) != len(ks):
                raise ConfigError(
                    f"{field}.k_packets", f"must give every queue of {sorted(queues)} once"
                )
            for q, k in by_queue.items():
                k_packets[(port, q)] = _int(f"{field}.k_packets.{q}", k, minimum=1)
            total = sum(k for (pp, _), k in k_packets.items() if pp == port)
            if total != kp:
                raise ConfigError(f"{field}.k_packets", f"sum to {total}, not {kp} (Eq. 11a)")
        self.mode, self.k_packets, self.k_port, self.drop_not_ect = mode, k_packets, k_port, drop

    # ---- Algorithm 2 ------------------------------------------------
    def depths_packets(self) -> dict[tuple[int, int], float]:
        """Every monitored queue's depth in packets, 0 for an idle one: two
        bulk reads, so the stamps compared are one snapshot."""
        keys = list(self.slot)
        slots = [self.slot[k] for k in keys]
        cells = self.switch.read_registers(n.LAST_DEPTH, slots)
        stamps = self.switch.read_registers(n.LAST_DEPARTURE, slots)
        idle = idle_queues(stamps, self.last_stamps, self.idle_age_ticks)
        self.last_stamps = stamps
        return {
            k: 0.0 if i else c / self.cells_per_packet
            for k, c, i in zip(keys, cells, idle, strict=True)
        }

    def reallocate_once(self) -> list[Change]:
        """One round of Algorithm 2 on every port (DA-DCTCP mode only: DCTCP's
        K is static), written as one batch; returns what moved and why."""
        if self.mode != "dadctcp":
            return []
        new_k = dict(self.k_packets)
        changes: list[Change] = []
        depth = self.depths_packets()
        for port, k_port in self.k_port.items():
            queues = [q for (p, q) in self.k_packets if p == port]
            depths = [depth[(port, q)] for q in queues]
            old = [self.k_packets[(port, q)] for q in queues]
            r = reallocate(depths, old, k_port)
            for q, before, after, d in zip(queues, old, r.k_new, depths, strict=True):
                if before != after:
                    new_k[(port, q)] = after
                    changes.append(
                        Change(f"{port}/{q}", "k_packets", before, after, f"q={d:.1f}: {r.why}")
                    )
        return self._commit(new_k, changes)

    def service_cycle(self, now_s: float) -> int:
        # Algorithm 2 every config.interval_s: each threshold moved is a write.
        return len(self.cycle(now_s))

    def cycle(self, now_s: float) -> list[Change]:
        """The daemon's periodic step: a round of Algorithm 2 once
        `interval_s` has passed since the last one (the first at once)."""
        if self.last_round_s is not None and now_s - self.last_round_s < self.config.interval_s:
            return []
        self.last_round_s = now_s
        return self.reallocate_once()

    # ---- operator changes ------------------------------------------
    def set_values(self, values: dict[str, object], port: int | None = None) -> list[Change]:
        """`mode` (switch-wide), `k_port_packets` and `drop_not_ect` (one port,
        or every port when none is given), checked whole, then one batch. A
        new K_port is shared over the port's queues in proportion to their
        current thresholds."""
        for name in values:
            if name not in SETTABLE:
                raise ConfigError(name, f"not settable (settable: {', '.join(SETTABLE)})")
        ports = list(self.k_port) if port is None else [port]
        if port is not None:
            self.config.port_index(port)
        mode = values.get("mode", self.mode)
        if mode not in MODES:
            raise ConfigError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
        new_k = dict(self.k_packets)
        new_port = dict(self.k_port)
        new_drop = dict(self.drop_not_ect)
        changes: list[Change] = []
        if mode != self.mode:
            changes.append(Change("switch", "mode", self.mode, mode, "operator"))
        for p in ports:
            if "k_port_packets" in values:
                kp = _int("k_port_packets", values["k_port_packets"], minimum=1)
                check_k_port("k_port_packets", kp, self.config.packet_bytes, self.profile)
                queues = [q for (pp, q) in self.k_packets if pp == p]
                if kp < len(queues):
                    raise ConfigError(
                        "k_port_packets", f"{kp} leaves no packet for each of {len(queues)} queues"
                    )
                if kp != self.k_port[p]:
                    changes.append(Change(str(p), "k_port_packets", self.k_port[p], kp, "operator"))
                    shares = _scaled([self.k_packets[(p, q)] for q in queues], kp)
                    for q, k in zip(queues, shares, strict=True):
                        new_k[(p, q)] = k
                    new_port[p] = kp
            if "drop_not_ect" in values:
                d = values["drop_not_ect"]
                if not isinstance(d, bool):
                    raise ConfigError("drop_not_ect", f"must be true or false, got {d!r}")
                if d != self.drop_not_ect[p]:
                    changes.append(
                        Change(str(p), "drop_not_ect", self.drop_not_ect[p], d, "operator")
                    )
                    new_drop[p] = d
        old = (self.mode, self.k_port, self.drop_not_ect)
        self.mode, self.k_port, self.drop_not_ect = mode, new_port, new_drop
        try:
            return self._commit(new_k, changes, force=True)
        except Exception:
            self.mode, self.k_port, self.drop_not_ect = old
            raise

    def _commit(
        self, new_k: dict[tuple[int, int], int], changes: list[Change], force: bool = False
    ) -> list[Change]:
        if not changes:
            return []
        old_k = self.k_packets
        self.k_packets = new_k
        moved = [key for key in new_k if force or new_k[key] != old_k[key]]
        try:
            self.switch.write([self.threshold_write(p, q) for p, q in moved])
        except Exception:
            self.k_packets = old_k
            raise
        for ch in changes:
            log.info("%s %s %s -> %s (%s)", ch.where, ch.what, ch.old, ch.new, ch.why)
        return changes

    # ---- status ----------------------------------------------------
    def status(self) -> list[dict[str, object]]:
        """Per queue as read back from the switch, then per port's guards."""
        rows: list[dict[str, object]] = []
        for port, queue in self.k_packets:
            w = self.threshold_write(port, queue)
            e = self.switch.read_entry(w.table, w.key)
            rows.append(
                {
                    "section": QUEUES,
                    "port": port,
                    "queue": queue,
                    "mode": self.mode,
                    "k_packets": self.k_packets[(port, queue)],
                    # K as the switch compares it (metrics export it in bytes).
                    "k_cells": self.k_packets[(port, queue)] * self.cells_per_packet,
                    "k_port_packets": self.k_port[port],
                    "k1_cells": None if e is None else e.data["k1_cells"],
                    "k2_cells": None if e is None else e.data["k2_cells"],
                    "depth_cells": self.switch.read_register(
                        n.LAST_DEPTH, self.slot[(port, queue)]
                    ),
                    "last_departure_ticks": self.switch.read_register(
                        n.LAST_DEPARTURE, self.slot[(port, queue)]
                    ),
                    "ce_marked": self.switch.read_counter(n.CE_MARKED, port)[0],
                    "not_ect_dropped": self.switch.read_counter(n.NOT_ECT_DROPPED, port)[0],
                }
            )
        rows += port_guard_rows(self.switch, self.config)
        return rows


def _int(field: str, value: object, minimum: int = 0) -> int:
    """A saved count: an integer, never a string that int() would take."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(field, f"must be an integer >= {minimum}, got {value!r}")
    return value


# A port or queue as live_state writes it (str(n)), or as YAML reads an
# unquoted one (an int); not " 4", "04", "+4" or "٤", which int() takes.
_DECIMAL_KEY = re.compile(r"0|[1-9][0-9]{0,9}")


def _key(field: str, key: object) -> int:
    if isinstance(key, str) and _DECIMAL_KEY.fullmatch(key):
        return int(key)
    if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
        return key
    raise ConfigError(field, f"expected a port or queue number, got {key!r}")


def _known_keys(field: str, saved: dict[Any, Any], known: frozenset[str]) -> None:
    unknown = sorted(str(k) for k in saved if k not in known)
    if unknown:
        raise ConfigError(
            f"{field}.{unknown[0]}", f"not a saved setting (known: {', '.join(sorted(known))})"
        )


def _scaled(weights: list[int], total: int) -> list[int]:
    """`total` shared in proportion to `weights`, whole, each >= 1 (largest remainder)."""
    raw = [total * w / sum(weights) for w in weights]
    return whole_packets(raw, total, [1] * len(weights))
