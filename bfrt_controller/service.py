"""tofcc as a service: one daemon drives a fleet of switches.

A deployment file (`tofcc run --config deploy.yaml`) lists targets; each
names its switch, its program, that program's config (a file beside the
deployment file, or inline) and the front-panel ports to bring up:

    metrics: {address: 127.0.0.1, port: 9464}
    targets:
      - name: leaf1
        target: grpc://10.0.0.1:50052
        program: pmqecn
        config: pmqecn.yaml
        front_panel:
          board: tofino-32q
          ports:
            - {port: 1/0, speed: 100G, fec: rs}

The whole file is validated before anything is sent (each error names its
field: `targets[1].config: classes[0].queue`, `targets[0].front_panel.ports[2].fec`).

Each target has its own switch session, supervisor and state, and runs on
its own schedule in one thread: a cycle (PMQECN: measure, optimise, write;
BFCC: the supervisor's restart check) then a read-back of what the switch
holds, which the metrics serve. A switch that cannot be reached is retried
on a backoff of its own while the others go on.

Reload (SIGHUP, `Daemon.request_reload`): the new file is read and validated
whole on a thread of its own, every switch cycling on schedule meanwhile (a
stop abandons it); if it is invalid nothing changes. Once it is read, the
loop applies it: each target still in it gets one batch:
its ports, the removal of entries and mirror sessions the old config had
and the new one has not, and the new intended state; a switch that refuses
the batch keeps its old state (the backend rolls the batch back) and its old
config. Targets added start; targets removed are closed.

After the first pass that ran a cycle, and again after each reload, the
daemon settles its heap (`settle_heap`) so that Python's full collections
stop pausing cycles.

Everything that waits goes through injected callables (`clock`, `wait`), so
tests drive the loop without sleeping or real signals.
"""

from __future__ import annotations

import contextlib
import gc
import ipaddress
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from hw_profiles import HwProfile, load_profile
from hw_profiles.boards import BoardProfile

from .common import Strict, by_table, cycle_interval, repeated_name
from .errors import ConfigError, ControllerError, SwitchUnavailable, WriteError
from .logs import logfmt_value
from .ports import (
    PORT_STATUS_SECTION,
    PortsConfig,
    check_ports,
    port_rows,
    port_writes,
    resolve_front_panel,
)
from .programs import PROGRAMS, App, Program, get_program
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
from .sync import holds_state, sync_with_switch
from .targets import SwitchIdentity, open_switch, switch_identity
from .validation import load_yaml, parse_model

log = logging.getLogger("tofcc.service")

DEFAULT_INTERVAL_S = 1.0
# What targets.open_switch takes (ASCII digits: int() would also take "５").
_GRPC = re.compile(r"(?:grpc|tofino-model)://[^\s/]+:([0-9]{1,5})")
# Backoff for a switch that cannot be reached: doubles from the first to the
# last, so a dead switch costs one connect attempt per MAX_BACKOFF_S.
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
# How soon a signal is acted on while the loop waits for the next cycle.
SIGNAL_POLL_S = 0.1


class MetricsSpec(Strict):
    # Loopback unless the deployment says otherwise: the endpoint has no auth.
    address: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 9464  # 0: any free port

    @field_validator("address")
    @classmethod
    def _ip(cls, value: str) -> str:
        # An IP literal: a name would resolve at bind time, after the switches
        # were pushed, and may resolve to an address not on this machine.
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"expected an IP address such as 127.0.0.1, got {value!r}") from None
        return value


class TargetSpec(Strict):
    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    target: str = "model"  # 'model' or grpc://HOST:PORT
    program: str
    # The program's config: a path (relative to the deployment file) or inline.
    config: str | dict[str, Any] | None = None
    client_id: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] = 0
    interval_s: Annotated[float, cycle_interval(86_400)] | None = None
    front_panel: PortsConfig | None = None


