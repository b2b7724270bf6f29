# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The --interval and --count of a command that runs controller cycles
(`tofcc optimize`, `tofcc shape`): declared and checked in one place, so
every such command takes and refuses them alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from .common import MIN_CYCLE_INTERVAL_S, check_cycle_interval
from .errors import ConfigError

F = TypeVar("F", bound=Callable[..., object])


def cycle_options(command: F) -> F:
    """Add --interval SECONDS and --count N to a click command."""
    command = click.option(
        "--count",
        type=click.IntRange(min=0),
        default=None,
        help="with --interval: stop after this many cycles (0 or absent: forever)",
    )(command)
    return click.option(
        "--interval",
        type=float,
        help=f"run a cycle every SECONDS ({MIN_CYCLE_INTERVAL_S:g} or more) until interrupted",
    )(command)


def cycles_asked(
    interval: float | None, count: int | None, max_s: float, once: bool = False
) -> int:
    """How many cycles --interval and --count ask for (0: until interrupted),
    after refusing an interval out of bounds or a --count with no cycles to
    count (no --interval, or --once)."""
    if interval is not None:
        check_cycle_interval("--interval", interval, max_s)
    if count is not None and (interval is None or once):
        raise ConfigError("--count", "counts --interval cycles; give --interval SECONDS too")
    return count or 0
