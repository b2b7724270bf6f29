# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc's commands that take a config file: `apply`, `diff`, `check` and
`params` (the CLI's group, cli.py, adds them)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from .audit import AuditLog
from .console import (
    console,
    json_option,
    json_report,
    json_wanted,
    print_error,
    report,
    report_item,
    say,
)
from .context import Context
from .diff_view import show_diff
from .documents import DeploymentDocument
from .errors import ConfigError, ControllerError
from .targets import open_switch


@click.command(help="Validate CONFIG and write its whole state as one batch.")
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option(
    "--dry-run", is_flag=True, help="write nothing: show what the apply would change (tofcc diff)"
)
@click.option(
    "--confirm-within",
    "confirm_within",
    type=click.FloatRange(1, 86_400),
    default=None,
    metavar="SECONDS",
    help="revert to what ran before unless `tofcc confirm` comes within SECONDS "
    "(as EOS's commit timer; README: Safe changes)",
)
@json_option
@click.pass_obj
def apply(obj: Context, config_file: Path, dry_run: bool, confirm_within: float | None) -> None:
    if dry_run:
        show_diff(obj, config_file, as_json=json_wanted())
        if json_wanted():
            json_report.printed()  # diff's document is the answer
        return
    if confirm_within is not None:
        from .safe_changes import apply_with_confirm

        apply_with_confirm(obj, config_file, confirm_within, lambda: _apply(obj, config_file))
        return
    _apply(obj, config_file)


def _apply(obj: Context, config_file: Path) -> None:
    from .running import keep_measurements, measurements_held

    obj.intend_write(file=str(config_file))
    doc = obj.document(config_file)
    obj.show_conversions(config_file)
    if isinstance(doc, DeploymentDocument):
        _refuse_deployment_overrides(obj, config_file)
        audit = obj.audit(doc)
        audit.check()
        obj.settled_write()  # from here each switch leaves a line of its own
        json_report.keep_on_error()  # --json: each switch's result, failed or not
        _apply_deployment(doc, audit)
        return
    obj.adopt(doc)
    obj.config_path = config_file
    # An apply writes the file's values, not the ones the switch holds...
    app = obj.open_app(adopt_live=False)
    # ...but keeps what it measured (running.py): no config field holds that.
    if obj.is_model:  # the state file open_app read (of this program: it checked)
        held = (obj._saved or {}).get("live")
    else:
        held = measurements_held(obj.program.name, app.switch, app.config)
    keep_measurements(obj.program.name, app, held)
    if not obj.is_model:
        app.push_all()
    obj.save(app)
    writes = len(app.intended_writes())
    report(applied=str(config_file), program=doc.program.name, switch=obj.switch_label)
    report(writes=writes)
    console.print(f"applied {config_file}: {writes} writes ({doc.program.name})")


# What a deployment file gives each target itself, so a global option would
# either be ignored (as it was) or contradict the file: refused, never ignored.
_DEPLOYMENT_OWNS = {
    "target": "--target / TOFCC_TARGET: each target's `target:` in the file names its switch",
    "client_id": "--client-id: each target's `client_id:` in the file gives its client id",
    "state_path": "--state: a deployment keeps one state per `target: model` switch, "
    "$XDG_STATE_HOME/tofcc/target-NAME.yaml (set XDG_STATE_HOME to move them)",
}


def _refuse_deployment_overrides(obj: Context, config_file: Path) -> None:
    for option in sorted(obj.given & _DEPLOYMENT_OWNS.keys()):
        flag, why = _DEPLOYMENT_OWNS[option].split(": ", 1)
        raise ConfigError(flag, f"not taken with the deployment file {config_file}: {why}")


def _apply_deployment(doc: DeploymentDocument, audit: AuditLog) -> None:
    """Apply a deployment file: every switch gets its ports and its program's
    state, one batch each. A switch that refuses keeps its state (rolled
    back) and the others are still written; the first error is the exit
    code. The whole file was validated when it was read, before any write.
    A model target's switch is saved to its state file (fleet.save_target).
    Each switch leaves its own audit line."""
    from .fleet import make_target_app, save_target
    from .running import keep_measurements
    from .state import state_lock, target_state_path

    failed: ControllerError | None = None
    for t in doc.targets:
        try:
            with (
                audit.write("apply", t.name, t.spec.program, t.config, target=t.spec.target),
                contextlib.ExitStack() as held,
            ):
                switch = open_switch(
                    t.spec.target, t.spec.program, t.profile, client_id=t.spec.client_id, tls=t.tls
                )
                held.callback(switch.close)
                if t.spec.target == "model":
                    held.enter_context(state_lock(target_state_path(t.name)))
                switch.connect()
                app = make_target_app(t, switch)
                app.resolve_front_panel()
                keep_measurements(t.spec.program, app.inner, _held_measurements(t, switch))
                app.push_all()
                if t.spec.target == "model":
                    save_target(target_state_path(t.name), app)
            writes = len(app.intended_writes())
            report_item("switches", {"switch": t.name, "program": t.spec.program, "writes": writes})
            console.print(f"{t.name}: applied {writes} writes")
        except ControllerError as exc:
            report_item("switches", {"switch": t.name, "error": str(exc)})
            print_error(exc, prefix=f"{t.name}: ")
            failed = failed or exc
    if failed is not None:
        raise failed


def _held_measurements(t: Any, switch: Any) -> dict[str, Any] | None:
    """What a deployment target's switch measured (running.py), which an apply keeps."""
    from .running import measurements_held
    from .state import load_state, target_state_path

    if t.spec.target != "model":
        return measurements_held(t.spec.program, switch, t.config)
    saved = load_state(target_state_path(t.name))
    return saved.get("live") if saved is not None and saved["program"] == t.spec.program else None


@click.command(help="Show what an apply of CONFIG would change on the live switch; writes nothing.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    required=True,
    help="a deployment file (targets:) or a program config (against --target)",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON document: per switch, its changes")
@click.option(
    "--exit-code",
    is_flag=True,
    help="exit 1 when an apply would change something, 0 when not (as `git diff --exit-code`)",
)
@click.option(
    "--raw",
    is_flag=True,
    help="list the table entries, TM and port writes that differ, not the config fields",
)
@click.pass_obj
def diff(obj: Context, config_file: Path, as_json: bool, exit_code: bool, raw: bool) -> None:
    if not as_json:  # the JSON document has the cells; the notes are for a person
        obj.document(config_file)
        obj.show_conversions(config_file)
    changed = show_diff(obj, config_file, as_json, raw)
    if exit_code and changed:
        raise DifferencesFound()


class DifferencesFound(ControllerError):
    """`diff --exit-code` found something an apply would change."""

    exit_code = 1

    def __init__(self) -> None:
        super().__init__("")


@click.command(
    help="Validate a deployment file (every target's program config included) or a "
    "program config; contacts no switch. Run it before `systemctl reload tofcc`."
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    required=True,
    help="deployment file or program config to validate",
)
@json_option
@click.pass_obj
def check(obj: Context, config_file: Path) -> None:
    doc = obj.document(config_file)
    report(file=str(config_file), kind=doc.kind, ok=True)
    obj.show_conversions(config_file)
    if isinstance(doc, DeploymentDocument):
        for t in doc.targets:
            chip = t.profile.chip
            report_item(
                "targets",
                {"name": t.name, "program": t.spec.program, "target": t.spec.target, "chip": chip},
            )
            say(f"{t.name}: {t.spec.program} on {t.spec.target} ({chip}): ok")
        return
    cfg = doc.config
    report(program=cfg.program, chip=cfg.chip)
    say(f"{config_file}: {cfg.program} ({cfg.chip}): ok")


@click.command(
    help="List every setting of --program's config: name, unit, range, default "
    "(from the config schema itself); --schema prints its JSON Schema for editors."
)
@click.option("--json", "as_json", is_flag=True, help="the settings as a JSON list")
@click.option("--schema", is_flag=True, help="the config's JSON Schema (draft 2020-12)")
@click.pass_obj
def params(obj: Context, as_json: bool, schema: bool) -> None:
    from dataclasses import asdict

    from .params import json_schema
    from .params import params as list_params

    name = obj.program.name
    if schema:
        click.echo(json.dumps(json_schema(name), indent=2))
        return
    rows = list_params(name)
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    t = Table(title=f"{name} settings (tofcc --program {name} params --schema: JSON Schema)")
    for col in ("setting", "type", "unit", "range", "default", "description"):
        t.add_column(col)
    for r in rows:
        t.add_row(r.name, r.type, r.unit or "-", r.range, r.default, r.description)
    console.print(t, markup=False)


COMMANDS: tuple[click.Command, ...] = (apply, diff, check, params)
