# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc for S-PIE: `set` retunes PIE and the sketch on every S-PIE port.

`tofcc --program spie set alpha_per_s=0.2 del_ref_us=10000 columns=2048` changes
them all or none (names: alpha_per_s, beta_per_s, del_ref_us, t_update_us,
stale_after_us, columns, clear_interval_us).
"""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console

from ..console import print_changes as show_changes
from ..set_args import parse_values, refuse_options
from .app import SETTABLE, Change, SpieApp


def print_changes(console: Console, changes: list[Change]) -> None:
    rows = [(ch.what, str(ch.old), str(ch.new), ch.why) for ch in changes]
    show_changes(console, rows)


def set_params(obj: Any, pairs: tuple[str, ...], console: Console) -> None:
    values = parse_values(pairs, SETTABLE)
    app = obj.open_app(sync=True)
    assert isinstance(app, SpieApp)
    changes = app.set_params(values)
    obj.save(app)
    print_changes(console, changes)


SET_HELP = (
    "S-PIE: tofcc --program spie set alpha_per_s=0.2 columns=2048 (alpha_per_s, beta_per_s, "
    "del_ref_us, t_update_us, stale_after_us, columns, clear_interval_us)"
)


def set_command(
    obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    from ..console import console

    refuse_options("spie", queue=queues, port=port is not None)
    set_params(obj, pairs, console)


COMMANDS: tuple[click.Command, ...] = ()
