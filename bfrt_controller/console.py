"""The terminal every `tofcc` command prints to.

One module, below the CLI and the per-program commands alike, so that the
commands can print without importing the CLI that imports them.
"""

from __future__ import annotations

import sys

from rich.console import Console

# A pipe gets a fixed width so tables do not wrap differently per terminal.
console = Console(width=None if sys.stdout.isatty() else 140)


def cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