class ServiceConfig(Strict):
    metrics: MetricsSpec | None = None
    targets: Annotated[list[TargetSpec], Field(min_length=1)]
    # A front-panel port that is neither trusted nor source-bound forwards any
    # source address (tna/include/source_guard.p4): a warning, or with this,
    # a refusal of the file.
    strict_source_guard: bool = False

    @model_validator(mode="after")
    def _unique(self) -> ServiceConfig:
        # The name labels the switch's metrics and log lines: one per switch.
        seen: dict[str, int] = {}
        for i, t in enumerate(self.targets):
            if t.name in seen:
                raise ValueError(
                    f"targets[{i}].name {t.name!r} repeats targets[{seen[t.name]}].name"
                )
            seen[t.name] = i
        # `Leaf1` beside `leaf1`: two switches a dashboard cannot tell apart.
        same = repeated_name([t.name for t in self.targets])
        if same is not None:
            i, j = same
            raise ValueError(
                f"targets[{j}].name {self.targets[j].name!r} repeats targets[{i}].name "
                f"{self.targets[i].name!r} up to case: names must differ in more than case"
            )
        return self


@dataclass(frozen=True)
class ResolvedTarget:
    """A target with everything checked: its program, parsed config, chip and board."""

    spec: TargetSpec
    program: Program
    config: Any
    profile: HwProfile
    board: BoardProfile | None
    # Front-panel device ports brought up with no source binding and not trusted.
    unguarded_ports: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def interval_s(self) -> float:
        if self.spec.interval_s is not None:
            return self.spec.interval_s
        optimizer = getattr(self.config, "optimizer", None)
        return float(getattr(optimizer, "interval_s", DEFAULT_INTERVAL_S))

    def endpoint(self) -> tuple[str, str, int, str]:
        """What the target's session depends on: another value needs a new one."""
        return (self.spec.target, self.spec.program, self.spec.client_id, self.profile.chip)


def is_service_config(raw: object) -> bool:
    return isinstance(raw, dict) and "targets" in raw


def resolve(raw: object, source: str, base: Path) -> tuple[ServiceConfig, list[ResolvedTarget]]:
    """Validate a whole deployment file; ConfigError names the first bad field."""
    cfg = parse_model(ServiceConfig, raw, source)
    out: list[ResolvedTarget] = []
    for i, spec in enumerate(cfg.targets):
        at = f"{source}: targets[{i}]"
        if spec.program not in PROGRAMS:
            raise ConfigError(
                f"{at}.program", f"unknown program {spec.program!r} (known: {', '.join(PROGRAMS)})"
            )
        program = get_program(spec.program)
        if spec.config is None:
            config = program.load_config(program.default_config)
        elif isinstance(spec.config, str):
            path = Path(spec.config)
            path = path if path.is_absolute() else base / path
            try:
                config = program.load_config(path)
            except ConfigError as exc:
                raise ConfigError(f"{at}.config: {exc.field}", exc.reason) from None
        else:
            try:
                config = program.parse_config(spec.config, "")
            except ConfigError as exc:
                raise ConfigError(f"{at}.config.{exc.field}", exc.reason) from None
        profile = load_profile(config.chip)
        board = None
        unguarded: tuple[int, ...] = ()
        if spec.front_panel is not None:
            board = check_ports(spec.front_panel, profile, f"{at}.front_panel")
            check_pfc_priorities(config, spec.front_panel, board, profile, at)
            check_polled_ports(config, spec.front_panel, board, at)
            unguarded = _unguarded(spec.front_panel, board, config)
            if unguarded and cfg.strict_source_guard:
                raise ConfigError(
                    f"{at}.front_panel",
                    f"device port(s) {', '.join(map(str, unguarded))} would forward any source: "
                    "give each a source_bindings entry or list it in trusted_ports "
                    "(strict_source_guard is on)",
                )
        m = _GRPC.fullmatch(spec.target)
        if spec.target != "model" and (m is None or not 1 <= int(m.group(1)) <= 65535):
            raise ConfigError(
                f"{at}.target",
                "expected 'model', grpc://HOST:PORT or tofino-model://HOST:PORT with PORT "
                f"1..65535, got {spec.target!r}",
            )
        out.append(ResolvedTarget(spec, program, config, profile, board, unguarded))
    _one_writer_per_switch(out, source)
    return cfg, out


