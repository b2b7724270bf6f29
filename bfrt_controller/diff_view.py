# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc diff` and `apply --dry-run` print: per switch, what an apply
would change, computed by diff.py against the live switch (or the model
target's saved switch).

Rows name the config fields that differ (`voice.threshold_cells 33 20`):
the switch's running values as a config (running.py) against the file.
Table entries no config field accounts for (a BF-Runtime switch that lost
an entry) are listed as entries below them, and `--raw` lists every table
entry, TM queue and port write that would change, as diff did before.
Either way the count, and `--exit-code`, are the writes an apply would make.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from hw_profiles import load_profile

from .console import console
from .context import Context
from .documents import DeploymentDocument
from .state import load_state
from .targets import open_switch

if TYPE_CHECKING:  # diff.py is imported when a diff runs
    from .diff import Difference, TableSummary


@dataclass
class Plan:
    name: str  # the switch, as the report names it
    switch: Any
    app: Any  # fleet.TargetApp: what an apply would write
    running: Any  # fleet.TargetApp: what the switch runs (None: nothing of the program)
    remote: bool  # a BF-Runtime switch (no state file behind it)


def live_model(obj: Context, profile: Any) -> tuple[Any, dict[str, Any] | None]:
    """The model target's switch as its state file left it (the model keeps
    no state between commands; the state file is what it holds), and that state."""
    switch = open_switch("model", obj.program.name, profile)
    saved = load_state(obj.state_path)
    obj.check_state_program(saved)
    if saved is not None:
        cfg: Any = obj.program.parse_config(saved["config"], f"state file {obj.state_path}: config")
        if cfg.chip != profile.chip:
            return switch, None
        app = obj.program.make_app(switch, cfg)
        app.restore_live(saved.get("live") or {}, f"state file {obj.state_path}: live")
        app.push_all()
    return switch, saved


def _saved_app(switch: Any, saved: dict[str, Any] | None, where: str) -> Any:
    """The app of a state the model switch was brought to (None: none)."""
    from .snapshots import Snapshot, app_of

    if saved is None:
        return None
    app = app_of(Snapshot.from_dict(saved, where), switch, where)
    app.resolve_front_panel()
    return app


def _remote_running(app: Any) -> Any:
    """What a BF-Runtime switch runs, as `app`'s config with the values it
    holds read back (only values the config's entries carry can be)."""
    from .fleet import TargetApp
    from .programs import get_program
    from .sync import adopt_held_values

    inner = get_program(app.switch.program).make_app(app.switch, app.config)
    running = TargetApp(inner, app.ports, app.board)
    running.dev_ports = app.dev_ports
    adopt_held_values(running.inner)
    return running


def _plans(obj: Context, config_file: Path) -> list[Plan]:
    from .fleet import TargetApp, make_target_app, replay_target
    from .state import target_state_path

    doc = obj.document(config_file)
    plans: list[Plan] = []
    if isinstance(doc, DeploymentDocument):
        for t in doc.targets:
            if t.spec.target == "model":
                # The switch as the last apply or `run` left it (fleet.replay_target).
                sw = open_switch("model", t.spec.program, t.profile)
                path = target_state_path(t.name)
                saved = replay_target(sw, path, t.spec.program)
                running = _saved_app(sw, saved, f"state file {path}")
            else:
                sw = open_switch(
                    t.spec.target, t.spec.program, t.profile, read_only=True, tls=t.tls
                )
                sw.connect()
                obj._held.callback(sw.close)
                running = None
            target_app = make_target_app(t, sw)
            target_app.resolve_front_panel()
            remote = t.spec.target != "model"
            if remote:
                running = _remote_running(target_app)
            plans.append(Plan(t.name, sw, target_app, running, remote))
        return plans
    obj.adopt(doc)
    cfg = doc.config
    profile = load_profile(cfg.chip)
    if obj.is_model:
        sw, saved = live_model(obj, profile)
        app = TargetApp(obj.program.make_app(sw, cfg), None, None)
        running = _saved_app(sw, saved, f"state file {obj.state_path}") if saved else None
        plans.append(Plan(obj.target, sw, app, running, False))
        return plans
    sw = open_switch(obj.target, obj.program.name, profile, read_only=True, tls=obj.tls)
    sw.connect()
    obj._held.callback(sw.close)
    app = TargetApp(obj.program.make_app(sw, cfg), None, None)
    plans.append(Plan(obj.target, sw, app, _remote_running(app), True))
    return plans


def _field_doc(app: Any, config: Any) -> dict[str, Any]:
    doc: dict[str, Any] = dict(config.model_dump(mode="json"))
    if app.ports is not None:
        doc["front_panel"] = app.ports.model_dump(mode="json")
    return doc


def _fields(plan: Plan, program: str) -> list[Any] | None:
    """The config fields the switch's running values differ from the file's
    in (running.py); None when the switch runs nothing of the program."""
    from .running import field_changes, running_config

    if plan.running is None:
        return None
    current = _field_doc(plan.running, running_config(program, plan.running.inner))
    return field_changes(current, _field_doc(plan.app, plan.app.config))


def show_diff(obj: Context, config_file: Path, as_json: bool = False, raw: bool = False) -> int:
    """Print, per switch, what an apply of `config_file` would change. A
    deployment file (with `targets:`) is diffed against each of its switches;
    a program config against --target. Returns how many changes an apply
    would write."""
    from .diff import as_json as diff_json
    from .diff import diff_writes, summarise
    from .running import keep_measurements

    report: dict[str, object] = {}
    changed = 0
    for plan in _plans(obj, config_file):
        program = plan.switch.program
        # An apply keeps what the switch measured (running.keep_measurements).
        held = plan.running.live_state() if plan.running is not None else None
        keep_measurements(program, plan.app.inner, held)
        writes = plan.app.intended_writes()
        listed, summaries = summarise(diff_writes(plan.switch, writes), plan.app.static_tables())
        summary_doc = diff_json(len(writes), listed, summaries)
        changes = summary_doc["changes"]
        assert isinstance(changes, int)
        changed += changes
        fields = None if raw else _fields(plan, program)
        untraced: list[Difference] = []
        if fields is not None:
            summary_doc["fields"] = [f.as_dict() for f in fields]
            if plan.remote:
                # What the switch holds that its own running config would not
                # write: entries no field can name (a lost entry, a stray value).
                untraced = summarise(
                    diff_writes(plan.switch, plan.running.dynamic_writes()),
                    plan.app.static_tables(),
                )[0]
        report[plan.name] = summary_doc
        if as_json:
            continue
        _print_switch(plan.name, changes, len(writes), listed, summaries, fields, untraced)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    return changed


def _print_switch(
    name: str,
    changes: int,
    checked: int,
    listed: list[Difference],
    summaries: list[TableSummary],
    fields: list[Any] | None,
    untraced: list[Difference],
) -> None:
    if not listed and not summaries and not fields:
        console.print(f"{name}: no changes ({checked} writes checked)")
        return
    title = f"{name}: {changes} change(s) an apply would write"
    if fields or untraced:
        if fields:
            table = Table(title=title)
            for col in ("change", "field", "switch holds", "config wants"):
                table.add_column(col)
            for f in fields:
                table.add_row(f.change, f.field, f.current, f.intended)
            console.print(table, markup=False)
        if untraced:
            _print_entries(f"{name}: entries no config field accounts for", untraced)
        entries = sum(d.change != "unknown" for d in listed)
        if entries:
            console.print(
                f"({entries} table write(s) listed by tofcc diff --raw)",
                markup=False,
                highlight=False,
            )
    elif listed:
        _print_entries(title, listed)
    if summaries:
        # Tables the program computes from its config (thousands of fixed
        # entries): one count each, never thousands of rows.
        console.print("derived tables (computed from the config; counted, not listed):")
    for summary in summaries:
        console.print(summary.line(), markup=False, highlight=False)


def _print_entries(title: str, rows: list[Difference]) -> None:
    table = Table(title=title)
    for col in ("change", "where", "switch holds", "config wants"):
        table.add_column(col)
    for d in rows:
        table.add_row(d.change, d.where, d.current, d.intended)
    console.print(table, markup=False)
