# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc save`, `checkpoint`, `rollback`, `confirm` and `apply
--confirm-within`: changes an operator can take back (issue 52).

Each works on what a one-shot command works on: one program on one switch
(`--target`/`--program`/`--state`, or `--config DEPLOY [--switch NAME]`),
or, for `save --config DEPLOY` and `apply --confirm-within DEPLOY`, every
switch of a deployment. snapshots.py says how what a switch runs is taken
and written back; confirm.py how a pending apply reverts itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from . import confirm as pending
from . import paths
from .console import console, print_warning, report, report_item
from .context import Context
from .documents import DeploymentDocument, ProgramDocument
from .errors import ConfigError, ControllerError, WriteError
from .paths import PathError
from .running import keep_measurements, running_config, unsaved_values
from .snapshots import (
    Snapshot,
    Unit,
    capture,
    check_name,
    config_snapshot,
    list_checkpoints,
    read_checkpoint,
    restore,
    scratch_app,
    write_checkpoint,
)
from .state import target_state_path


def unit_of(obj: Context) -> Unit:
    """The switch and program a one-shot command works on."""
    t = obj.deployment_target
    return Unit(
        obj.target,
        obj.program.name,
        obj.client_id,
        # Absolute: `--state s.yaml` and its full path are one switch.
        str(obj.state_path.absolute()) if obj.is_model else None,
        t.name if t is not None else None,
        obj.tls,
    )


def base_of(obj: Context, config: Any = None) -> Snapshot | None:
    """What a BF-Runtime switch is taken to run: `config`, else --config's
    (else the program's default), with a deployment target's ports. The
    model target's state file says it itself."""
    if obj.is_model:
        return None
    t = obj.deployment_target
    front_panel = t.spec.front_panel if t is not None else None
    cfg = config if config is not None else obj.program_config()
    return config_snapshot(obj.program.name, cfg, front_panel)


def target_units(doc: DeploymentDocument) -> list[tuple[Unit, Snapshot]]:
    """Each switch of a deployment, with the config the file gives it."""
    out = []
    for t in doc.targets:
        model = t.spec.target == "model"
        unit = Unit(
            t.spec.target,
            t.spec.program,
            t.spec.client_id,
            str(target_state_path(t.name)) if model else None,
            t.name,
            t.tls,
        )
        out.append((unit, config_snapshot(t.spec.program, t.config, t.spec.front_panel)))
    return out


def _catch_up() -> None:
    """A revert whose timer was lost is done before anything else (confirm.py)."""
    for p in pending.revert_overdue():
        report_item(
            "overdue_reverts", {"apply": p.what(), "status": p.status, "outcome": p.outcome}
        )
        print_warning(f"{p.what()} was not confirmed in time: {p.status} ({p.outcome})")


# ---- save -----------------------------------------------------------------------------


def saved_config(unit: Unit, snap: Snapshot) -> tuple[Any, list[str]]:
    """The config that runs as `snap` does, checked to write what it holds;
    with the live values it cannot say (a warning's worth)."""
    where = f"the running values of {unit.describe()}"
    running = scratch_app(snap, where)
    cfg = running_config(unit.program, running.inner)
    again = scratch_app(
        Snapshot(unit.program, cfg.model_dump(mode="json"), {}, snap.front_panel), where
    )
    keep_measurements(unit.program, again.inner, running.live_state())
    if again.dynamic_writes() != running.dynamic_writes():
        # A fold that missed a value: refuse rather than save a file that
        # would not diff to nothing.
        raise ControllerError(f"{where}: cannot be written as a config (tofcc bug: running.py)")
    return cfg, unsaved_values(unit.program, running.inner, again.inner)


def _header(what: str) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S %z")
    return (
        f"# tofcc save, {when}: the running values of {what}, tuned ones included.\n"
        "# `tofcc apply` writes them back; `tofcc diff --config` this file shows nothing.\n"
    )


def _write_out(path: Path, text: str) -> None:
    try:
        paths.replace_file(path, text.encode())
    except PathError as exc:
        raise ConfigError(str(path), f"cannot be written: {exc.reason}") from None


def _warn_unsaved(unit: Unit, values: list[str]) -> None:
    report_item("switches", {"switch": unit.describe(), "unsaved": values})
    if values:
        print_warning(
            f"{unit.describe()}: {', '.join(values)} set at run time cannot be said in a "
            "config and is not saved (a checkpoint keeps it)"
        )


def _save_deployment(doc: DeploymentDocument, out: Path) -> None:
    service = doc.service.model_dump(mode="json")
    for i, (unit, base) in enumerate(target_units(doc)):
        snap = capture(unit, base)
        cfg, unsaved = saved_config(unit, snap)
        _warn_unsaved(unit, unsaved)
        service["targets"][i]["config"] = cfg.model_dump(mode="json")
        service["targets"][i]["front_panel"] = snap.front_panel
    what = f"the switches of {doc.path}"
    _write_out(out, _header(what) + yaml.safe_dump(service, sort_keys=False))
    report(saved=str(out), deployment=str(doc.path))
    console.print(f"saved {len(doc.targets)} switch(es) of {doc.path} to {out}")


def save_command(obj: Context, out: Path, source: Path | None) -> None:
    _catch_up()
    config = None
    if source is not None:
        doc = obj.document(source)
        if isinstance(doc, DeploymentDocument):
            _save_deployment(doc, out)
            return
        obj.adopt(doc)
        config = doc.config
    unit = unit_of(obj)
    cfg, unsaved = saved_config(unit, capture(unit, base_of(obj, config)))
    _warn_unsaved(unit, unsaved)
    _write_out(
        out, _header(unit.describe()) + yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
    )
    report(saved=str(out))
    console.print(f"saved {unit.describe()} to {out}")


# ---- checkpoint and rollback -------------------------------------------------------------


def checkpoint_command(obj: Context, name: str | None, listing: bool) -> None:
    unit = unit_of(obj)
    if listing:
        have = list_checkpoints(unit)
        report(switch=unit.describe(), checkpoints=have)
        for name_ in have:
            console.print(name_, markup=False, highlight=False)
        return
    if name is None:
        raise ConfigError("NAME", "give the checkpoint a name (or --list)")
    check_name(name)
    _catch_up()
    path = write_checkpoint(unit, name, capture(unit, base_of(obj)))
    report(checkpoint=name, switch=unit.describe(), path=str(path))
    console.print(f"checkpoint {name} of {unit.describe()}: {path}", markup=False)


def rollback_command(obj: Context, name: str) -> None:
    _catch_up()
    unit = unit_of(obj)
    snap = read_checkpoint(unit, name)
    audit = obj.audit()
    audit.check()  # before the switch is written, as every writer
    at, target = unit.switch or unit.target, unit.target
    with audit.write("rollback", at, unit.program, snap.config, target=target, checkpoint=name):
        n = restore(unit, snap, f"checkpoint {name}", base_of(obj))
    report(rolled_back_to=name, switch=unit.describe(), writes=n)
    console.print(f"rolled {unit.describe()} back to checkpoint {name}: {n} writes", markup=False)


# ---- apply --confirm-within and confirm ---------------------------------------------------


def apply_with_confirm(
    obj: Context, config_file: Path, seconds: float, do_apply: Callable[[], None]
) -> None:
    """`tofcc apply --confirm-within SECONDS FILE` (confirm.py): what each
    switch runs is taken, `do_apply` applies, and a timer reverts it all at
    the deadline unless `tofcc confirm` comes first."""
    _catch_up()
    doc = obj.document(config_file)
    changes: list[pending.UnitChange] = []
    if isinstance(doc, DeploymentDocument):
        for unit, applied in target_units(doc):
            changes.append(pending.UnitChange(unit, capture(unit, applied), applied))
    else:
        assert isinstance(doc, ProgramDocument)
        told_what_runs = obj.config_path is not None  # before apply makes it the file
        obj.adopt(doc)
        unit = unit_of(obj)
        t = obj.deployment_target
        applied = config_snapshot(doc.program.name, doc.config, t.spec.front_panel if t else None)
        # A grpc:// switch runs --config's config if given, else the file's
        # (its values read back: a retune's usual shape).
        base = None if obj.is_model else base_of(obj) if told_what_runs else applied
        changes.append(pending.UnitChange(unit, capture(unit, base), applied))
    secured = [c.unit.describe() for c in changes if c.unit.tls is not None]
    if secured:
        # The revert timer is another process, and the record it reads would
        # have to hold the client's private key.
        raise ConfigError(
            "--confirm-within",
            f"not available for a switch reached over TLS ({', '.join(secured)}); "
            "use checkpoint and rollback",
        )
    audit = obj.audit(doc)
    record = pending.begin(changes, str(config_file), seconds, audit.path, obj.command)
    try:
        do_apply()
    except (ConfigError, WriteError) as exc:
        # Nothing written (refused before, or the batch rolled back), unless
        # a deployment wrote some switches before one refused.
        if isinstance(exc, ConfigError) or len(changes) == 1:
            pending.abandon(record)
            raise
        _arm(record)
        raise
    except BaseException:
        _arm(record)  # unknown how far it went: what ran before comes back unless confirmed
        raise
    _arm(record)


def _arm(record: pending.Pending) -> None:
    armed = pending.arm(record)
    deadline = time.strftime("%H:%M:%S", time.localtime(armed.deadline))
    report(
        confirm_within_s=armed.seconds,
        reverts_at=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(armed.deadline)),
    )
    console.print(
        f"reverts at {deadline} ({armed.seconds:g} s) unless `tofcc confirm` comes first",
        markup=False,
    )


def confirm_command() -> None:
    confirmed, late = pending.confirm_all()
    if any(p.status in (pending.PENDING, pending.REVERTING) for p in late):
        _catch_up()  # a late one whose timer is lost reverts now
    report(confirmed=[p.what() for p in confirmed])
    for p in confirmed:
        console.print(f"confirmed {p.what()}", markup=False)
    if late:
        p = pending.read_record(late[-1].path) or late[-1]
        when = time.strftime("%H:%M:%S", time.localtime(p.deadline))
        if p.status in (pending.PENDING, pending.REVERTING):
            happened = "is being reverted"
        else:
            happened = f"was {p.status}" + (f" ({p.outcome})" if p.outcome else "")
        raise ConfigError(
            "confirm",
            f"too late for {p.what()}: its {p.seconds:g} s ended at {when}; it {happened}",
        )
    if not confirmed:
        raise ConfigError(
            "confirm",
            "no apply waits for a confirm (tofcc apply --confirm-within SECONDS starts one)",
        )
