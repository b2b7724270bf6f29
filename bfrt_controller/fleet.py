# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One switch of the fleet: its app with the front panel in front, its
session, supervisor and schedule, and the batch that takes it from one
config to the next on a reload."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hw_profiles.boards import BoardProfile

from . import buffer_view
from .common import by_table, push_writes
from .deployment import ResolvedTarget
from .errors import ConfigError
from .ports import PortsConfig, check_ports, port_rows, port_writes, resolve_front_panel
from .programs import App, get_program
from .state import load_state, save_state
from .supervisor import Supervisor
from .switch import (
    EntryWrite,
    MirrorSessionWrite,
    PortWrite,
    Switch,
    TmPfcWrite,
    TmPpgWrite,
    Write,
)
from .sync import holds_state
from .targets import open_switch
from .validation import parse_model

log = logging.getLogger("tofcc.service")

# Backoff for a switch that cannot be reached: doubles from the first to the
# last, so a dead switch costs one connect attempt per MAX_BACKOFF_S.
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0


class TargetApp:
    """A program's app with the switch's front-panel ports in front: every
    push writes the ports first, then the program's state, as one batch."""

    def __init__(self, inner: App, ports: PortsConfig | None, board: BoardProfile | None) -> None:
        self.inner = inner
        self.switch: Switch = inner.switch
        self.ports = ports
        self.board = board
        # Name -> device port as the switch maps it (resolve_front_panel);
        # until then, the board's.
        self.dev_ports: dict[str, int] | None = None

    def resolve_front_panel(self) -> None:
        """Take the connected switch's own map of the front-panel names
        (ports.resolve_front_panel); ConfigError where it and the board differ."""
        if self.ports is not None and self.board is not None:
            self.dev_ports = resolve_front_panel(self.ports, self.board, self.switch)

    @property
    def config(self) -> Any:
        return self.inner.config

    def port_writes(self) -> list[PortWrite]:
        if self.ports is None or self.board is None:
            return []
        return port_writes(self.ports, self.board, self.dev_ports)

    def intended_writes(self) -> list[Write]:
        return [*self.port_writes(), *self.inner.intended_writes()]

    def dynamic_writes(self) -> list[Write]:
        return [*self.port_writes(), *self.inner.dynamic_writes()]

    def static_tables(self) -> frozenset[str]:
        return self.inner.static_tables()

    def push_all(self) -> None:
        push_writes(self.switch, self.intended_writes())

    def status(self) -> list[dict[str, object]]:
        rows = list(self.inner.status())
        # The TM's counters of the program's queues, pools and PPGs (the
        # daemon's metrics: buffer_view.py says which).
        rows += buffer_view.metric_rows(self.inner, rows)
        if self.ports is not None and self.board is not None:
            rows += port_rows(self.switch, self.ports, self.board, self.dev_ports)
        return rows

    def live_state(self) -> dict[str, Any]:
        return self.inner.live_state()

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        self.inner.restore_live(state, source)


def make_target_app(t: ResolvedTarget, switch: Switch) -> TargetApp:
    return TargetApp(t.program.make_app(switch, t.config), t.spec.front_panel, t.board)


# A deployment's `target: model` switch lives only as long as one process:
# its state file (state.target_state_path) is what it holds between them, as
# the CLI's own model target keeps its state (context.py). These two are the
# switch "staying up": a fresh model switch replays the file, and whatever
# wrote to the switch saves it back.


def replay_target(switch: Switch, path: Path, program: str) -> dict[str, Any] | None:
    """Write into the fresh model `switch` (of `program`) what the target's
    state file says it held: its config, live values and front-panel ports.
    Returns the saved state (None: the switch was never written)."""
    saved = load_state(path)
    if saved is None:
        return None
    if saved["program"] != program:
        raise ConfigError(
            f"state file {path}: program",
            f"holds {saved['program']!r} state, not {program}'s: the deployment changed "
            "the target's program; remove the file to start the switch afresh",
        )
    prog = get_program(program)
    cfg: Any = prog.parse_config(saved["config"], f"state file {path}: config")
    if cfg.chip != switch.profile.chip:
        return None  # another chip is another switch: this one starts empty
    ports: PortsConfig | None = None
    board = None
    if saved.get("front_panel") is not None:
        at = f"state file {path}: front_panel"
        ports = parse_model(PortsConfig, saved["front_panel"], at)
        board = check_ports(ports, switch.profile, at)
    app = TargetApp(prog.make_app(switch, cfg), ports, board)
    app.restore_live(saved.get("live") or {}, f"state file {path}: live")
    app.resolve_front_panel()
    switch.write(app.intended_writes())
    return saved


def save_target(path: Path, app: TargetApp) -> None:
    """What the model target's switch now holds, for the next command to replay."""
    save_state(
        path,
        app.switch.program,
        app.config.model_dump(mode="json"),
        app.live_state(),
        app.ports.model_dump(mode="json") if app.ports is not None else None,
    )


