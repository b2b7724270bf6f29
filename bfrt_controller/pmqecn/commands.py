# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc for PMQECN: `set-threshold` and `set-weight` retune classes by name
(never by id), all in one batch; `optimize` runs the M/M/1/N cycle once or
every interval (`tofcc run` does it for a deployment).
"""

from __future__ import annotations

import time

import click
from rich.table import Table

from .. import units
from ..console import console, json_option, json_report, json_wanted, report
from ..context import Context
from ..cycle_options import cycle_options, cycles_asked
from ..errors import ConfigError
from ..set_args import parse_signed_int
from ..supervisor import Supervisor
from ..sync import holds_state
from ..units import parse_size, to_cells
from . import app as pmqecn_app
from .config import MAX_INTERVAL_S


def _parse_pairs(app: pmqecn_app.PmqecnApp, pairs: tuple[str, ...], what: str) -> dict[int, int]:
    out: dict[int, int] = {}
    given: dict[int, str] = {}
    by_name = {c.name: c.id for c in app.config.classes}
    for pair in pairs:
        cls, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(what, f"expected CLASS=VALUE, got {pair!r}")
        # By name only: `3=99` once retuned the class with id 3 where another
        # was named "3" (issue 44). Names are ASCII and differ beyond case
        # (config.ClassSpec), so the name typed is the one meant.
        cid = by_name.get(cls)
        if cid is None or cid not in app.live:
            raise ConfigError(
                what, f"unknown class {cls!r}: classes are named {', '.join(by_name)}"
            )
        name = app.config.class_by_id(cid).name
        if cid in given:
            # Two values for one class in one command: which one was meant?
            raise ConfigError(f"{what} {cls}", f"class {name} given twice ({given[cid]}, {pair})")
        given[cid] = pair
        field = f"{what} {cls}"
        # K_i in bytes: `voice=32KB` (units.py), as the chip's cells.
        size = parse_size(field, value) if what == "set-threshold" else None
        if size is not None:
            out[cid] = to_cells(field, size[0], size[1], app.profile.cell_bytes)
        else:
            out[cid] = parse_signed_int(field, value)
    return out


def _print_changes(changes: list[pmqecn_app.Change], app: pmqecn_app.PmqecnApp) -> None:
    if json_wanted():
        rows = [
            {
                "class": app.config.class_by_id(ch.class_id).name,
                "what": ch.what,
                "old": ch.old,
                "new": ch.new,
                "why": ch.why,
            }
            for ch in changes
        ]
        report(changes=rows)
        if not changes and getattr(app, "unchanged_because", None):
            report(unchanged_because=app.unchanged_because)
        return
    if not changes:
        why = getattr(app, "unchanged_because", None)
        console.print(f"nothing changed: {why}" if why else "nothing changed", markup=False)
        return
    t = Table(title="changes written")
    for col in ("class", "what", "old", "new", "why"):
        t.add_column(col)
    for ch in changes:
        name = app.config.class_by_id(ch.class_id).name
        t.add_row(name, ch.what, str(ch.old), str(ch.new), ch.why)
    console.print(t)


@click.command(
    "set-threshold",
    help="Set K_i in cells, or in bytes with a unit (rounded up to whole cells, shown): "
    "tofcc set-threshold voice=20 bulk=32KB",
)
@click.argument("pairs", nargs=-1, required=True)
@json_option
@click.pass_obj
def set_threshold(obj: Context, pairs: tuple[str, ...]) -> None:
    app = obj.pmqecn()
    with units.recording() as conversions:
        cells = _parse_pairs(app, pairs, "set-threshold")
    changes = app.set_thresholds(cells)
    obj.save(app)
    _print_changes(changes, app)
    units.show(conversions)


@click.command("set-weight", help="Set WRR/DWRR weights: tofcc set-weight voice=8")
@click.argument("pairs", nargs=-1, required=True)
@json_option
@click.pass_obj
def set_weight(obj: Context, pairs: tuple[str, ...]) -> None:
    app = obj.pmqecn()
    changes = app.set_weights(_parse_pairs(app, pairs, "set-weight"))
    obj.save(app)
    _print_changes(changes, app)


@click.command(help="Measure, solve the M/M/1/N model, write K_i, weights and lambda_i*.")
@click.option("--once", is_flag=True, help="one cycle (default when --interval is absent)")
@cycle_options
@json_option
@click.pass_obj
def optimize(obj: Context, once: bool, interval: float | None, count: int | None) -> None:
    count = cycles_asked(interval, count, MAX_INTERVAL_S, once)
    app = obj.pmqecn()
    if interval is None or once:
        app.start(time.monotonic())
        time.sleep(min(app.config.optimizer.interval_s, 0.2) if obj.is_model else 0)
        _print_changes(app.optimize_once(time.monotonic()), app)
        obj.save(app)
        return
    # A health read each cycle: a restarted switch is re-pushed even when the
    # cycle itself would write nothing.
    sup = Supervisor(app, probe=lambda: holds_state(app))
    done = 0
    app.start(time.monotonic())
    while count == 0 or done < count:
        time.sleep(interval)
        repairs = sup.reconnects + sup.restarts_detected
        changes = sup.run(lambda: app.optimize_once(time.monotonic()))
        obj.audit_cycle(
            "optimize-cycle", len(changes), sup.reconnects + sup.restarts_detected != repairs
        )
        _print_changes(changes, app)
        obj.save(app)
        done += 1
        json_report.flush_line()  # --json: a document per cycle, a line each


COMMANDS: tuple[click.Command, ...] = (set_threshold, set_weight, optimize)
# PMQECN has no `tofcc set`: its classes are retuned by set-threshold/set-weight.
set_command = None
SET_HELP = None
