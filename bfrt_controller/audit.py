# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One audit line for every write to a switch, always on.

Each command that writes (apply, set, set-threshold, clear, rollback, ...:
whatever opens a switch as its writer), each batch the daemon writes (a
switch connected, re-pushed after a restart, a reload's batch, a cycle of
the program's own tuning that changed something - `cycle`, with `changes` -,
each storm the PFC watchdog breaks or restores - `watchdog` -, a one-shot
write to a model target it adopts - `adopt` -, and a request an operator
sent it - `set`, naming that operator: control.py), and each revert of an
unconfirmed apply (`confirm-revert`), and each cycle of an `--interval` loop
(`optimize-cycle`, `shape-cycle`) that wrote leaves one JSON line: when, who (the OS
user, and the user sudo ran as when it did), on which host, the command
line, the switch and program, the sha256 of the config written (the
`config_sha` of tofcc_target_info) and how it ended: `ok`, `refused` with
the error, or `interrupted` (Ctrl-C). One line per batch, never per entry:
a daemon cycling every second that changes something each cycle writes a
line a second per switch (about 30 MB a day): rotate the file (logrotate's
`copytruncate` is not needed: each line is appended by a fresh open).

The line goes to two places:
- a file, appended to (default `$LOGS_DIRECTORY/audit.log` under systemd's
  `LogsDirectory=`, else `$XDG_STATE_HOME/tofcc/audit.log`; `--audit-log` or
  the deployment's `audit_log:` move it), in a directory no other user can
  write, never through a symlink (paths.append_line);
- syslog (`/dev/log`: the journal where systemd runs it), tagged
  `tofcc-audit`, facility authpriv: the copy a user cannot edit
  (`journalctl -t tofcc-audit`). Without a syslog socket, the `tofcc.audit`
  logger on stderr instead.

A file that cannot be written is found before the write (`check`: exit 2,
nothing sent); one that fails after (a full disk) is logged as an error with
the line itself, and never turns a write that happened into a failure.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import pwd
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from . import paths
from .errors import ConfigError, ControllerError
from .logs import log_event
from .state import state_dir

log = logging.getLogger("tofcc.audit")

FILE_NAME = "audit.log"
SYSLOG_SOCKET = "/dev/log"
# Another socket than /dev/log (tests, a chroot); not a way to turn it off.
SYSLOG_SOCKET_ENV = "TOFCC_SYSLOG_SOCKET"
SYSLOG_TAG = "tofcc-audit"
# authpriv (10) x 8 + notice (5), as sudo logs who ran what.
SYSLOG_PRIORITY = 10 * 8 + 5
OK, REFUSED, INTERRUPTED = "ok", "refused", "interrupted"


def config_sha(config: object) -> str:
    """A short digest of a config: which version of it a switch was given."""
    dump = config.model_dump(mode="json") if hasattr(config, "model_dump") else config
    text = json.dumps(dump, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def default_path() -> Path:
    """systemd's LogsDirectory= (the unit's /var/log/tofcc), else tofcc's state directory."""
    logs = os.environ.get("LOGS_DIRECTORY", "").split(":")[0]
    if os.path.isabs(logs):
        return Path(logs) / FILE_NAME
    return state_dir() / FILE_NAME


def who() -> dict[str, Any]:
    """The OS user this process runs as, and the one sudo was run by."""
    uid = os.geteuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid with no passwd entry (a container)
        user = str(uid)
    fields: dict[str, Any] = {"user": user, "uid": uid}
    sudo = os.environ.get("SUDO_USER")
    if sudo:
        fields["sudo_user"] = sudo
    return fields


def _now() -> str:
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def result(error: BaseException | None) -> str:
    if error is None:
        return OK
    # Ctrl-C (click's Abort is how it reaches a command) stopped it: what
    # was written before it stays, so not a refusal.
    interrupted = isinstance(error, KeyboardInterrupt | click.exceptions.Abort)
    return INTERRUPTED if interrupted else REFUSED


def error_text(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ControllerError) else f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class AuditLog:
    """Where audit lines go; `command` is the process's own command line."""

    path: Path
    command: str

    def check(self) -> None:
        """Can a line be appended? Exit 2 naming the file if not, before any write."""
        try:
            paths.append_line(self.path, b"")
        except ConfigError as exc:
            raise ConfigError(f"audit log {self.path}", str(exc)) from None

    def record(
        self,
        action: str,
        switch: str,
        program: str,
        config: object,
        error: BaseException | None = None,
        as_user: dict[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Write one line; return it (tests, and the log on a failed write).
        `as_user`: who asked, when not this process's user (a request to the
        daemon: control.py)."""
        line: dict[str, Any] = {
            "time": _now(),
            **(who() if as_user is None else as_user),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "command": self.command,
            "action": action,
            "switch": switch,
            "program": program,
            "config_sha": config_sha(config) if config is not None else None,
            **extra,
            "result": result(error),
        }
        if error is not None:
            line["error"] = error_text(error)
        text = json.dumps(line, separators=(",", ":"), default=str)
        self._to_file(text, line)
        self._to_syslog(text)
        return line

    @contextlib.contextmanager
    def write(
        self,
        action: str,
        switch: str,
        program: str,
        config: object,
        as_user: dict[str, Any] | None = None,
        **extra: Any,
    ) -> Iterator[None]:
        """One line for the write inside: `ok`, or `refused` with what it raised."""
        try:
            yield
        except BaseException as exc:
            self.record(action, switch, program, config, exc, as_user, **extra)
            raise
        self.record(action, switch, program, config, None, as_user, **extra)

    def _to_file(self, text: str, line: dict[str, Any]) -> None:
        try:
            paths.append_line(self.path, text.encode() + b"\n")
        except ConfigError as exc:
            log_event(log, "audit-write-failed", logging.ERROR, file=self.path, why=exc, line=text)

    def _to_syslog(self, text: str) -> None:
        address = os.environ.get(SYSLOG_SOCKET_ENV) or SYSLOG_SOCKET
        message = f"<{SYSLOG_PRIORITY}>{SYSLOG_TAG}[{os.getpid()}]: {text}".encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(address)
                sock.send(message)
        except OSError:
            # No syslog here (a container, a build host): stderr, as the daemon's log.
            log_event(log, "audit", line=text)


def audit_log(path: Path | None, command: str) -> AuditLog:
    """An absolute path: a line written after a `cd` lands in the same file."""
    return AuditLog((path if path is not None else default_path()).absolute(), command)
