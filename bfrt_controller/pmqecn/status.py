"""What `tofcc --program pmqecn status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from models.switch.core import Match

from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION, port_guard_row
from ..switch import Switch
from . import names as n
from .config import PmqecnConfig
from .live import ClassLive

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
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)


def status_rows(
    switch: Switch, config: PmqecnConfig, live: dict[int, ClassLive]
) -> list[dict[str, object]]:
    """Per class, then per port (trust, source binding, what each guard
    dropped), as read back from the switch (not from the intended state)."""
    cfg = config
    ports = sorted(
        {r.port for r in cfg.routes}
        | set(cfg.trusted_ports)
        | {ps.port for ps in cfg.ports}
        | {b.port for b in cfg.source_bindings}
    )
    bindings = {b.port: b.prefixes for b in cfg.source_bindings}
    return [
        *_class_rows(switch, config, live),
        *(port_guard_row(switch, p, bindings.get(p, [])) for p in ports),
    ]


def _class_rows(
    switch: Switch, config: PmqecnConfig, live: dict[int, ClassLive]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    sched = config.scheduling
    for c in config.classes:
        key = {n.K_CLASS_ID: Match(c.id)}
        thr = switch.read_entry(n.ECN_THRESHOLD, key)
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
            }
        )
    return rows