def _one_writer_per_switch(targets: list[ResolvedTarget], source: str) -> None:
    """One writer per program on a switch: two targets binding the same
    program on one switch would lock each other out. A switch is its
    address and port as resolved (targets.switch_identity), not the text:
    `127.0.0.1`, `localhost`, `127.1` and `[::ffff:127.0.0.1]` are one."""
    seen: list[tuple[int, SwitchIdentity]] = []
    for i, t in enumerate(targets):
        if t.spec.target == "model":
            continue
        ident = switch_identity(t.spec.target)
        for j, other in seen:
            if targets[j].spec.program == t.spec.program and ident.same_switch(other):
                raise ConfigError(
                    f"{source}: targets[{i}].target",
                    f"{t.spec.program} on {t.spec.target} is already targets[{j}] "
                    f"({targets[j].spec.target}): {ident.shared_with(other)}",
                )
        seen.append((i, ident))


def check_pfc_priorities(
    config: Any, ports: PortsConfig, board: BoardProfile, profile: HwProfile, at: str
) -> None:
    """A program's TM PFC against its ports' MAC maps: each PFC port the
    front panel lists must have the lossless CoS in its `pfc_priorities`
    (the MAC sends and honours only those: `$TX_PFC_EN_MAP` /
    `$RX_PFC_EN_MAP`), and on Tofino1 not the CoS queues move to while
    ignoring pauses, so the MAC drops pauses on it (Tofino2's MAC takes
    0 or 0xFF only, bf_port_if.c line 965: there the fabric must pause
    nothing on that CoS)."""
    pfc = getattr(config, "pfc", None)
    if pfc is None:
        return
    by_dev_port = {board.dev_port(p.port): i for i, p in enumerate(ports.ports)}
    for port in pfc.ports:
        i = by_dev_port.get(port)
        if i is None:
            continue
        fp = ports.ports[i]
        where = f"{at}.front_panel.ports[{i}].pfc_priorities"
        if pfc.cos not in fp.pfc_priorities:
            raise ConfigError(
                where,
                f"{fp.port} (device port {port}) carries the config's PFC on CoS {pfc.cos} "
                f"but its MAC enables PFC on {sorted(fp.pfc_priorities) or 'no priority'}: "
                f"it would neither send nor honour pauses on CoS {pfc.cos}",
            )
        ignore = getattr(pfc, "ignore_cos", None)
        if profile.chip == "tofino" and ignore in fp.pfc_priorities:
            raise ConfigError(
                where,
                f"{fp.port} (device port {port}) honours pauses on CoS {ignore}, where the "
                "lossless queues go while pauses are ignored (pfc.ignore_cos): leave it out "
                "of pfc_priorities so the MAC drops pauses on it",
            )


def polled_ports(config: Any) -> dict[int, str]:
    """Device ports whose `$PORT_STAT` counters the program's loops read,
    with the field that names each: the PFC watchdog's ports (pause time)
    and BFCC's reaction points (bytes sent, for shaping)."""
    out: dict[int, str] = {}
    pfc = getattr(config, "pfc", None)
    for i, port in enumerate(getattr(pfc, "ports", None) or ()):
        out.setdefault(port, f"pfc.ports[{i}]")
    for i, rp in enumerate(getattr(config, "reaction_points", None) or ()):
        out.setdefault(rp.port, f"reaction_points[{i}].port")
    return out


def check_polled_ports(config: Any, ports: PortsConfig, board: BoardProfile, at: str) -> None:
    """Every port a loop polls must be one the front panel adds: the SDE
    refuses `$PORT_STAT` on a port that is not added (open-p4studio
    bf_pm_intf.c bf_pm_port_stat_direct_get line 10449, BF_INVALID_ARG), so
    the watchdog or the shaper would fail every cycle."""
    added = {board.dev_port(p.port) for p in ports.ports}
    for port, name in polled_ports(config).items():
        if port not in added:
            raise ConfigError(
                f"{at}.config.{name}",
                f"device port {port} is not in front_panel: the switch refuses its "
                "counters until it is added (add it to front_panel.ports)",
            )


