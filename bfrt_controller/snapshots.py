# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What one switch runs, taken and written back whole: checkpoints and reverts.

A *unit* is one program on one switch, as a one-shot command names it
(`--target`/`--program`/`--state`, or one target of a deployment). A
*snapshot* is what the unit runs, in the model target's state-file form:
the config, the live values on top of it (what an operator set, what the
optimiser tuned, what was measured) and the front-panel ports.

* On the model target the state file is the switch: a snapshot is a copy of
  it, exact.
* On a BF-Runtime switch the controller keeps no file: a snapshot is a
  config the command is given (the `base`) with the values the switch holds
  read back into it (sync.adopt_held_values), and is taken only if that
  reproduces every entry the switch holds for it; otherwise it is refused
  naming the first entry that differs, never a snapshot that would restore
  something else.

`restore` writes a snapshot back as one batch: the removal of what the
config being replaced wrote and the snapshot's config lacks, then the
snapshot's whole state (fleet.reload_writes), so the switch takes all of it
or, the backend rolling the batch back, none.

Checkpoints are snapshots kept under the state directory, one directory per
unit: `$XDG_STATE_HOME/tofcc/checkpoints/<unit>/<NAME>.yaml` (0700, written
through paths.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hw_profiles import load_profile, safe_yaml

from . import paths
from .diff import diff_writes
from .errors import ConfigError
from .fleet import TargetApp, reload_writes
from .paths import PathError
from .ports import PortsConfig, check_ports
from .programs import get_program
from .running import keep_measurements
from .state import load_state, save_state, state_dir, state_lock
from .switch import Switch
from .sync import adopt_held_values
from .targets import open_switch
from .tls import ChannelTls
from .validation import parse_model

# A checkpoint's name is a file name: never a path, never hidden.
CHECKPOINT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
CHECKPOINT_KEYS = {"checkpoint", "taken", "unit", "program", "config", "live", "front_panel"}


@dataclass(frozen=True)
class Unit:
    """One program on one switch."""

    target: str  # model | grpc://HOST:PORT | tofino-model://HOST:PORT
    program: str
    client_id: int = 0
    state: str | None = None  # the model target's state file
    switch: str | None = None  # the deployment target's name
    # The deployment target's `tls:` (the certificate bytes, key included):
    # never written to a record (as_dict), so a revert timer in another
    # process has none (safe_changes.apply_with_confirm refuses TLS).
    tls: ChannelTls | None = field(default=None, compare=False, repr=False)

    @property
    def is_model(self) -> bool:
        return self.target == "model"

    @property
    def state_path(self) -> Path:
        assert self.state is not None, "a model unit has a state file"
        return Path(self.state)

    def key(self) -> str:
        """A directory name for the unit's files: readable, and distinct for
        every switch, program and state file."""
        ident = json.dumps([self.target, self.program, self.state, self.switch])
        digest = hashlib.sha256(ident.encode()).hexdigest()[:10]
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", self.switch or self.program)
        return f"{label}-{digest}"

    def describe(self) -> str:
        where = "model" if self.is_model else self.target
        named = f"{self.switch}: " if self.switch else ""
        return f"{named}{self.program} on {where}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "program": self.program,
            "client_id": self.client_id,
            "state": self.state,
            "switch": self.switch,
        }

    @staticmethod
    def from_dict(raw: object, where: str) -> Unit:
        if not isinstance(raw, dict):
            raise ConfigError(where, "must be a mapping (target, program, ...)")
        return Unit(
            _typed(raw, "target", str, where),
            _typed(raw, "program", str, where),
            _typed(raw, "client_id", int, where),
            _typed(raw, "state", str | None, where),
            _typed(raw, "switch", str | None, where),
        )


def _typed(raw: dict[str, Any], key: str, kind: Any, where: str) -> Any:
    value = raw.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigError(f"{where}.{key}", f"unexpected {type(value).__name__} {value!r}")
    return value


@dataclass(frozen=True)
class Snapshot:
    """What a unit runs, in the state file's form."""

    program: str
    config: dict[str, Any]
    live: dict[str, Any]
    front_panel: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "config": self.config,
            "live": self.live,
            "front_panel": self.front_panel,
        }

    @staticmethod
    def from_dict(raw: dict[str, Any], where: str) -> Snapshot:
        if not isinstance(raw.get("program"), str):
            raise ConfigError(f"{where}: program", "must be a program name")
        if not isinstance(raw.get("config"), dict):
            raise ConfigError(f"{where}: config", "must be a mapping")
        live = raw.get("live") or {}
        if not isinstance(live, dict):
            raise ConfigError(f"{where}: live", "must be a mapping")
        ports = raw.get("front_panel")
        if ports is not None and not isinstance(ports, dict):
            raise ConfigError(f"{where}: front_panel", "must be a mapping")
        return Snapshot(raw["program"], raw["config"], live, ports)


