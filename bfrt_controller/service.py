# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc as a service: one daemon drives a fleet of switches.

A deployment file (`tofcc run --config deploy.yaml`, deployment.py) lists
targets; each names its switch, its program, that program's config and the
front-panel ports to bring up. This module is the loop (the scheduler) and
its reload; each switch's app, session and schedule are fleet.py's, the
process's lock and signals runtime.py's, each program's periodic step its
app's `service_cycle` (common.IntendedStateApp), and /metrics metrics.py's.

Each target has its own switch session, supervisor and state, and runs on
its own schedule in one thread: a cycle (PMQECN: measure, optimise, write;
BFCC: the supervisor's restart check) then a read-back of what the switch
holds, which the metrics serve. A switch that cannot be reached is retried
on a backoff of its own while the others go on. A program's watchdog
(P4QCN's PFC watchdog: `watchdog_period_s`, `service_watchdog`) polls on a
timer of its own beside the cycle's, so its reaction time does not wait
for the target's interval.

Reload (SIGHUP, `Daemon.request_reload`): the new file is read and validated
whole on a thread of its own, every switch cycling on schedule meanwhile (a
stop abandons it); if it is invalid nothing changes. Once it is read, the
loop applies it: each target still in it gets one batch:
its ports, the removal of entries and mirror sessions the old config had
and the new one has not, and the new intended state; a switch that refuses
the batch keeps its old state (the backend rolls the batch back) and its old
config. Targets added start; targets removed are closed.

Each push the daemon makes on its own (a switch connected, a reload's
batch, a re-push after a restart) and each refused write leaves an audit
line (audit.py); the audit file is checked at start and on reload.

After the first pass that ran a cycle, and again after each reload, the
daemon settles its heap (`settle_heap`) so that Python's full collections
stop pausing cycles.

Everything that waits goes through injected callables (`clock`, `wait`), so
tests drive the loop without sleeping or real signals.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .control import Inbox, Request
from .control import serve as serve_request
from .daemon_audit import AuditedWrites
from .deployment import (
    DEFAULT_INTERVAL_S,
    ResolvedTarget,
    ServiceConfig,
    is_service_config,
    load_service_config,
    resolve,
    warn_unguarded,
)
from .errors import ControllerError, SwitchUnavailable, WriteError
from .fleet import (
    FIRST_BACKOFF_S,
    MAX_BACKOFF_S,
    SwitchFactory,
    Target,
    TargetApp,
    _supervisor,
    default_switch_factory,
    make_target_app,
    reload_writes,
    replay_target,
)
from .logs import log_event
from .model_states import ModelStates
from .ports import PORT_STATUS_SECTION
from .runtime import claim_deployment, early_signals, signal_handlers
from .sync import sync_with_switch

log = logging.getLogger("tofcc.service")

# How soon a signal is acted on while the loop waits for the next cycle.
SIGNAL_POLL_S = 0.1


def _event(event: str, level: int = logging.INFO, **fields: object) -> None:
    log_event(log, event, level, **fields)


def _metrics_change(old: ServiceConfig, new: ServiceConfig) -> str:
    """'' when the `metrics:` sections agree; else what changed, e.g.
    '127.0.0.1:9464 -> 0.0.0.0:9465' (a reload cannot rebind the endpoint)."""

    def where(c: ServiceConfig) -> str:
        m = c.metrics
        return "none" if m is None else f"{m.address}:{m.port}"

    before, after = where(old), where(new)
    return "" if before == after else f"{before} -> {after}"


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


@contextlib.contextmanager
def collect_after_cycle() -> Iterator[None]:
    """Python's collector off for one control cycle, and its young
    generations collected once the cycle is done.

    A full switch's PMQECN cycle makes tens of thousands of short-lived
    objects (a read cell, a key, a problem per port); the collections they
    trigger cost it ~1.5 ms of 20 (benchmarks/control_loop.py). Between
    cycles the loop only waits, so that is where they run. Objects are still
    freed by reference counting inside the cycle; only reference cycles
    wait for its end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            gc.collect(1)


Loaded = tuple[ServiceConfig, list[ResolvedTarget]]


def wait_in_slices(event: threading.Event, timeout_s: float, signalled: Callable[[], bool]) -> None:
    """Wait for `event` or `timeout_s`, in slices, so a signal (which does
    not set the event: `signalled` says one came) is acted on within SIGNAL_POLL_S."""
    deadline = time.monotonic() + timeout_s
    while not signalled():
        remaining = deadline - time.monotonic()
        if remaining <= 0 or event.wait(min(remaining, SIGNAL_POLL_S)):
            return


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


class Daemon(AuditedWrites):
    """The fleet's control loop. `run()` until `stop()`; `step()` is one pass."""

    def __init__(
        self,
        config_path: Path,
        switch_factory: SwitchFactory = default_switch_factory,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], None] | None = None,
        keep_model_state: bool = False,
        audit_log: Path | None = None,
    ) -> None:
        self.config_path = config_path
        # --audit-log: over the deployment's `audit_log:` (audit.py).
        self._audit_option = audit_log
        # `tofcc run`: each `target: model` switch replays its state file when
        # it connects and saves it after each change (fleet.replay_target),
        # so the one-shot commands naming the target see the daemon's switch.
        self.model_states = ModelStates(keep_model_state)
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
        # Reloads that applied the targets but not a changed `metrics:`
        # section: the endpoint is bound once, at start.
        self.reloads_metrics_kept = 0
        self.reload_batches_refused = 0
        # settle_heap() after the first pass that ran a cycle (the apps pushed,
        # the optimiser's problems compiled) and again after each reload.
        self.heap_settled = False
        # Requests from one-shot commands (control.py), served between cycles.
        self.inbox = Inbox(self._wake)
        self.config, resolved = load_service_config(config_path)
        self.audit = self._audit_for(self.config)
        self.audit.check()  # exit 2 before any switch is written
        self.targets: dict[str, Target] = {t.name: self._make_target(t) for t in resolved}
        self.lock = threading.Lock()  # held while state the metrics read changes

    # -- control from outside: other threads and tests (stop, request_reload),
    # signal handlers (signalled only) -----------------------------------------
    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def submit(self, request: Request) -> None:
        """A control request (control.py), from the socket's thread."""
        self.inbox.submit(request)

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
        wait_in_slices(event, timeout_s, lambda: self._stop_signalled or self._reload_signalled)

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
        with self._audited("connect-push", t.resolved), self.model_states.locked(t) as path:
            if path is not None and replay_target(t.switch, path, t.resolved.spec.program):
                # The model switch "stayed up": start from it as from a real one.
                if not sync_with_switch(t.app).missing:
                    t.app.push_all()
            elif t.resolved.spec.target == "model" or not sync_with_switch(t.app).missing:
                # sync pushed everything itself when the switch lacked the program.
                t.app.push_all()
            if path is not None:
                self.model_states.save(t, path)
        t.app.inner.service_start(now_s)
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
            restarts, reconnects = t.restarts_detected, t.reconnects
            with self.model_states.locked(t) as path:
                if path is not None:
                    adopt = functools.partial(self._audited, "adopt", t.resolved)
                    self.model_states.adopt_one_shot_writes(t, path, adopt)
                with collect_after_cycle():
                    changes = t.supervisor.run(lambda: t.app.inner.service_cycle(now_s))
                if path is not None and (
                    changes or t.reconnects != reconnects or t.restarts_detected != restarts
                ):
                    self.model_states.save(t, path)
            self._record_repairs(t, restarts, reconnects)
            if changes:
                # The program's own batch (PMQECN's optimiser, DA-DCTCP's
                # Algorithm 2): a write like any other, one line per batch.
                self._record("cycle", t.resolved, changes=changes)
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
            if t.connected:  # a connect's push recorded its own refusal
                self._record("cycle", t.resolved, exc)
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
        for request in self.inbox.take():
            serve_request(self, request)
        now = self.clock()
        ran = False
        for t in list(self.targets.values()):
            if now >= t.next_due_s:
                self.cycle(t, now)
                ran = True
        self._watchdogs(self.clock())
        if ran and not self.heap_settled:
            settle_heap()
            self.heap_settled = True
        if not self.targets:
            return DEFAULT_INTERVAL_S
        return max(0.0, min(self._next_due(t) for t in self.targets.values()) - self.clock())

    # -- the watchdog timer --------------------------------------------------------
    # A program's watchdog (P4QCN's PFC watchdog) polls on its own timer, not
    # once per cycle: with detection_ms 200 and a 1 s interval a storm was
    # acted on 1-2 s late. Each is due every watchdog_period_s (at most
    # detection / 2), so a storm is acted on within detection + one poll.
    def _next_due(self, t: Target) -> float:
        period = t.app.inner.watchdog_period_s() if t.connected else None
        return t.next_due_s if period is None else min(t.next_due_s, t.watchdog_due_s)

    def _watchdogs(self, now: float) -> None:
        for t in list(self.targets.values()):
            period = t.app.inner.watchdog_period_s() if t.connected else None
            if period is None or now < t.watchdog_due_s:
                continue
            # From the last due time, not from now: a late step does not
            # stretch the period that the detection bound counts on.
            due = t.watchdog_due_s + period
            t.watchdog_due_s = due if due > now else now + period
            restarts, reconnects = t.restarts_detected, t.reconnects
            try:
                changes = t.supervisor.run(functools.partial(t.app.inner.service_watchdog, now))
                self._record_repairs(t, restarts, reconnects)
                t.stats.changes_written += changes
                if changes:
                    self._record("watchdog", t.resolved, changes=changes)
                    # A storm broken or restored shows in status and metrics now,
                    # not at the next cycle.
                    rows = t.app.status()
                    with self.lock:
                        t.rows = rows
                    _event("watchdog", switch=t.name, changes=changes)
            except SwitchUnavailable as exc:
                # The cycle reconnects it; until then there is nothing to poll.
                t.connected = False
                t.next_due_s = min(t.next_due_s, now)
                _event("unreachable", level=logging.WARNING, switch=t.name, why=exc)
            except WriteError as exc:
                t.stats.write_failures += 1
                _event("write-refused", level=logging.ERROR, switch=t.name, why=exc)
                self._record("watchdog", t.resolved, exc)
            except Exception as exc:
                t.stats.cycle_errors += 1
                _event("watchdog-failed", level=logging.ERROR, switch=t.name, why=repr(exc))

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
            if not self._reload_actionable() and not self.inbox.waiting():
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
        _event("reload-refused", logging.ERROR, file=self.config_path, why=why, kept="running")
        return False

    def _apply_reload(self, config: ServiceConfig, resolved: list[ResolvedTarget]) -> bool:
        """Apply a read and validated file to the fleet, on the loop's thread."""
        try:
            # The new audit file, then every new app and switch object, before
            # anything is written: an audit file that cannot be written, an app
            # that refuses its config (or a missing SDE) refuses the reload.
            audit = self._audit_for(config)
            audit.check()
            plans = [(r, self.targets.get(r.name), self._plan(r)) for r in resolved]
        except Exception as exc:
            return self._refuse_reload(exc)
        self.audit = audit
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
                    with self._audited("reload", r):
                        old.switch.write(reload_writes(old.app, app))
                    with self.model_states.locked(replacement) as path:
                        if path is not None:
                            self.model_states.save(replacement, path)
                    app.inner.service_start(now)
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
            metrics_kept = _metrics_change(self.config, config)
            self.config = config
            if refused:
                self.reloads_failed += 1
            elif metrics_kept:
                self.reloads_metrics_kept += 1
            else:
                self.reloads_ok += 1
        # The old apps are garbage now and the new ones compile on their first cycle.
        self.heap_settled = False
        if metrics_kept:
            _event(
                "reloaded",
                level=logging.WARNING,
                switches=",".join(new_targets),
                refused=refused,
                metrics_not_applied=metrics_kept,
                kept="the endpoint tofcc run started with; restart to move it",
            )
        else:
            _event("reloaded", switches=",".join(new_targets), refused=refused)
        return not refused

    def _plan(self, r: ResolvedTarget) -> Target | TargetApp:
        """A new Target when `r` needs a switch of its own; else the new app on
        the running target's switch."""
        old = self.targets.get(r.name)
        if old is None or old.resolved.endpoint() != r.endpoint():
            return self._make_target(r)
        return make_target_app(r, old.switch)


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
    "warn_unguarded",
]
