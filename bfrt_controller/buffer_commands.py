# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc queues` and `tofcc clear`: the traffic manager's buffer as the
switch counts it, beside the program's own drops and marks (buffer_view.py)."""

from __future__ import annotations

import json
from typing import Any

import click

from .console import console, json_option, print_rows, report
from .context import Context
from .errors import ConfigError
from .port_names import name_ports, with_dev_port


@click.command(
    help="Show the traffic manager's depth, watermark and drops per queue (bytes and cells), "
    "per PPG and pool the program configures, beside the program's own drops and marks, and "
    "each port's PFC pause time per priority (buffer_view.py says which queues)."
)
@click.option(
    "--port",
    "port",
    default=None,
    help="only this port (all its queues): a device port, or a front-panel name (1/0) "
    "with --config DEPLOY.yaml",
)
@click.option("--json", "as_json", is_flag=True, help="the rows as one JSON list")
@click.pass_obj
def queues(obj: Context, port: str | None, as_json: bool) -> None:
    from . import buffer_view

    only = None if port is None else obj.dev_port_of("--port", port)
    app = obj.open_app(read_only=True)
    max_port = app.switch.profile.max_port
    if only is not None and not 0 <= only <= max_port:
        raise ConfigError("--port", f"device port {only} outside 0..{max_port}")
    rows = name_ports(buffer_view.view(app, app.status(), only), obj.port_namer())
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    console.print(f"{obj.program.name} on {app.switch.description}")
    for section in buffer_view.COLUMNS:
        section_rows = [r for r in rows if r["section"] == section]
        if section_rows:
            columns = with_dev_port(buffer_view.columns(section, section_rows), section_rows)
            print_rows(section, columns, section_rows)


@click.command(
    help="Clear the counters the SDE lets a client clear: queues (TM queue and PPG drops and "
    "watermarks, pool watermarks), pfc (every port's rx and tx pause counters) or all; "
    "the ports are those of the program's queues. Depths are live and stay."
)
@click.argument("what", type=click.Choice(["queues", "pfc", "all"]), default="all")
@json_option
@click.pass_obj
def clear(obj: Context, what: str) -> None:
    from . import buffer_view

    app = obj.open_app()
    ports = buffer_view.clear_ports(app, app.status())
    _, ppgs = buffer_view.configured(app)
    what_: Any = what
    app.switch.clear_tm_counters(what_, ports, ppgs)
    report(cleared=what, ports=ports, ppgs=[list(g) for g in ppgs])
    name_of = obj.port_namer()
    shown = [f"{name_of(p)} (dev port {p})" if name_of(p) else str(p) for p in ports]
    console.print(f"cleared {what} on ports {', '.join(shown) or 'none'}")