def app_of(snapshot: Snapshot, switch: Switch, where: str) -> TargetApp:
    """The snapshot as an app on `switch` (its ports resolved when connected):
    every part validated, ConfigError naming `where`'s field."""
    program = get_program(snapshot.program)
    cfg: Any = program.parse_config(snapshot.config, f"{where}: config")
    ports = board = None
    if snapshot.front_panel is not None:
        at = f"{where}: front_panel"
        ports = parse_model(PortsConfig, snapshot.front_panel, at)
        board = check_ports(ports, switch.profile, at)
    app = TargetApp(program.make_app(switch, cfg), ports, board)
    app.restore_live(snapshot.live, f"{where}: live")
    return app


def snapshot_of(app: TargetApp, program: str) -> Snapshot:
    return Snapshot(
        program,
        app.config.model_dump(mode="json"),
        app.live_state(),
        app.ports.model_dump(mode="json") if app.ports is not None else None,
    )


def _profile(snapshot: Snapshot) -> Any:
    chip = snapshot.config.get("chip", "tofino")
    try:
        return load_profile(chip if isinstance(chip, str) else "tofino")
    except Exception:  # not a chip: the config's own check names the field
        return load_profile("tofino")


def scratch_app(snapshot: Snapshot, where: str) -> TargetApp:
    """The snapshot on a model switch of its chip that nothing else sees:
    for what a snapshot implies (its writes, its config) without a switch."""
    return app_of(snapshot, open_switch("model", snapshot.program, _profile(snapshot)), where)


# ---- taking a snapshot -----------------------------------------------------------------


def _model_saved(unit: Unit) -> dict[str, Any]:
    saved = load_state(unit.state_path)
    if saved is None:
        raise ConfigError(
            f"state file {unit.state}",
            f"{unit.describe()} holds nothing yet (no apply, set or run wrote it): "
            "there is nothing running to take",
        )
    if saved["program"] != unit.program:
        raise ConfigError(
            f"state file {unit.state}: program",
            f"holds {saved['program']!r} state, not {unit.program}'s",
        )
    return saved


def config_snapshot(program: str, config: Any, front_panel: PortsConfig | None) -> Snapshot:
    """A parsed config (and front panel) as a snapshot with no live values."""
    ports = front_panel.model_dump(mode="json") if front_panel is not None else None
    return Snapshot(program, config.model_dump(mode="json"), {}, ports)


def capture(unit: Unit, base: Snapshot | None = None) -> Snapshot:
    """What `unit` runs now. `base`: what a BF-Runtime switch is taken to
    run (see the module doc); the model target's state file needs none."""
    if unit.is_model:
        saved = _model_saved(unit)
        return Snapshot(
            unit.program, saved["config"], saved.get("live") or {}, saved.get("front_panel")
        )
    assert base is not None, "a BF-Runtime unit's snapshot starts from a config"
    switch = open_switch(unit.target, unit.program, _profile(base), read_only=True, tls=unit.tls)
    switch.connect()
    try:
        app = app_of(base, switch, unit.describe())
        app.resolve_front_panel()
        adopt_held_values(app.inner)
        _check_reproduces(unit, app)
        return snapshot_of(app, unit.program)
    finally:
        switch.close()


def _check_reproduces(unit: Unit, app: TargetApp) -> None:
    """The snapshot must be what the switch holds: every table entry, TM and
    port setting the config writes, with the values read back."""
    differences = diff_writes(app.switch, app.dynamic_writes())
    real = [d for d in differences if d.change != "unknown"]
    if real:
        d = real[0]
        raise ConfigError(
            unit.describe(),
            f"the switch does not run the config given for it: {d.where} holds "
            f"{d.current or '-'}, the config writes {d.intended} ({len(real)} such "
            "difference(s)); give the config it runs (--config), or apply one first",
        )


# ---- writing one back ------------------------------------------------------------------


def _model_running(switch: Switch, saved: dict[str, Any] | None, where: str) -> TargetApp | None:
    """The model switch brought to what its state file says it holds (the
    model keeps nothing between commands), as an app; None when it holds nothing."""
    if saved is None:
        return None
    snap = Snapshot.from_dict(saved, where)
    if snap.config.get("chip", "tofino") != switch.profile.chip:
        return None  # another chip is another switch: this one starts empty
    app = app_of(snap, switch, where)
    app.resolve_front_panel()
    switch.write(app.intended_writes())
    return app


