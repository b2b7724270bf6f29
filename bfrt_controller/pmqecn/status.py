# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program pmqecn status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from models.switch.core import Match

from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION, port_guard_rows
from ..switch import Switch
from . import names as n
from .config import PmqecnConfig
from .live import ClassLive
from .pipes import PipeBalance

U32 = 1 << 32


def made_of(gate: int) -> int:
    """`made` of a feedback_gate cell as read (the pair packed with its first
    member, `quiet`, in the high half)."""
    return gate % U32


# The section of the class rows.
CLASSES = "classes"

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        CLASSES,
        (
            ("class", "name"),
            ("id", "id"),
            ("qos", "qos"),
            ("queue", "queue"),
            ("K cells", "threshold_cells"),
            ("weight", "weight"),
            ("lambda pps", "rate_pps"),
            ("lambda* pps", "target_rate_pps"),
            ("W ns", "sojourn_ns"),
            ("packets", "packets"),
            ("feedback", "feedback_copies"),
            ("fb lost", "feedback_lost"),
            ("pipe shares", "pipe_shares"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)


def status_rows(
    switch: Switch,
    config: PmqecnConfig,
    live: dict[int, ClassLive],
    pipes: PipeBalance | None = None,
) -> list[dict[str, object]]:
    """Per class, then per port (trust, source binding, what each guard
    dropped), as read back from the switch (not from the intended state)."""
    return [
        *_class_rows(switch, config, live, pipes),
        *port_guard_rows(switch, config, (ps.port for ps in config.ports)),
    ]


def feedback_lost(made_per_pipe: list[int], rebuilt: int) -> int:
    """Feedback copies a class's gates let through that never reached
    egress, since the switch started: sum of every pipe's wrapping `made`
    less the copies egress counted, modulo 2^32 (exact while fewer than 2^31
    are lost). `made` is read before the counter, so a copy made in between
    (the reads' milliseconds) counts as rebuilt, not made: the difference is
    then negative and shows as 0 (tna/pmqecn/README.md)."""
    diff = (sum(made_per_pipe) - rebuilt) % U32
    return 0 if diff >= U32 // 2 else diff


def _class_rows(
    switch: Switch,
    config: PmqecnConfig,
    live: dict[int, ClassLive],
    pipes: PipeBalance | None = None,
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    sched = config.scheduling
    ids = [c.id for c in config.classes]
    gates = switch.read_registers_pipes(n.FEEDBACK_GATE, ids)
    rebuilt = switch.read_counters(n.FEEDBACK_REBUILT, ids)
    for c, cells, (copies, _) in zip(config.classes, gates, rebuilt, strict=True):
        # K_i, mark_original and the interval are the same in every pipe's entry.
        key = {n.K_CLASS_ID: Match(c.id)}
        thr = switch.read_entry(n.ECN_THRESHOLD, {**key, n.K_INGRESS_PIPE: Match(0)})
        rates = switch.read_entry(n.CLASS_RATES, key)
        if sched.mode == "p4_wrr":
            w = switch.read_entry(n.VQ_WEIGHT, {n.K_VQ_ID: Match(c.vq)})
            weight = w.data["weight"] if w else None
        else:
            weight = switch.read_tm_weight(sched.egress_ports[0], c.queue)
        packets, nbytes = switch.read_counter(n.CLASS_COUNTERS, c.id)
        rows.append(
            {
                "section": CLASSES,
                "name": c.name,
                "id": c.id,
                "qos": c.qos,
                "queue": c.queue,
                "threshold_cells": thr.data["threshold_bytes"] // switch.profile.cell_bytes
                if thr
                else None,
                "mark_original": bool(thr.data["mark_original"]) if thr else None,
                "weight": weight,
                "rate_pps": rates.data["rate"] if rates else None,
                "target_rate_pps": rates.data["target_rate"] if rates else None,
                "sojourn_ns": live[c.id].sojourn_ns,
                "packets": packets,
                "bytes": nbytes,
                "feedback_copies": copies,
                "feedback_lost": feedback_lost([made_of(v) for v in cells], copies),
                "pipe_shares": pipes.describe(c.id) if pipes is not None else None,
            }
        )
    return rows
