# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc for BFCC: `set` retunes the paper's parameters (all or none), and
`shape` runs the TM shaping of `reduction: shaping`.
"""

from __future__ import annotations

import time

import click

from ..console import cell, console, json_option, json_report, print_changes
from ..console import report as json_fields
from ..context import Context
from ..cycle_options import cycle_options, cycles_asked
from ..errors import ConfigError
from ..pmqecn.config import MAX_INTERVAL_S
from ..set_args import parse_signed_int, refuse_options
from ..supervisor import Supervisor
from ..switch import TmShapingWrite
from ..sync import holds_state
from .config import CHOICE_PARAMS, PARAM_NAMES, check_param_name

SET_HELP = (
    f"BFCC: tofcc --program bfcc set t_min_us=80000 rt1_packets=9 (names: {', '.join(PARAM_NAMES)})"
)


def _parse_params(pairs: tuple[str, ...]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError("set", f"expected NAME=VALUE, got {pair!r}")
        check_param_name(name)
        if name in out:
            raise ConfigError(name, f"given twice ({name}={out[name]}, {pair})")
        # A choice is a word (sender_reaction=match_switch); the app's model
        # refuses a word it does not know, naming the field and the choices.
        out[name] = value if name in CHOICE_PARAMS else parse_signed_int(name, value)
    return out


def set_command(
    obj: Context, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    refuse_options("bfcc", queue=queues, port=port is not None)
    # Parsed before the switch is opened: a typo never reaches it.
    changes = _parse_params(pairs)
    app = obj.bfcc()
    written = app.set_params(changes)
    obj.save(app)
    print_changes(console, [(ch.what, cell(ch.old), cell(ch.new), ch.why) for ch in written])


@click.command(
    help="BFCC reduction shaping: shape each reaction point's port (or low queue) in the TM "
    "to RT/(RT+1) while the switch holds backpressure, unshape it after."
)
@cycle_options
@json_option
@click.pass_obj
def shape(obj: Context, interval: float | None, count: int | None) -> None:
    obj.require("bfcc")
    count = cycles_asked(interval, count, MAX_INTERVAL_S)
    app = obj.bfcc()
    if app.params.reduction != "shaping":
        raise ConfigError("reduction", "is fakes: set reduction=shaping first")

    def report(writes: list[TmShapingWrite]) -> None:
        json_fields(writes=[w.describe() for w in writes])
        for w in writes:
            console.print(w.describe())
        if not writes:
            console.print("nothing changed")

    if interval is None:
        report(app.shape_once())
        return
    sup = Supervisor(app, probe=lambda: holds_state(app))
    done = 0
    while count == 0 or done < count:
        time.sleep(interval)
        repairs = sup.reconnects + sup.restarts_detected
        writes = sup.run(lambda: app.shape_once(time.monotonic()))
        obj.audit_cycle(
            "shape-cycle", len(writes), sup.reconnects + sup.restarts_detected != repairs
        )
        report(writes)
        done += 1
        json_report.flush_line()  # --json: a document per cycle, a line each


COMMANDS: tuple[click.Command, ...] = (shape,)