def _unguarded(ports: PortsConfig, board: BoardProfile, config: Any) -> tuple[int, ...]:
    guarded = set(getattr(config, "trusted_ports", ())) | {
        b.port for b in getattr(config, "source_bindings", ())
    }
    return tuple(sorted({board.dev_port(p.port) for p in ports.ports} - guarded))


def warn_unguarded(targets: list[ResolvedTarget], source: str) -> None:
    """One warning per switch whose front panel brings up ports that forward
    any source (the program's source guard checks only bound ports)."""
    for i, t in enumerate(targets):
        if t.unguarded_ports:
            _event(
                "source-guard-unbound",
                level=logging.WARNING,
                file=source,
                field=f"targets[{i}].front_panel",
                switch=t.name,
                dev_ports=",".join(map(str, t.unguarded_ports)),
                why="neither trusted nor source-bound: forwards any source "
                "(bind them, or strict_source_guard: true to refuse)",
            )


def load_service_config(path: Path) -> tuple[ServiceConfig, list[ResolvedTarget]]:
    cfg, targets = resolve(load_yaml(path), str(path), path.parent)
    warn_unguarded(targets, str(path))
    return cfg, targets


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
        writes = self.intended_writes()
        self.switch.write(writes)
        log.info(
            "event=pushed writes=%d switch=%s",
            len(writes),
            logfmt_value(self.switch.description),
        )

    def status(self) -> list[dict[str, object]]:
        rows = list(self.inner.status())
        if self.ports is not None and self.board is not None:
            rows += port_rows(self.switch, self.ports, self.board, self.dev_ports)
        return rows

    def live_state(self) -> dict[str, Any]:
        return self.inner.live_state()

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        self.inner.restore_live(state, source)


def make_target_app(t: ResolvedTarget, switch: Switch) -> TargetApp:
    return TargetApp(t.program.make_app(switch, t.config), t.spec.front_panel, t.board)


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


# ---- one switch ------------------------------------------------------------------


def _pmqecn_cycle(app: Any, now_s: float) -> int:
    return len(app.optimize_once(now_s))


def _pmqecn_start(app: Any, now_s: float) -> None:
    app.start(now_s)


# The periodic step of each program (its app, now) -> writes it made. A
# program without one is still watched: the supervisor's probe re-pushes a
# restarted switch, and each cycle reads back what the switch holds.
def _p4qcn_cycle(app: Any, now_s: float) -> int:
    # The PFC watchdog: each storm broken or restored is a write.
    return len(app.watchdog_once(now_s))


def _dadctcp_cycle(app: Any, now_s: float) -> int:
    # Algorithm 2 every config.interval_s: each threshold moved is a write.
    return len(app.cycle(now_s))


CYCLES: dict[str, Callable[[Any, float], int]] = {
    "pmqecn": _pmqecn_cycle,
    "p4qcn": _p4qcn_cycle,
    "dadctcp": _dadctcp_cycle,
}
STARTS: dict[str, Callable[[Any, float], None]] = {"pmqecn": _pmqecn_start}


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
    return open_switch(t.spec.target, t.spec.program, t.profile, client_id=t.spec.client_id)


