# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program bfcc status` shows, read back from the switch:
congestion points, reaction points, rate thresholds, groups and ports."""

from __future__ import annotations

from typing import cast

from models.switch.core import Match
from models.switch.headers import FEEDBACK_TYPE_BACKPRESSURE

from ..common import PORTS_SECTION, lpm, pipe_of, port_guard_rows
from ..switch import Switch
from . import names as n
from .config import (
    BfccConfig,
    Params,
    recirculation_ports,
    refresh_period_ns,
    sojourn_thresholds,
)
from .recirculation import own_ports

# Status sections: rows carry one of these under "section".
CONGESTION_POINTS = "congestion points"
REACTION_POINTS = "reaction points"
RATE_THRESHOLDS = "rate thresholds"
GROUPS = "groups"
PORTS = PORTS_SECTION


def bp_key(key: int, degree_mask: int = 0xFF) -> tuple[int | None, int | None]:
    """group ++ degree as (group, degree); (None, None) for 0, i.e. nothing/clear.
    bp_last_sent keeps the refresh epoch above the degree's 2 bits."""
    if key == 0:
        return None, None
    return key >> 8, key & degree_mask


def port_register(switch: Switch, name: str, port: int) -> int:
    """A per-port ingress register's cell as the port's own pipe holds it.
    Backpressure is recorded in the reaction port's pipe and copied to every
    other pipe the config uses: a sum over the pipes would count it once
    per pipe. A switch running one pipe holds one value."""
    values = switch.read_register_pipes(name, port)
    if len(values) == 1:
        return values[0]
    return values[pipe_of(port, switch.profile)]


def status_rows(switch: Switch, config: BfccConfig, params: Params) -> list[dict[str, object]]:
    """Rows by section, as read back from the switch (not from the intended state)."""
    return [
        *_congestion_point_rows(switch, config, params),
        *_reaction_point_rows(switch, config),
        *_rate_threshold_rows(switch, config, params),
        *_group_rows(switch, config),
        *_port_rows(switch, config),
    ]


def _congestion_point_rows(
    switch: Switch, config: BfccConfig, params: Params
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    p = params
    for cp_id, cp in enumerate(config.congestion_points):
        e = switch.read_entry(n.CONGESTION_POINT, {n.K_EGRESS_PORT: Match(cp.port)})
        d = e.data if e else {}
        # Only meaningful when the entry is there: cp_id indexes the registers.
        group, degree = bp_key(switch.read_register(n.BP_LAST_SENT, cp_id), 0x3)
        t = sojourn_thresholds(p, cp.rate_mbps, switch.profile)
        rows.append(
            {
                "section": CONGESTION_POINTS,
                "port": cp.port,
                "cp_id": d.get("cp_id"),
                "rate_mbps": cp.rate_mbps or p.reference_rate_mbps,
                "threshold_packets": p.threshold_packets,
                "threshold_cells": d.get("congestion_threshold_cells"),
                "t_min_ns": d.get("t_min_ns"),
                "t_max_ns": d.get("t_max_ns"),
                # Derived thresholds the chip cannot measure: shown, not hidden.
                "saturated": ", ".join(t.saturated) or "-",
                "window_packets": d.get("window_packets"),
                "refresh_ns": refresh_period_ns(p) if d.get("refresh_mask") else 0,
                "signalled_group": group,
                "signalled_degree": degree,
            }
        )
    return rows


def _reaction_point_rows(switch: Switch, config: BfccConfig) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    # Mirror sessions are not read back through Switch: the profile's ports.
    ports = recirculation_ports(config, switch.profile)
    for rp in config.reaction_points:
        e = switch.read_entry(n.REACTION_POINT, {n.K_UCAST_EGRESS_PORT: Match(rp.port)})
        d = e.data if e else {}
        r = switch.read_entry(n.RECIRCULATION, {n.K_EGRESS_PORT: Match(rp.port)})
        group, degree = bp_key(port_register(switch, n.BP_STATE, rp.port))
        rows.append(
            {
                "section": REACTION_POINTS,
                "port": rp.port,
                "high_qid": d.get("high_qid"),
                "low_qid": d.get("low_qid"),
                "expiry_ns": d.get("bp_expiry_ns"),
                "named_group_only": d.get("named_group_only"),
                "slowed_group": group,
                "slowed_degree": degree,
                "recorded_ns": port_register(switch, n.BP_RECORDED_NS, rp.port),
                "backpressure_received": switch.read_counter(n.BACKPRESSURE_RECEIVED, rp.port)[0],
                "flagged_departures": switch.read_counter(n.FLAGGED_DEPARTURES, rp.port)[0],
                "fakes_sent": switch.read_counter(n.FAKES_SENT, rp.port)[0],
                # Fakes not made: the pipe's recirculation queue was over its level.
                "recirculation_skips": switch.read_counter(n.RECIRCULATION_SKIPS, rp.port)[0],
                "recirculation_session": r.data.get("session") if r else None,
                "recirculation_port": ports.get(pipe_of(rp.port, switch.profile)),
                "level_cells": r.data.get("level_cells") if r else None,
                # reduction shaping: the TM max rate on the port or its low queue.
                "shaped_kbps": switch.read_tm_shaping(rp.port)
                or switch.read_tm_shaping(rp.port, rp.low_qid),
            }
        )
    return rows


def _rate_threshold_rows(
    switch: Switch, config: BfccConfig, params: Params
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    if not config.reaction_points:
        return rows
    for degree in params.rate_thresholds():
        e = switch.read_entry(n.RATE_THRESHOLD, {n.K_BP_DEGREE: Match(degree)})
        rows.append(
            {
                "section": RATE_THRESHOLDS,
                "degree": degree,
                # No RT under reduction shaping (the entry is no_rate_threshold).
                "rt_packets": e.data.get("rt_packets") if e else None,
            }
        )
    return rows


def _group_rows(switch: Switch, config: BfccConfig) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for g in config.groups:
        installed = []
        for s in g.senders:
            e = switch.read_entry(n.SENDER_GROUP, {n.K_SRC_ADDR: lpm(s)})
            if e is not None and e.data.get("group") == g.id:
                installed.append(s)
        u = switch.read_entry(n.BP_UPSTREAM, {n.K_BP_GROUP: Match(g.id)})
        relay = switch.read_entry(
            n.SENDER_NOTIFY,
            {n.K_FB_MSG_TYPE: Match(FEEDBACK_TYPE_BACKPRESSURE), n.K_FB_CLASS_ID: Match(g.id)},
        )
        rows.append(
            {
                "section": GROUPS,
                "group": g.id,
                "senders": ", ".join(installed),
                "upstream_port": g.upstream_port,
                "mirror_session": u.data["session_id"] if u else None,
                # The host port its senders are told on (match_switch), as the switch holds it.
                "notify_port": relay.data["port"]
                if relay and relay.action == n.NOTIFY_SENDERS
                else None,
            }
        )
    return rows


def _port_rows(switch: Switch, config: BfccConfig) -> list[dict[str, object]]:
    rows = port_guard_rows(switch, config, own_ports(config))
    for row in rows:
        row["fake_drops"] = switch.read_counter(n.FAKE_DROPS, cast(int, row["port"]))[0]
    return rows
