# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The buffer in view (issue 52): the TM's own depth, watermark and drop
counters per queue, pool and PPG, and the ports' PFC pause time per
priority, beside what the program itself counts.

Which queues: those the program's status rows name, a row with an integer
`port` and `queue` (P4QCN's congestion points, AQM's and DA-DCTCP's queues);
a program whose rows name none (PMQECN, BFCC, S-PIE) shows nothing unless
`--port` names a port, whose every queue is then shown. The program's own
drops and marks are that row's fields whose name has "drop" or "mark" in it
(P4QCN `ce_marked`, AQM `drops`/`marks`), put beside the TM's as
`program_<field>`; a program with no such field per queue gets no such
column. Pools and PPGs: those the program configures (its `buffer_pools()`
and `buffer_ppgs()`, P4QCN's PFC pool and PPGs), else none.

On the model target the counters are what whoever runs the packets set
(ModelSwitch.congest): a fresh `tofcc` command on `model` reads zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, TypeVar

from models.switch.core import P4ModelError

from .errors import ControllerError, SwitchUnavailable
from .switch import BufferCounters, Switch

QUEUE_SECTION = "buffer queues"
POOL_SECTION = "buffer pools"
PPG_SECTION = "buffer ppgs"
PAUSE_SECTION = "pfc pauses"
PFC_PRIORITIES = 8

_T = TypeVar("_T")


def _read(fn: Callable[[], _T]) -> _T | None:
    """A counter a switch cannot give (a port not added, a backend without
    the table) reads as None; a lost session still raises."""
    try:
        return fn()
    except SwitchUnavailable:
        raise
    except (ControllerError, P4ModelError, NotImplementedError):
        return None


def program_queues(rows: Iterable[dict[str, object]]) -> dict[tuple[int, int], dict[str, int]]:
    """(port, queue) of every status row naming one, with the row's own
    drop and mark counts."""
    out: dict[tuple[int, int], dict[str, int]] = {}
    for r in rows:
        port, queue = r.get("port"), r.get("queue")
        if type(port) is not int or type(queue) is not int:
            continue
        own = {
            f"program_{k}": v
            for k, v in r.items()
            if ("drop" in k or "mark" in k) and type(v) is int
        }
        out.setdefault((port, queue), {}).update(own)
    return out


def _counter_fields(switch: Switch, c: BufferCounters | None) -> dict[str, object]:
    cell = switch.profile.cell_bytes
    if c is None:
        return dict.fromkeys(
            ("depth_cells", "depth_bytes", "watermark_cells", "watermark_bytes", "drops"), None
        )
    return {
        "depth_cells": c.usage_cells,
        "depth_bytes": c.usage_cells * cell,
        "watermark_cells": c.watermark_cells,
        "watermark_bytes": c.watermark_cells * cell,
        "drops": c.drop_packets,
    }


def queue_rows(
    switch: Switch, queues: dict[tuple[int, int], dict[str, int]]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for (port, queue), own in sorted(queues.items()):
        c = _read(partial(switch.read_tm_queue_counters, port, queue))
        rows.append(
            {"section": QUEUE_SECTION, "port": port, "queue": queue}
            | _counter_fields(switch, c)
            | own
        )
    return rows


def pool_rows(switch: Switch, pools: Sequence[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for pool in pools:
        c = _read(partial(switch.read_tm_pool_counters, pool))
        fields = _counter_fields(switch, c)
        del fields["drops"]  # tm.counter.pool counts no drops
        rows.append({"section": POOL_SECTION, "pool": pool} | fields)
    return rows


def ppg_rows(switch: Switch, ppgs: Sequence[tuple[int, int]]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for port, ppg in ppgs:
        c = _read(partial(switch.read_tm_ppg_counters, port, ppg))
        rows.append({"section": PPG_SECTION, "port": port, "ppg": ppg} | _counter_fields(switch, c))
    return rows


def pause_rows(switch: Switch, ports: Iterable[int]) -> list[dict[str, object]]:
    """Per port and priority, microseconds paused by the neighbour (rx) and
    of the neighbour by this switch (tx), since the last clear."""
    rows: list[dict[str, object]] = []
    for port in sorted(set(ports)):
        for cos in range(PFC_PRIORITIES):
            rx = _read(partial(switch.read_port_pause_us, port, cos, "rx"))
            tx = _read(partial(switch.read_port_pause_us, port, cos, "tx"))
            rows.append(
                {
                    "section": PAUSE_SECTION,
                    "port": port,
                    "cos": cos,
                    "rx_pause_us": rx,
                    "tx_pause_us": tx,
                }
            )
    return rows


def configured(app: Any) -> tuple[list[str], list[tuple[int, int]]]:
    """The pools and PPGs the program configures (none if it says nothing)."""
    pools = getattr(app, "buffer_pools", None)
    ppgs = getattr(app, "buffer_ppgs", None)
    return (list(pools()) if pools else [], list(ppgs()) if ppgs else [])


def view(
    app: Any, status: list[dict[str, object]], port: int | None = None
) -> list[dict[str, object]]:
    """Every row `tofcc queues` shows: queues, PPGs, pools, pauses."""
    switch: Switch = app.switch
    queues = program_queues(status)
    pools, ppgs = configured(app)
    if port is not None:
        queues = {at: own for at, own in queues.items() if at[0] == port}
        if not queues:
            queues = {(port, q): {} for q in range(switch.profile.min_queues_per_port)}
        ppgs = [g for g in ppgs if g[0] == port]
    ports = {p for p, _ in queues} | {p for p, _ in ppgs}
    return (
        queue_rows(switch, queues)
        + ppg_rows(switch, ppgs)
        + pool_rows(switch, pools)
        + pause_rows(switch, ports)
    )


def metric_rows(app: Any, status: list[dict[str, object]]) -> list[dict[str, object]]:
    """The TM rows a daemon exports beside the program's (the program's
    pause rows, if it has them, are already in `status`)."""
    switch: Switch = app.switch
    pools, ppgs = configured(app)
    return (
        queue_rows(switch, program_queues(status))
        + ppg_rows(switch, ppgs)
        + pool_rows(switch, pools)
    )


def clear_ports(app: Any, status: list[dict[str, object]]) -> list[int]:
    """The ports `tofcc clear` clears: those of the program's queues and PPGs."""
    _, ppgs = configured(app)
    return sorted({p for p, _ in program_queues(status)} | {p for p, _ in ppgs})


COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    QUEUE_SECTION: (
        ("port", "port"),
        ("queue", "queue"),
        ("depth B", "depth_bytes"),
        ("depth cells", "depth_cells"),
        ("watermark B", "watermark_bytes"),
        ("watermark cells", "watermark_cells"),
        ("buffer drops", "drops"),
    ),
    PPG_SECTION: (
        ("port", "port"),
        ("PPG", "ppg"),
        ("usage B", "depth_bytes"),
        ("usage cells", "depth_cells"),
        ("watermark B", "watermark_bytes"),
        ("watermark cells", "watermark_cells"),
        ("drops", "drops"),
    ),
    POOL_SECTION: (
        ("pool", "pool"),
        ("usage B", "depth_bytes"),
        ("usage cells", "depth_cells"),
        ("watermark B", "watermark_bytes"),
        ("watermark cells", "watermark_cells"),
    ),
    PAUSE_SECTION: (
        ("port", "port"),
        ("CoS", "cos"),
        ("rx paused us", "rx_pause_us"),
        ("tx paused us", "tx_pause_us"),
    ),
}


def columns(section: str, rows: list[dict[str, object]]) -> tuple[tuple[str, str], ...]:
    """The section's columns, and after the queue's the program's own."""
    cols = COLUMNS[section]
    if section != QUEUE_SECTION:
        return cols
    own = sorted({k for r in rows for k in r if k.startswith("program_")})
    return cols + tuple((f"program {k.removeprefix('program_')}", k) for k in own)