def restore(unit: Unit, snapshot: Snapshot, where: str, current: Snapshot | None = None) -> int:
    """Write `snapshot` to `unit` as one batch; the number of writes. On a
    BF-Runtime switch `current` says what it runs now (its live values read
    back from the switch): the entries it writes and the snapshot does not
    are removed in the same batch."""
    if unit.program != snapshot.program:
        raise ConfigError(
            f"{where}: program", f"is {snapshot.program}, the switch runs {unit.program}"
        )
    scratch_app(snapshot, where)  # every part checked before the switch is touched
    profile = _profile(snapshot)
    if unit.is_model:
        with state_lock(unit.state_path):
            switch = open_switch("model", unit.program, profile)
            switch.connect()
            saved = load_state(unit.state_path)
            if saved is not None and saved["program"] != unit.program:
                raise ConfigError(
                    f"state file {unit.state}: program",
                    f"holds {saved['program']!r} state, not {unit.program}'s: not replaced",
                )
            running = _model_running(switch, saved, f"state file {unit.state}")
            return _write_back(unit, switch, running, snapshot, where, save=True)
    switch = open_switch(unit.target, unit.program, profile, client_id=unit.client_id, tls=unit.tls)
    switch.connect()
    try:
        running = None
        if current is not None:
            running = app_of(current, switch, unit.describe())
            running.resolve_front_panel()
            adopt_held_values(running.inner)
        return _write_back(unit, switch, running, snapshot, where, save=False)
    finally:
        switch.close()


def _write_back(
    unit: Unit,
    switch: Switch,
    current: TargetApp | None,
    snapshot: Snapshot,
    where: str,
    save: bool,
) -> int:
    new = app_of(snapshot, switch, where)
    new.resolve_front_panel()
    keep_measurements(unit.program, new.inner, current.live_state() if current else None)
    writes = reload_writes(current, new) if current is not None else new.intended_writes()
    switch.write(writes)
    if save:
        save_state(
            unit.state_path,
            unit.program,
            new.config.model_dump(mode="json"),
            new.live_state(),
            snapshot.front_panel,
        )
    return len(writes)


# ---- checkpoints -------------------------------------------------------------------------


def checkpoint_dir(unit: Unit) -> Path:
    return state_dir() / "checkpoints" / unit.key()


def check_name(name: str) -> str:
    if not CHECKPOINT_NAME.fullmatch(name):
        raise ConfigError(
            f"checkpoint {name!r}",
            "a name is ASCII letters, digits, _, . and -, not starting with . or -, at most 64",
        )
    return name


def checkpoint_path(unit: Unit, name: str) -> Path:
    return checkpoint_dir(unit) / f"{check_name(name)}.yaml"


def write_checkpoint(unit: Unit, name: str, snapshot: Snapshot) -> Path:
    path = checkpoint_path(unit, name)
    data = {
        "checkpoint": name,
        "taken": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "unit": unit.as_dict(),
        **snapshot.as_dict(),
    }
    try:
        paths.replace_file(
            path, yaml.safe_dump(data, sort_keys=False).encode(), mode=0o600, private=True
        )
    except PathError as exc:
        raise ConfigError(f"checkpoint {name}", f"cannot be written: {exc}") from None
    return path


def list_checkpoints(unit: Unit) -> list[str]:
    where = checkpoint_dir(unit)
    with contextlib.suppress(OSError):  # none yet, or unreadable: read_checkpoint says which
        return sorted(
            p.stem for p in where.iterdir() if p.suffix == ".yaml" and not p.name.startswith(".")
        )
    return []


def read_checkpoint(unit: Unit, name: str) -> Snapshot:
    """The checkpoint `name` of `unit`; ConfigError naming it when there is
    none (and which there are) or when it does not read."""
    path = checkpoint_path(unit, name)
    try:
        there = paths.lexists(path)
    except PathError as exc:
        raise ConfigError(f"checkpoint {name}", str(exc)) from None
    if not there:
        have = list_checkpoints(unit)
        known = f"it has {', '.join(have)}" if have else "it has none"
        raise ConfigError(
            f"checkpoint {name}", f"no such checkpoint of {unit.describe()} ({known})"
        )
    try:
        raw = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(f"checkpoint {name} ({exc.path})", exc.reason) from None
    where = f"checkpoint {name} ({path})"
    if not isinstance(raw, dict):
        raise ConfigError(where, "must be a mapping (program, config, live)")
    unknown = sorted(str(k) for k in set(raw) - CHECKPOINT_KEYS)
    if unknown:
        raise ConfigError(where, f"unknown key '{unknown[0]}'")
    return Snapshot.from_dict(raw, where)