def settle_heap() -> None:
    """Collect once, then keep what is alive now out of later collections.

    The controller's long-lived objects (configs, apps, the optimiser's
    compiled problems, imported modules) are scanned by every full collection
    of Python's collector; with a full switch's state that took ~100 ms and
    landed inside one control cycle in every dozen or so
    (benchmarks/control_loop.py: a 130 ms cycle among 25-35 ms ones).
    Frozen, they are still freed by reference counting; only cycles among
    them wait for the next settle.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


Loaded = tuple[ServiceConfig, list[ResolvedTarget]]


class ReloadParse:
    """A reload's read and validation of the deployment file, on a thread of
    its own: a big or hostile file took the one control loop (every switch's
    cycle) for 17 s, and SIGTERM waited for it. A daemon thread, so a stop
    during the parse abandons it."""

    def __init__(self, path: Path, wake: threading.Event) -> None:
        self.done = threading.Event()
        self.loaded: Loaded | None = None
        self.error: Exception | None = None
        self._wake = wake
        threading.Thread(target=self._run, args=(path,), name="tofcc-reload", daemon=True).start()

    def _run(self, path: Path) -> None:
        try:
            self.loaded = load_service_config(path)
        except Exception as exc:  # the loop refuses the reload with it
            self.error = exc
        finally:
            self.done.set()
            self._wake.set()  # a plain thread, not a signal handler: the loop takes it next


class Daemon:
    """The fleet's control loop. `run()` until `stop()`; `step()` is one pass."""

    def __init__(
        self,
        config_path: Path,
        switch_factory: SwitchFactory = default_switch_factory,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], None] | None = None,
    ) -> None:
        self.config_path = config_path
        self.switch_factory = switch_factory
        self.clock = clock
        self._wait = wait or self._wait_for_signal_or_timeout
        self._stop = threading.Event()
        self._reload = threading.Event()
        self._wake = threading.Event()
        # Set by signal handlers, which must not touch the events: Event.set()
        # takes the event's lock, and the handler runs on the main thread,
        # which may hold that very lock inside Event.wait (a deadlock: SIGTERM
        # once hung the daemon forever). The loop turns them into events.
        self._stop_signalled = False
        self._reload_signalled = False
        # The reload whose file is being read; a request during it is kept
        # (`_reload` stays set) for one more once it is applied.
        self._parse: ReloadParse | None = None
        self.reloads_ok = 0
        self.reloads_failed = 0
        self.reload_batches_refused = 0
        # settle_heap() after the first pass that ran a cycle (the apps pushed,
        # the optimiser's problems compiled) and again after each reload.
        self.heap_settled = False
        self.config, resolved = load_service_config(config_path)
        self.targets: dict[str, Target] = {t.name: self._make_target(t) for t in resolved}
        self.lock = threading.Lock()  # held while state the metrics read changes

    # -- control from outside: other threads and tests (stop, request_reload),
    # signal handlers (signalled only) -----------------------------------------
    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def request_reload(self) -> None:
        self._reload.set()
        self._wake.set()

    def signalled(self, signum: int) -> None:
        """What a signal handler may call: plain attribute writes, no lock."""
        if signum == signal.SIGHUP:
            self._reload_signalled = True
        else:
            self._stop_signalled = True

    def _take_signals(self) -> None:
        if self._stop_signalled:
            self._stop_signalled = False
            self.stop()
        if self._reload_signalled:
            self._reload_signalled = False
            self.request_reload()

    def _wait_for_signal_or_timeout(self, event: threading.Event, timeout_s: float) -> None:
        """Wait for `event` or `timeout_s`, in slices, so a signal (which does
        not set the event) is acted on within SIGNAL_POLL_S."""
        deadline = time.monotonic() + timeout_s
        while not (self._stop_signalled or self._reload_signalled):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or event.wait(min(remaining, SIGNAL_POLL_S)):
                return

    @property
    def stopping(self) -> bool:
        return self._stop.is_set() or self._stop_signalled

    # -- targets ---------------------------------------------------------------
    def _make_target(self, t: ResolvedTarget) -> Target:
        switch = self.switch_factory(t)
        app = make_target_app(t, switch)
        return Target(t, switch, app, _supervisor(app), next_due_s=self.clock())

    def _connect(self, t: Target, now_s: float) -> None:
        """Open the session and bring the switch to the intended state, ports
        first, as one batch. On a switch that still holds the program, the
        live values it holds (what the optimiser or an operator set) are
        adopted first (sync.py), so a daemon restart does not reset them."""
        t.switch.connect()
        t.app.resolve_front_panel()
        if t.resolved.spec.target == "model" or not sync_with_switch(t.app).missing:
            # sync pushed everything itself when the switch lacked the program.
            t.app.push_all()
        start = STARTS.get(t.resolved.spec.program)
        if start is not None:
            start(t.app.inner, now_s)
        t.connected = True
        t.backoff_s = FIRST_BACKOFF_S
        _event("connected", switch=t.name, target=t.resolved.spec.target)

    def cycle(self, t: Target, now_s: float) -> None:
        """One cycle of one switch; never raises for what a switch or its
        writes do, so the fleet goes on."""
        began = self.clock()
        try:
            if not t.connected:
                try:
                    self._connect(t, now_s)
                except SwitchUnavailable:
                    t.stats.connect_failures += 1
                    raise
            step = CYCLES.get(t.resolved.spec.program)
            restarts, reconnects = t.restarts_detected, t.reconnects
            changes = t.supervisor.run(lambda: step(t.app.inner, now_s) if step else 0)
            if t.restarts_detected != restarts:
                _event("restart-detected", level=logging.WARNING, switch=t.name, repushed=True)
            if t.reconnects != reconnects:
                _event("reconnected", level=logging.WARNING, switch=t.name, repushed=True)
            t.stats.changes_written += changes
            rows = t.app.status()
            with self.lock:
                t.rows = rows
                t.stats.cycles += 1
            if changes:
                _event(
                    "cycle",
                    switch=t.name,
                    changes=changes,
                    duration_s=f"{self.clock() - began:.3f}",
                )
            t.next_due_s = now_s + t.resolved.interval_s
        except SwitchUnavailable as exc:
            t.connected = False
            t.next_due_s = now_s + t.backoff_s
            _event(
                "unreachable", level=logging.WARNING, switch=t.name, retry_s=t.backoff_s, why=exc
            )
            t.backoff_s = min(t.backoff_s * 2, MAX_BACKOFF_S)
        except WriteError as exc:
            t.stats.write_failures += 1
            t.next_due_s = now_s + t.resolved.interval_s
            _event("write-refused", level=logging.ERROR, switch=t.name, why=exc)
        except Exception as exc:
            # A bug or an SDE surprise in one switch's cycle must not stop the fleet.
            t.stats.cycle_errors += 1
            t.next_due_s = now_s + t.resolved.interval_s
            _event("cycle-failed", level=logging.ERROR, switch=t.name, why=repr(exc))
        finally:
            t.stats.last_cycle_s = self.clock() - began

    def step(self, reload_wait_s: float | None = None) -> float:
        """Start a requested reload, apply one whose file is read, run every
        switch whose cycle is due, and return the seconds until the next one is.

        The file is read and validated off the loop (ReloadParse); this pass
        waits for it at most `reload_wait_s` (None: until it is read, so a
        caller stepping by hand sees the reload in the pass that asked for
        it). run() waits not at all: the parse wakes the loop when done."""
        self._take_signals()
        if self._parse is None and self._reload.is_set():
            self._reload.clear()
            self._parse = ReloadParse(self.config_path, self._wake)
        if self._parse is not None and self._parse.done.wait(reload_wait_s):
            parse, self._parse = self._parse, None
            if parse.loaded is None:
                self._refuse_reload(parse.error or RuntimeError("no result"))
            else:
                self._apply_reload(*parse.loaded)
        now = self.clock()
        ran = False
        for t in list(self.targets.values()):
            if now >= t.next_due_s:
                self.cycle(t, now)
                ran = True
        if ran and not self.heap_settled:
            settle_heap()
            self.heap_settled = True
        if not self.targets:
            return DEFAULT_INTERVAL_S
        return max(0.0, min(t.next_due_s for t in self.targets.values()) - self.clock())

    def run(self, max_steps: int = 0) -> None:
        """Cycle until stop() (SIGTERM); `max_steps` > 0 bounds the passes (tests)."""
        _event("started", config=self.config_path, switches=",".join(self.targets))
        steps = 0
        while not self.stopping:
            timeout_s = self.step(reload_wait_s=0.0)
            steps += 1
            if max_steps and steps >= max_steps:
                break
            self._take_signals()
            if self.stopping:
                break
            self._wake.clear()  # before the check: a parse ending after it sets it again
            if not self._reload_actionable():
                self._wait(self._wake, timeout_s)
        self.close()
        _event("stopped")

    def _reload_actionable(self) -> bool:
        """Whether the next pass has reload work: a parse to apply or to start."""
        if self._parse is not None:
            return self._parse.done.is_set()
        return self._reload.is_set()

    def close(self) -> None:
        self._parse = None  # a parse still running is abandoned with its thread
        for t in self.targets.values():
            with contextlib.suppress(Exception):
                t.switch.close()
        gc.unfreeze()

    # -- reload ----------------------------------------------------------------
    def reload(self) -> bool:
        """Take the config file again, here and now (see the module doc; the
        loop reads it off the loop instead); False if it was refused."""
        try:
            loaded = load_service_config(self.config_path)
        except Exception as exc:
            return self._refuse_reload(exc)
        return self._apply_reload(*loaded)

    def _refuse_reload(self, exc: Exception) -> bool:
        # Whatever the file does (a NUL in a path, a hw profile that will
        # not load, a bug in a loader), the daemon keeps running on what it
        # has: under systemd a raise here is a crash loop, the file being
        # still bad at every restart.
        self.reloads_failed += 1
        why = exc if isinstance(exc, ControllerError) else repr(exc)
        _event(
            "reload-refused",
            level=logging.ERROR,
            file=self.config_path,
            why=why,
            kept="running config",
        )
        return False

    def _apply_reload(self, config: ServiceConfig, resolved: list[ResolvedTarget]) -> bool:
        """Apply a read and validated file to the fleet, on the loop's thread."""
        try:
            # Every new app and switch object first, before anything is written:
            # an app that refuses its config (or a missing SDE) refuses the reload.
            plans = [(r, self.targets.get(r.name), self._plan(r)) for r in resolved]
        except Exception as exc:
            return self._refuse_reload(exc)
        now = self.clock()
        new_targets: dict[str, Target] = {}
        refused = 0
        for r, old, planned in plans:
            if isinstance(planned, Target):  # a new switch (or program, chip, client)
                new_targets[r.name] = planned
                continue
            assert old is not None
            app = planned
            replacement = Target(
                r, old.switch, app, _supervisor(app), old.stats, old.connected, next_due_s=now
            )
            replacement.supervisor.reconnects = old.supervisor.reconnects
            replacement.supervisor.restarts_detected = old.supervisor.restarts_detected
            if old.connected:
                try:
                    app.resolve_front_panel()
                    old.switch.write(reload_writes(old.app, app))
                    start = STARTS.get(r.spec.program)
                    if start is not None:
                        start(app.inner, now)
                except SwitchUnavailable:
                    # Whatever the switch kept, the next connect pushes the new state.
                    replacement.connected = False
                except ControllerError as exc:  # WriteError: rolled back by the backend
                    refused += 1
                    self.reload_batches_refused += 1
                    new_targets[r.name] = old
                    _event("reload-refused", level=logging.ERROR, switch=r.name, why=exc)
                    continue
            new_targets[r.name] = replacement
        with self.lock:
            for name, t in self.targets.items():
                kept = new_targets.get(name)
                if kept is None or kept.switch is not t.switch:
                    # Released now: the program is free for its next writer.
                    with contextlib.suppress(Exception):
                        t.switch.close()
                    _event("switch-released", switch=name, target=t.resolved.spec.target)
            self.targets = new_targets
            self.config = config
        if refused:
            self.reloads_failed += 1
        else:
            self.reloads_ok += 1
        # The old apps are garbage now and the new ones compile on their first cycle.
        self.heap_settled = False
        _event("reloaded", switches=",".join(new_targets), refused=refused)
        return not refused

    def _plan(self, r: ResolvedTarget) -> Target | TargetApp:
        """A new Target when `r` needs a switch of its own; else the new app on
        the running target's switch."""
        old = self.targets.get(r.name)
        if old is None or old.resolved.endpoint() != r.endpoint():
            return self._make_target(r)
        return make_target_app(r, old.switch)


