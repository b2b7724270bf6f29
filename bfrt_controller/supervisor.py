# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Keep an app's intended state on a switch across restarts and outages."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from .errors import SwitchUnavailable
from .switch import Switch

log = logging.getLogger("tofcc.supervisor")
T = TypeVar("T")


class App(Protocol):
    switch: Switch

    def push_all(self) -> None: ...


class Supervisor:
    """Run app operations; on SwitchUnavailable reconnect with exponential
    backoff, re-push the whole intended state, then retry the operation.

    A switch can also restart between two operations without the session
    noticing (a new bf_switchd on the same address answers the next RPC with
    empty tables). `probe`, run before each operation, says whether the switch
    still holds the program's state (e.g. sync.holds_state: one entry read);
    when it does not, the intended state is pushed first, so a cycle that
    would write nothing still repairs a restarted switch."""

    def __init__(
        self,
        app: App,
        first_delay_s: float = 0.5,
        max_delay_s: float = 30.0,
        max_attempts: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        probe: Callable[[], bool] | None = None,
    ) -> None:
        self.app = app
        self.probe = probe
        self.restarts_detected = 0
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.max_attempts = max_attempts  # 0: keep trying
        self.sleep = sleep
        self.reconnects = 0

    def reconnect(self) -> None:
        delay = self.first_delay_s
        attempt = 0
        while True:
            attempt += 1
            try:
                self.app.switch.connect()
                self.app.push_all()
                self.reconnects += 1
                log.warning("reconnected after %d attempt(s); intended state re-pushed", attempt)
                return
            except SwitchUnavailable as exc:
                if self.max_attempts and attempt >= self.max_attempts:
                    raise
                log.warning("switch unavailable (%s); retrying in %.1fs", exc, delay)
                self.sleep(delay)
                delay = min(delay * 2, self.max_delay_s)

    def run(self, op: Callable[[], T]) -> T:
        while True:
            try:
                if self.probe is not None and not self.probe():
                    self.restarts_detected += 1
                    log.warning("the switch lost the program's state (restarted?); re-pushing")
                    self.app.push_all()
                return op()
            except SwitchUnavailable as exc:
                log.warning("lost the switch: %s", exc)
                self.reconnect()
