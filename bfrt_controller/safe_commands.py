# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc save`, `checkpoint`, `rollback` and `confirm` (safe_changes.py
does the work, imported when one of them runs: tofcc's start-up stays as it was)."""

from __future__ import annotations

from pathlib import Path

import click

from .console import json_option
from .context import Context


@click.command(
    help="Write what the switch runs (values tuned at run time included) as a config FILE "
    "that `apply` takes and `diff` shows no change against; with --config DEPLOY.yaml, a "
    "deployment file with every switch's running config inline."
)
@click.argument("out", metavar="FILE", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "source",
    type=click.Path(path_type=Path),
    default=None,
    help="a deployment file (save every switch), or the program config a grpc:// switch runs",
)
@json_option
@click.pass_obj
def save(obj: Context, out: Path, source: Path | None) -> None:
    from .safe_changes import save_command

    save_command(obj, out, source)


@click.command(
    help="Keep what the switch runs now as checkpoint NAME (in the state directory), for "
    "`tofcc rollback NAME`; --list: the switch's checkpoints."
)
@click.argument("name", required=False)
@click.option("--list", "listing", is_flag=True, help="list the checkpoints of this switch")
@json_option
@click.pass_obj
def checkpoint(obj: Context, name: str | None, listing: bool) -> None:
    from .safe_changes import checkpoint_command

    checkpoint_command(obj, name, listing)


@click.command(
    help="Write checkpoint NAME back to the switch as one batch: all of it or, refused, none; "
    "what the present config writes and the checkpoint lacks is removed."
)
@click.argument("name")
@json_option
@click.pass_obj
def rollback(obj: Context, name: str) -> None:
    from .safe_changes import rollback_command

    rollback_command(obj, name)


@click.command(
    help="Keep an apply made with --confirm-within: without this before its deadline, each "
    "switch goes back to what it ran before."
)
@json_option
def confirm() -> None:
    from .safe_changes import confirm_command

    confirm_command()


COMMANDS: tuple[click.Command, ...] = (save, checkpoint, rollback, confirm)
