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

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
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
F = TypeVar("F", bound=Callable[..., Any])
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


# ---- --json: one JSON document on stdout ------------------------------------------------
#
# A command given --json (json_option) prints its result as one JSON
# document on stdout when it ends; the console writes to stderr meanwhile, so
# the notes and tables a person reads never mix into it. The command gives
# its result to report(); a command that prints a document of its own
# (status, diff, queues: their --json came first) takes `as_json` and prints
# it itself.


class JsonReport:
    def __init__(self) -> None:
        self.active = False
        self.doc: dict[str, Any] = {}
        self.lines = 0
        self.partial = False

    def begin(self) -> None:
        self.active, self.doc, self.lines, self.partial = True, {}, 0, False
        console.file = sys.stderr

    def keep_on_error(self) -> None:
        """The document says what was done before an error (a deployment
        apply: each switch's result), so it is printed, with the error."""
        self.partial = True

    def end(self, error: BaseException | None) -> None:
        """Print the document (with the error, if the command failed after
        reporting something) and give the console stdout back."""
        if not self.active:
            return
        doc, self.active, self.doc = self.doc, False, {}
        console.file = None  # type: ignore[assignment]  # rich: sys.stdout, as at start
        if error is not None:
            if not (doc and self.partial):
                return  # the error on stderr says it all
            doc["error"] = str(error)
            doc["exit_code"] = getattr(error, "exit_code", 1)
        if doc or not self.lines:
            click.echo(json.dumps(doc, indent=2, default=str))

    def printed(self) -> None:
        """The command printed its document itself (apply --dry-run: diff's)."""
        self.lines += 1

    def flush_line(self) -> None:
        """A looping command (`optimize --interval`): one compact document
        per cycle, a line each, as it happens."""
        if self.active:
            click.echo(json.dumps(self.doc, separators=(",", ":"), default=str))
            self.doc, self.lines = {}, self.lines + 1


json_report = JsonReport()


def report(**fields: Any) -> None:
    """Fields of the --json document (nothing without --json)."""
    if json_report.active:
        json_report.doc.update(fields)


def report_item(key: str, item: Any) -> None:
    """One more item of the document's list `key`."""
    if json_report.active:
        json_report.doc.setdefault(key, []).append(item)


def json_wanted() -> bool:
    return json_report.active


def _enable_json(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        json_report.begin()


def json_option(f: F) -> F:
    """`--json` on a command: its result as one JSON document on stdout."""
    return click.option(  # type: ignore[no-any-return]
        "--json",
        is_flag=True,
        expose_value=False,
        callback=_enable_json,
        help="the result as one JSON document on stdout (notes and tables go to stderr)",
    )(f)


def say(text: str) -> None:
    """A line for the operator (stdout; stderr under --json)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


CHANGE_KEYS = ("what", "old", "new", "why")


def print_changes(out: Console, rows: Sequence[tuple[str, ...]], place: str | None = None) -> None:
    """What a retuning command wrote: one row per change, (place,) what,
    old, new, why; every program's `set` prints the same table (under
    --json, the document's `changes`)."""
    if json_report.active:
        keys = ((place,) if place else ()) + CHANGE_KEYS
        report(changes=[dict(zip(keys, row, strict=True)) for row in rows])
        return
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


def print_queue_changes(
    out: Console, changes: Sequence[Any], name_of: Callable[[int], str | None] | None = None
) -> None:
    """A per-queue `set`'s changes (common.QueueChange rows). A person reads
    each queue by the box's name and the device key (`32/3/0 (dev 3/0)`)
    where the board names its port; a script (--json) gets the device key."""

    def shown(key: str) -> str:
        port, _, queue = key.partition("/")
        if name_of is None or json_report.active or not port.isdigit():
            return key  # no board, a script, or a switch-wide row (the watchdog)
        name = name_of(int(port))
        return key if name is None else f"{name}/{queue} (dev {key})"

    rows = [(shown(ch.queue), ch.what, str(ch.old), str(ch.new), ch.why) for ch in changes]
    print_changes(out, rows, "queue")
