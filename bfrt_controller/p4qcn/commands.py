# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc commands for P4QCN: `thresholds` and the P4QCN side of `set`.

`tofcc --program p4qcn thresholds --port-speed 100 --cable-m 10 [--apply]`
prints seed 003's Q_PFC and Q_P4QCN for the config's chip; with --apply it
writes Q_P4QCN as every congestion point's Q_max, as one batch.
`tofcc --program p4qcn set q_min_cells=100 q_max_cells=300 [--queue 4/0]`
changes the named queues (default: all), all or none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import click
from rich.console import Console

from models.p4qcn_thresholds import DEFAULT_PROCESSING_NS, ThresholdError, p4qcn_thresholds

from ..console import json_option, print_queue_changes, report
from ..errors import ConfigError
from ..ports import speed_gbps
from ..set_args import Kind, parse_int, parse_number, parse_queues, parse_values, refuse_options
from .app import MODES, SETTABLE, WATCHDOG_KEY, WATCHDOG_STATES, Change, P4qcnApp


def print_changes(
    console: Console, changes: list[Change], name_of: Callable[[int], str | None] | None = None
) -> None:
    print_queue_changes(console, changes, name_of)


def parse_set(pairs: tuple[str, ...], cell_bytes: int | None = None) -> dict[str, object]:
    return parse_values(pairs, {**SETTABLE, "mode": MODES}, cell_bytes)


def set_queues(obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], console: Console) -> None:
    settable: dict[str, Kind] = {**SETTABLE, "mode": MODES, WATCHDOG_KEY: WATCHDOG_STATES}
    values = parse_values(pairs, settable, obj.cell_bytes())
    watchdog = values.pop(WATCHDOG_KEY, None)
    fields = values
    selected = parse_queues(queues, obj.dev_port_of)
    if watchdog is not None and selected:
        raise ConfigError("--queue", "watchdog is per switch, not per queue")
    if watchdog is not None and _sent_to_daemon(obj, watchdog, bool(fields), console):
        return
    app = obj.open_app(sync=True)
    assert isinstance(app, P4qcnApp)
    changes: list[Change] = []
    if fields:
        targets = selected or [(q.port, q.queue) for q in app.config.queues]
        changes += app.set_queues({q: dict(fields) for q in targets})
    if watchdog is not None:
        # After the queues: a refused queue change leaves the watchdog as it was.
        changes += app.set_watchdog(watchdog == "on")
    obj.save(app)
    print_changes(console, changes, obj.port_namer())


def _sent_to_daemon(obj: Any, watchdog: object, other_fields: bool, console: Console) -> bool:
    """`set watchdog=on|off` on a deployment target a `tofcc run` drives goes
    to that daemon, the switch's one writer (control.py); False: no daemon."""
    from ..audit import who
    from ..control import DaemonError, ask, daemon_listens

    deploy, target = obj.deployment_path, obj.deployment_target
    if deploy is None or target is None:
        return False
    body = {
        "op": "set",
        "switch": target.name,
        "program": "p4qcn",
        "values": {WATCHDOG_KEY: watchdog},
        "command": obj.command,
        "sudo_user": who().get("sudo_user"),
    }
    if other_fields:
        # Asked only to tell: the daemon takes the watchdog, not queue settings.
        if daemon_listens(deploy):
            raise ConfigError(
                "set",
                f"a tofcc run drives {deploy}: it takes watchdog=on|off alone; queue "
                "settings go in the deployment's config and a reload",
            )
        return False
    try:
        answer = ask(deploy, body)
    except DaemonError as exc:
        if exc.audited:
            obj.settled_write()  # the daemon's line says it was refused: one line
        raise
    if answer is None:
        return False
    obj.settled_write()  # the daemon wrote it, and its audit line
    changes = [
        Change(c["where"], c["what"], c["old"], c["new"], c["why"]) for c in answer["changes"]
    ]
    console.print(f"{target.name}: sent to the running tofcc run (it drives {deploy})")
    report(via="tofcc run", deployment=str(deploy))
    print_changes(console, changes)
    return True


@click.command(
    help="P4QCN: Q_PFC and Q_P4QCN (seed 003, 3.2.2) from the chip's buffer, the port speed "
    "and the cable; --apply writes Q_P4QCN as every congestion point's Q_max."
)
@click.option(
    "--port-speed", "port_speed", required=True, help="Gb/s: 10 25 40 50 100 200 400 (100 or 100G)"
)
@click.option("--cable-m", "cable_m", required=True, help="cable length in metres")
@click.option(
    "--processing-ns",
    "processing_ns",
    default=f"{DEFAULT_PROCESSING_NS:g}",
    show_default=True,
    help="the upstream's time to act on a PAUSE",
)
@click.option("--ports", "n_ports", default=None, help="ports in use (default: all at that speed)")
@click.option("--apply", "do_apply", is_flag=True, help="write Q_P4QCN as every queue's Q_max")
@json_option
@click.pass_obj
def thresholds(
    obj: Any,
    port_speed: str,
    cable_m: str,
    processing_ns: str,
    n_ports: str | None,
    do_apply: bool,
) -> None:
    from hw_profiles import load_profile

    from ..console import console

    obj.require("p4qcn")
    # Every input checked before a switch is opened.
    speed = speed_gbps("--port-speed", port_speed)
    cable = parse_number("--cable-m", cable_m)
    processing = parse_number("--processing-ns", processing_ns)
    ports = None if n_ports is None else parse_int("--ports", n_ports)
    cfg = obj.program_config()
    try:
        t = p4qcn_thresholds(load_profile(cfg.chip), speed, cable, processing, ports)
    except ThresholdError as exc:
        raise ConfigError("thresholds", str(exc)) from None
    report(**asdict(t), applied=do_apply)
    for line in t.lines():
        console.print(line, highlight=False)
    console.print(
        f"for the config's pfc section: xoff_cells: {t.q_pfc_cells}, "
        f"headroom_cells: {t.q_flight_cells} (the PPG's xoff and skid headroom)",
        highlight=False,
    )
    if not do_apply:
        console.print("not applied (--apply writes Q_P4QCN as every queue's Q_max)")
        return
    app = obj.open_app(sync=True)
    assert isinstance(app, P4qcnApp)
    changes = app.apply_thresholds(t)
    obj.save(app)
    print_changes(console, changes)
    console.print("Q_PFC is not applied: give it as pfc.xoff_cells in the config")


SET_HELP = (
    "P4QCN: tofcc --program p4qcn set q_min_cells=100 q_max_cells=300 [--queue 4/0] "
    "(q_min_cells, q_max_cells, feedback_interval_us, mode; in bytes: q_max_bytes=24KB); "
    "watchdog=on|off turns the PFC watchdog on or off (through the running daemon of "
    "--config DEPLOY.yaml, if one drives it)"
)


def set_command(
    obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    from ..console import console

    refuse_options("p4qcn", port=port is not None)
    set_queues(obj, pairs, queues, console)


COMMANDS: tuple[click.Command, ...] = (thresholds,)
