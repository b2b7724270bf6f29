"""tofcc commands for DA-DCTCP: its side of `set`, and `reallocate`.

`tofcc --program dadctcp set mode=dctcp | k_port_packets=120 |
drop_not_ect=true [--port 4]` changes the switch-wide mode or a port's
K_port / non-ECT handling (default: every port), all or none.
`tofcc --program dadctcp reallocate` runs one round of Algorithm 2 now and
prints what moved (the daemon, `tofcc run`, runs it every interval_s).
"""

from __future__ import annotations

import re
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ..errors import ConfigError
from .app import MODES, SETTABLE, Change, DadctcpApp

_INT = re.compile(r"[0-9]{1,10}")
_BOOL = {"true": True, "false": False}


def parse_set(pairs: tuple[str, ...]) -> dict[str, object]:
    """NAME=VALUE pairs, checked for name and type before the switch is opened."""
    out: dict[str, object] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise ConfigError("set", f"expected NAME=VALUE, got {pair!r}")
        if name not in SETTABLE:
            raise ConfigError(name, f"not settable (settable: {', '.join(SETTABLE)})")
        if name in out:
            raise ConfigError(name, "given twice")
        if name == "mode":
            if text not in MODES:
                raise ConfigError(name, f"must be one of {', '.join(MODES)}, got {text!r}")
            out[name] = text
        elif name == "drop_not_ect":
            if text not in _BOOL:
                raise ConfigError(name, f"must be true or false, got {text!r}")
            out[name] = _BOOL[text]
        else:
            if not _INT.fullmatch(text):
                raise ConfigError(name, f"expected a whole number of packets, got {text!r}")
            out[name] = int(text)
    return out


def print_changes(console: Console, changes: list[Change]) -> None:
    if not changes:
        console.print("nothing changed")
        return
    t = Table(title="changes written")
    for col in ("where", "what", "old", "new", "why"):
        t.add_column(col)
    for ch in changes:
        t.add_row(ch.where, ch.what, str(ch.old), str(ch.new), ch.why)
    console.print(t)


def set_values(obj: Any, pairs: tuple[str, ...], port: str | None, console: Console) -> None:
    values = parse_set(pairs)
    if port is not None and not _INT.fullmatch(port):
        raise ConfigError("--port", f"expected a port number, got {port!r}")
    app = obj.open_app(sync=True)
    assert isinstance(app, DadctcpApp)
    changes = app.set_values(values, None if port is None else int(port))
    obj.save(app)
    print_changes(console, changes)


@click.command(help="DA-DCTCP: run one round of Algorithm 2 now and print what moved.")
@click.pass_obj
def reallocate(obj: Any) -> None:
    from ..cli import console

    obj.require("dadctcp")
    app = obj.open_app(sync=True)
    assert isinstance(app, DadctcpApp)
    changes = app.reallocate_once()
    obj.save(app)
    print_changes(console, changes)
