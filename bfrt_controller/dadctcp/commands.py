# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc commands for DA-DCTCP: its side of `set`, and `reallocate`.

`tofcc --program dadctcp set mode=dctcp | k_port_packets=120 |
drop_not_ect=true [--port 4]` changes the switch-wide mode or a port's
K_port / non-ECT handling (default: every port), all or none.
`tofcc --program dadctcp reallocate` runs one round of Algorithm 2 now and
prints what moved (the daemon, `tofcc run`, runs it every interval_s).
"""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console

from ..console import json_option
from ..console import print_changes as show_changes
from ..set_args import parse_int, parse_values, refuse_options
from .app import MODES, Change, DadctcpApp


def parse_set(pairs: tuple[str, ...]) -> dict[str, object]:
    return parse_values(pairs, {"mode": MODES, "k_port_packets": int, "drop_not_ect": bool})


def print_changes(console: Console, changes: list[Change]) -> None:
    rows = [(ch.where, ch.what, str(ch.old), str(ch.new), ch.why) for ch in changes]
    show_changes(console, rows, "where")


def set_values(obj: Any, pairs: tuple[str, ...], port: str | None, console: Console) -> None:
    values = parse_set(pairs)
    if port is not None:
        parse_int("--port", port)
    app = obj.open_app(sync=True)
    assert isinstance(app, DadctcpApp)
    changes = app.set_values(values, None if port is None else int(port))
    obj.save(app)
    print_changes(console, changes)


@click.command(help="DA-DCTCP: run one round of Algorithm 2 now and print what moved.")
@json_option
@click.pass_obj
def reallocate(obj: Any) -> None:
    from ..console import console

    obj.require("dadctcp")
    app = obj.open_app(sync=True)
    assert isinstance(app, DadctcpApp)
    changes = app.reallocate_once()
    obj.save(app)
    print_changes(console, changes)


SET_HELP = (
    "DA-DCTCP: tofcc --program dadctcp set mode=dctcp k_port_packets=120 drop_not_ect=true "
    "[--port 4]"
)


def set_command(
    obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    from ..console import console

    refuse_options("dadctcp", queue=queues)
    set_values(obj, pairs, port, console)


COMMANDS: tuple[click.Command, ...] = (reallocate,)
