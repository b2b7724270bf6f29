# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc for the AQM program: `set` changes queues' settings or switches
their mechanism.

`tofcc --program aqm set max_th_cells=300 max_p=0.1 [--queue 3/0]` changes
the named queues (default: every queue whose mode uses the field), all or
none. A field the named queue's mode does not use (target_us on a RED queue)
is refused, naming the queue; so is a field no queue's mode uses.
`tofcc --program aqm set --queue 4/0 mechanism=pie target_delay_us=5000`
switches the queue to PIE with its other settings at PIE's defaults, in
one batch that also zeroes the queue's state (bfrt_controller/aqm/batch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from ..console import print_queue_changes
from ..errors import ConfigError
from ..set_args import parse_queues, parse_values, refuse_options
from .app import SETTABLE, USED_BY, AqmApp, Change
from .mechanisms import MODES


def parse_set(pairs: tuple[str, ...], cell_bytes: int | None = None) -> dict[str, object]:
    return parse_values(pairs, SETTABLE, cell_bytes)


def print_changes(
    console: Console, changes: list[Change], name_of: Callable[[int], str | None] | None = None
) -> None:
    print_queue_changes(console, changes, name_of)


def set_queues(obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], console: Console) -> None:
    fields = parse_set(pairs, obj.cell_bytes())
    selected = parse_queues(queues, obj.dev_port_of)
    app = obj.open_app(sync=True)
    assert isinstance(app, AqmApp)
    if "mechanism" in fields and not selected:
        raise ConfigError("set mechanism", "a switch names its queues: --queue PORT/QUEUE")
    if selected:
        updates = {q: dict(fields) for q in selected}
    else:
        # Each field to the queues whose mode reads it (max_p to RED queues,
        # target_us to CoDel ones).
        updates = {}
        for name, value in fields.items():
            users = [(q.port, q.queue) for q in app.config.queues if name in USED_BY[q.mode]]
            if not users:
                modes = sorted({q.mode for q in app.config.queues})
                raise ConfigError(
                    f"set {name}", f"no queue's mode uses it (the queues run {', '.join(modes)})"
                )
            for q in users:
                updates.setdefault(q, {})[name] = value
    changes = app.set_queues(updates)
    obj.save(app)
    print_changes(console, changes, obj.port_namer())


SET_HELP = (
    "AQM: tofcc --program aqm set max_p=0.1 target_us=2000 [--queue 4/0]; "
    "tofcc --program aqm set --queue 4/0 mechanism=pie target_delay_us=15000 "
    f"(mechanism: {', '.join(MODES)}; "
    f"settings: {', '.join(s for s in SETTABLE if s != 'mechanism')}; "
    "a _cells value also in bytes: max_th_bytes=32KB)"
)


def set_command(
    obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    from ..console import console

    refuse_options("aqm", port=port is not None)
    set_queues(obj, pairs, queues, console)


COMMANDS: tuple[click.Command, ...] = ()