def reload_writes(old: TargetApp, new: TargetApp) -> list[Write]:
    """One batch taking a switch from `old`'s intended state to `new`'s: ports
    first, then removal of what only the old config wrote, then the new state."""
    new_writes = new.intended_writes()
    kept_entries = {
        (w.table, _key(w), w.priority)
        for w in new_writes
        if isinstance(w, EntryWrite) and w.op not in ("delete", "default")
    }
    kept_sessions = {w.sid for w in new_writes if isinstance(w, MirrorSessionWrite)}
    kept_ports = {w.dev_port for w in new_writes if isinstance(w, PortWrite)}
    kept_pfc = {(w.port, q) for w in new_writes if isinstance(w, TmPfcWrite) for q in w.queues}
    kept_pfc_ports = {w.port for w in new_writes if isinstance(w, TmPfcWrite)}
    kept_ppg_ports = {w.port for w in new_writes if isinstance(w, TmPpgWrite)}
    gone: list[Write] = []
    for w in old.intended_writes():
        if isinstance(w, EntryWrite) and w.op not in ("delete", "default"):
            if (w.table, _key(w), w.priority) not in kept_entries:
                gone.append(EntryWrite(w.table, w.key, priority=w.priority, op="delete"))
        elif isinstance(w, MirrorSessionWrite) and not w.delete and w.sid not in kept_sessions:
            gone.append(MirrorSessionWrite(w.sid, w.port, delete=True))
        elif isinstance(w, PortWrite) and not w.delete and w.dev_port not in kept_ports:
            gone.append(PortWrite(w.dev_port, delete=True))
        elif isinstance(w, TmPpgWrite) and not w.delete and w.port not in kept_ppg_ports:
            gone.append(TmPpgWrite(w.ppg_id, w.port, delete=True))
        elif isinstance(w, TmPfcWrite):
            # PFC the new config no longer gives: back to power-on (no pause
            # sent, none honoured, CoS 0) on the queues it leaves behind.
            dropped = tuple(q for q in w.queues if (w.port, q) not in kept_pfc)
            if w.port not in kept_pfc_ports or dropped:
                off = w.port not in kept_pfc_ports
                gone.append(TmPfcWrite(w.port, w.cos, dropped, generate=not off, honour=False))
    ports = [w for w in new_writes if isinstance(w, PortWrite)]
    rest = [w for w in new_writes if not isinstance(w, PortWrite)]
    removed_ports = [w for w in gone if isinstance(w, PortWrite)]
    removed: list[Write] = [w for w in gone if not isinstance(w, PortWrite)]
    return [*ports, *removed_ports, *by_table(removed), *rest]


def _key(w: EntryWrite) -> tuple[Any, ...]:
    return tuple(sorted((k, m.value, m.mask, m.prefix_len) for k, m in w.key.items()))


@dataclass
class TargetStats:
    cycles: int = 0
    cycle_errors: int = 0
    write_failures: int = 0
    changes_written: int = 0
    last_cycle_s: float = 0.0
    connect_failures: int = 0


@dataclass
class Target:
    """One switch of the fleet: its session, app, supervisor and schedule."""

    resolved: ResolvedTarget
    switch: Switch
    app: TargetApp
    supervisor: Supervisor
    stats: TargetStats = field(default_factory=TargetStats)
    connected: bool = False
    next_due_s: float = 0.0
    # The program's watchdog runs on its own timer (Daemon.step).
    watchdog_due_s: float = 0.0
    backoff_s: float = FIRST_BACKOFF_S
    rows: list[dict[str, object]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.resolved.name

    @property
    def reconnects(self) -> int:
        return self.supervisor.reconnects

    @property
    def restarts_detected(self) -> int:
        return self.supervisor.restarts_detected


def _probe(app: TargetApp) -> Callable[[], bool]:
    """sync.holds_state with its entry found once: the first table entry's
    key does not move with the live values, and building PMQECN's intended
    writes (thousands of vq_drain entries) every cycle cost half the cycle."""
    first = next(
        (
            w
            for w in app.intended_writes()
            if isinstance(w, EntryWrite) and w.op not in ("delete", "default")
        ),
        None,
    )
    if first is None:
        return lambda: holds_state(app)
    return lambda: app.switch.read_entry(first.table, first.key, first.priority) is not None


def _supervisor(app: TargetApp) -> Supervisor:
    # One reconnect attempt per cycle: a dead switch must not hold up the
    # others; the daemon's own backoff spaces the attempts.
    return Supervisor(app, max_attempts=1, sleep=lambda _s: None, probe=_probe(app))


SwitchFactory = Callable[[ResolvedTarget], Switch]


def default_switch_factory(t: ResolvedTarget) -> Switch:
    return open_switch(
        t.spec.target, t.spec.program, t.profile, client_id=t.spec.client_id, tls=t.tls
    )
