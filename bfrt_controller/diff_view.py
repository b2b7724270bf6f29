"""What `tofcc diff` and `apply --dry-run` print: per switch, what an apply
would change, computed by diff.py against the live switch (or the model
target's saved switch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from hw_profiles import load_profile

from .console import console
from .context import Context
from .documents import DeploymentDocument
from .state import load_state
from .targets import open_switch


def live_model(obj: Context, profile: Any) -> Any:
    """The model target's switch as its state file left it (the model keeps
    no state between commands; the state file is what it holds)."""
    switch = open_switch("model", obj.program.name, profile)
    saved = load_state(obj.state_path)
    obj.check_state_program(saved)
    if saved is not None:
        cfg: Any = obj.program.parse_config(saved["config"], f"state file {obj.state_path}: config")
        if cfg.chip == profile.chip:
            app = obj.program.make_app(switch, cfg)
            app.restore_live(saved.get("live") or {}, f"state file {obj.state_path}: live")
            app.push_all()
    return switch


def show_diff(obj: Context, config_file: Path, as_json: bool = False) -> int:
    """Print, per switch, what an apply of `config_file` would change. A
    deployment file (with `targets:`) is diffed against each of its switches;
    a program config against --target. Returns how many changes an apply
    would write."""
    from .diff import as_json as diff_json
    from .diff import diff_writes, summarise
    from .fleet import TargetApp, make_target_app, replay_target
    from .state import target_state_path

    doc = obj.document(config_file)
    plans: list[tuple[str, Any, Any]] = []  # (switch name, switch, app)
    if isinstance(doc, DeploymentDocument):
        for t in doc.targets:
            if t.spec.target == "model":
                # The switch as the last apply or `run` left it (fleet.replay_target).
                sw = open_switch("model", t.spec.program, t.profile)
                replay_target(sw, target_state_path(t.name), t.spec.program)
            else:
                sw = open_switch(
                    t.spec.target, t.spec.program, t.profile, read_only=True, tls=t.tls
                )
                sw.connect()
                obj._held.callback(sw.close)
            target_app = make_target_app(t, sw)
            target_app.resolve_front_panel()
            plans.append((t.name, sw, target_app))
    else:
        obj.adopt(doc)
        cfg = doc.config
        profile = load_profile(cfg.chip)
        if obj.is_model:
            sw = live_model(obj, profile)
        else:
            sw = open_switch(obj.target, obj.program.name, profile, read_only=True, tls=obj.tls)
            sw.connect()
            obj._held.callback(sw.close)
        plans.append((obj.target, sw, TargetApp(obj.program.make_app(sw, cfg), None, None)))
    report: dict[str, object] = {}
    changed = 0
    for name, sw, app in plans:
        writes = app.intended_writes()
        listed, summaries = summarise(diff_writes(sw, writes), app.static_tables())
        summary_doc = diff_json(len(writes), listed, summaries)
        changes = summary_doc["changes"]
        assert isinstance(changes, int)
        changed += changes
        report[name] = summary_doc
        if as_json:
            continue
        if not listed and not summaries:
            console.print(f"{name}: no changes ({len(writes)} writes checked)")
            continue
        table = Table(title=f"{name}: {changes} change(s) an apply would write")
        for col in ("change", "where", "switch holds", "config wants"):
            table.add_column(col)
        for d in listed:
            table.add_row(d.change, d.where, d.current, d.intended)
        console.print(table, markup=False)
        if summaries:
            # Tables the program computes from its config (thousands of fixed
            # entries): one count each, never thousands of rows.
            console.print("derived tables (computed from the config; counted, not listed):")
        for summary in summaries:
            console.print(summary.line(), markup=False, highlight=False)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    return changed
