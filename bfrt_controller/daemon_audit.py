# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The daemon's audit lines (audit.py): one per batch it writes, naming its
own user and command line (a request an operator sent it names that
operator: control.py)."""

from __future__ import annotations

import contextlib
import logging
import shlex
from pathlib import Path
from typing import Any

from .audit import AuditLog, audit_log
from .deployment import ResolvedTarget, ServiceConfig, audit_log_path
from .fleet import Target
from .logs import log_event

log = logging.getLogger("tofcc.service")


class AuditedWrites:
    """What Daemon uses to audit: `config_path`, `_audit_option` (--audit-log)
    and `audit` (the log in use) are the daemon's."""

    config_path: Path
    _audit_option: Path | None
    audit: AuditLog

    def _audit_for(self, config: ServiceConfig) -> AuditLog:
        path = self._audit_option or audit_log_path(config, self.config_path.parent)
        return audit_log(path, shlex.join(["tofcc", "run", "--config", str(self.config_path)]))

    def _audited(self, action: str, r: ResolvedTarget) -> contextlib.AbstractContextManager[None]:
        """One audit line for the write inside, however it ends."""
        return self.audit.write(action, r.name, r.spec.program, r.config, target=r.spec.target)

    def _record(
        self, action: str, r: ResolvedTarget, error: BaseException | None = None, **extra: Any
    ) -> None:
        self.audit.record(
            action, r.name, r.spec.program, r.config, error, target=r.spec.target, **extra
        )

    def _record_repairs(self, t: Target, restarts: int, reconnects: int) -> None:
        """A line for each re-push the supervisor made since the counts were taken."""
        if t.restarts_detected != restarts:
            log_event(log, "restart-detected", logging.WARNING, switch=t.name, repushed=True)
            self._record("restart-repush", t.resolved)
        if t.reconnects != reconnects:
            log_event(log, "reconnected", logging.WARNING, switch=t.name, repushed=True)
            self._record("reconnect-repush", t.resolved)