def _event(event: str, level: int = logging.INFO, **fields: object) -> None:
    """One structured log line: event=NAME key=value ..., values quoted when needed."""
    parts = [f"event={event}"]
    for k, v in fields.items():
        text = str(v)
        if not text or any(c.isspace() or c in '"=' for c in text):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
        parts.append(f"{k}={text}")
    log.log(level, " ".join(parts))


def _run_lock_dirs() -> list[tuple[str, Path]]:
    """Where `tofcc run` may keep its lock, best first: the runtime directory
    systemd made for the unit, the user's runtime directory, tofcc's state
    directory. Never /tmp: there any user could plant the lock's name first."""
    from .state import state_dir

    found: list[tuple[str, Path]] = []
    for var in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR"):
        # systemd lists several RuntimeDirectory= as a:b; the first is ours.
        value = os.environ.get(var, "").split(":")[0]
        if os.path.isabs(value):
            found.append((var, Path(value)))
    with contextlib.suppress(RuntimeError, KeyError):  # no home directory
        found.append(("the state directory", state_dir()))
    return found


def _open_run_lock(name: str) -> int | None:
    """The lock file `name` opened in the first usable lock directory; None
    when none can be made. A directory another user can write, or a lock
    path that is a symlink, is refused (exit 2), not stepped around."""
    from . import paths

    for source, where in _run_lock_dirs():
        try:
            with paths.private_dir(where) as dir_fd:
                return paths.open_lock(dir_fd, where / name)
        except paths.PathError as exc:
            if exc.unsafe:
                why = exc.reason if exc.path == str(where) else str(exc)
                raise ConfigError(
                    f"lock directory {where} ({source})",
                    f"{why}; give tofcc a directory only it can write "
                    "(RUNTIME_DIRECTORY, XDG_RUNTIME_DIR or XDG_STATE_HOME)",
                ) from None
            _event("run-lock-dir-unusable", level=logging.DEBUG, dir=where, why=exc.reason)
    return None


