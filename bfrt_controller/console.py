# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The terminal every `tofcc` command prints to.

One module, below the CLI and the per-program commands alike, so that the
commands can print without importing the CLI that imports them.

Markup is off on both consoles: what tofcc prints carries user text (class
names, paths, the values of a refused pair), and rich would parse `[/x]` in
it as a closing tag and raise MarkupError after the state was written, or
swallow `[prod]` from a path. Colour is given as a style, never inline.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text


# A pipe gets a fixed width so tables do not wrap differently per terminal.
class _PipeConsole(Console):
    # rich ends the process with status 1 on a closed pipe; tofcc's run()
    # ends it quietly with 0 instead, as `tofcc status | head -1` expects.
    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError()


console = _PipeConsole(width=None if sys.stdout.isatty() else 140, markup=False)
# Errors and warnings go to stderr, so `tofcc status --json | jq` sees only data.
err_console = Console(
    stderr=True, width=None if sys.stderr.isatty() else 140, markup=False, highlight=False
)


def print_error(message: object, prefix: str = "error: ") -> None:
    """One error line on stderr, the message as plain text."""
    err_console.print(Text.assemble((prefix, "red"), str(message)), soft_wrap=True)


def print_warning(message: object) -> None:
    err_console.print(Text.assemble(("warning: ", "yellow"), str(message)), soft_wrap=True)


def cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def print_changes(out: Console, rows: Sequence[tuple[str, ...]], place: str | None = None) -> None:
    """What a retuning command wrote: one row per change, (place,) what,
    old, new, why; every program's `set` prints the same table."""
    if not rows:
        out.print("nothing changed")
        return
    t = Table(title="changes written")
    for col in ((place,) if place else ()) + ("what", "old", "new", "why"):
        t.add_column(col)
    for row in rows:
        t.add_row(*row)
    out.print(t)


def print_rows(
    title: str, columns: tuple[tuple[str, str], ...], rows: list[dict[str, object]]
) -> None:
    t = Table(title=title)
    for heading, _ in columns:
        t.add_column(heading)
    for r in rows:
        t.add_row(*(cell(r.get(key)) for _, key in columns))
    console.print(t)
