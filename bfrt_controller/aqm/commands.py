"""tofcc for the AQM program: `set` changes queues' RED or CoDel settings.

`tofcc --program aqm set max_th_cells=300 max_p=0.1 [--queue 3/0]` changes
the named queues (default: all), all or none. A field of the other
mechanism (target_us on a RED queue) is validated and kept, unused.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table

from ..errors import ConfigError
from ..p4qcn.commands import parse_queues
from .app import SETTABLE, AqmApp, Change

_INT = re.compile(r"[0-9]{1,10}")
_NUMBER = re.compile(r"[0-9]{1,12}(\.[0-9]{1,12})?")
_BOOL = {"true": True, "false": False}


def parse_values(pairs: tuple[str, ...], settable: dict[str, type]) -> dict[str, object]:
    """NAME=VALUE pairs, checked for name and type (int, float or bool, as
    `settable` says) before the switch is opened."""
    out: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError("set", f"expected NAME=VALUE, got {pair!r}")
        if name not in settable:
            raise ConfigError(name, f"not settable (settable: {', '.join(settable)})")
        if name in out:
            raise ConfigError(name, f"given twice ({name}={out[name]}, {pair})")
        kind = settable[name]
        if kind is bool:
            if value not in _BOOL:
                raise ConfigError(name, f"must be true or false, got {value!r}")
            out[name] = _BOOL[value]
        elif kind is int:
            if not _INT.fullmatch(value):
                raise ConfigError(name, f"expected a non-negative integer, got {value!r}")
            out[name] = int(value)
        else:
            if not _NUMBER.fullmatch(value):
                raise ConfigError(name, f"expected a non-negative number, got {value!r}")
            out[name] = float(value)
    return out


def parse_set(pairs: tuple[str, ...]) -> dict[str, object]:
    return parse_values(pairs, SETTABLE)


def print_changes(console: Console, changes: list[Change]) -> None:
    if not changes:
        console.print("nothing changed")
        return
    t = Table(title="changes written")
    for col in ("queue", "what", "old", "new", "why"):
        t.add_column(col)
    for ch in changes:
        t.add_row(ch.queue, ch.what, str(ch.old), str(ch.new), ch.why)
    console.print(t)


def set_queues(obj: Any, pairs: tuple[str, ...], queues: tuple[str, ...], console: Console) -> None:
    fields = parse_set(pairs)
    selected = parse_queues(queues)
    app = obj.open_app(sync=True)
    assert isinstance(app, AqmApp)
    targets = selected or [(q.port, q.queue) for q in app.config.queues]
    changes = app.set_queues({q: dict(fields) for q in targets})
    obj.save(app)
    print_changes(console, changes)
