# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Ports as the operator names them, in every table, JSON row and metric label.

The programs count by device port (the number BF-Runtime keys its tables
with); the box is labelled by front-panel name (`1/0`: connector 1, lane 0).
Wherever the board is known (a deployment target's `front_panel.board`), a
row's `port` is the front-panel name and `dev_port` the device port; where it
is not (`--target grpc://...` with a bare program config), `port` stays the
device port, `dev_port` beside it all the same, so a script reads `dev_port`
either way and a person reads `port`.

The name is the switch's own map where it was read (TargetApp.dev_ports,
ports.resolve_front_panel), else the board's: the same unless the switch
and the board disagree, which resolve_front_panel refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from hw_profiles.boards import BoardProfile

Namer = Callable[[int], str | None]


def namer(board: BoardProfile | None, dev_ports: Mapping[str, int] | None = None) -> Namer:
    """Device port -> front-panel name (None: the board has no such port)."""
    if board is None:
        return lambda _dev_port: None
    by_dev = {d: name for name, d in (dev_ports or {}).items()}

    def name_of(dev_port: int) -> str | None:
        return by_dev.get(dev_port) or board.name_of(dev_port)

    return name_of


def name_ports(rows: Iterable[dict[str, object]], name_of: Namer) -> list[dict[str, object]]:
    """Each row with a device `port` (an int) as the operator reads it:
    `port` its front-panel name where known, `dev_port` the device port.
    Rows are copied; those without a device port are as they were."""
    out: list[dict[str, object]] = []
    for r in rows:
        port = r.get("port")
        if type(port) is not int:
            out.append(r)
            continue
        named = dict(r)
        name = name_of(port)
        named["port"] = name if name is not None else port
        named["dev_port"] = port
        out.append(named)
    return out


def with_dev_port(
    columns: tuple[tuple[str, str], ...], rows: list[dict[str, object]]
) -> tuple[tuple[str, str], ...]:
    """A table's columns with `dev port` after `port` when a row's port is a
    name (beside a device port number it would only repeat it)."""
    named = any(isinstance(r.get("port"), str) and "dev_port" in r for r in rows)
    if not named or any(key == "dev_port" for _, key in columns):
        return columns
    out: list[tuple[str, str]] = []
    for heading, key in columns:
        out.append((heading, key))
        if key == "port":
            out.append(("dev port", "dev_port"))
    return tuple(out)