@contextlib.contextmanager
def claim_deployment(path: Path) -> Iterator[bool]:
    """Hold a lock named after the deployment file for the daemon's life;
    yields False (and warns) when another `tofcc run` holds it: two daemons
    on one file fight over its switches, and with `--metrics-port 0` nothing
    else showed that both were running.

    The lock lives where no other user can write (_run_lock_dirs) and is
    opened without following a symlink or truncating: the PID is written
    only once the lock is ours and the file is a regular file we own."""
    import fcntl
    import hashlib

    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    fd = _open_run_lock(f"tofcc-run-{digest}.lock")
    if fd is None:
        _event(
            "deployment-unguarded",
            level=logging.WARNING,
            config=path,
            why="no private directory for the run lock (set RUNTIME_DIRECTORY or XDG_RUNTIME_DIR)",
        )
        yield True  # nowhere to keep the lock: run unguarded rather than not at all
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            _event(
                "deployment-already-running",
                level=logging.WARNING,
                config=path,
                pid=os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?",
                why="another tofcc run drives the same switches",
            )
            yield False
            return
        if os.fstat(fd).st_uid == os.geteuid():  # never rewrite a file someone else owns
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield True
    finally:
        os.close(fd)


@contextlib.contextmanager
def early_signals() -> Iterator[list[int]]:
    """Record SIGTERM, SIGINT and SIGHUP from the very start, before the
    deployment file (which may be slow or hostile) is read: SIGHUP's default
    action kills the process (exit 129) and a start-up reload is moot; a stop
    is replayed into the daemon (`signal_handlers(daemon, pending)`)."""
    seen: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: seen.append(signum))
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    try:
        yield seen
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def signal_handlers(daemon: Daemon, pending: list[int] | None = None) -> Iterator[None]:
    """SIGTERM and SIGINT stop the daemon after the current cycle; SIGHUP
    reloads its config. The handlers only record the signal (Daemon.signalled):
    the loop does the work."""
    previous = {
        sig: signal.signal(sig, lambda signum, _frame: daemon.signalled(signum))
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    }
    for signum in pending or ():
        if signum != signal.SIGHUP:  # the file was read after it: nothing to reload
            daemon.signalled(signum)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = [
    "PORT_STATUS_SECTION",
    "Daemon",
    "ResolvedTarget",
    "ServiceConfig",
    "Target",
    "TargetApp",
    "claim_deployment",
    "early_signals",
    "is_service_config",
    "load_service_config",
    "reload_writes",
    "resolve",
    "signal_handlers",
]
