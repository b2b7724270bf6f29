# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc run` holds as a process: the lock that keeps two daemons off
one deployment, and the signals (SIGTERM, SIGINT stop; SIGHUP reloads)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .errors import ConfigError
from .logs import log_event

log = logging.getLogger("tofcc.service")


class Signalled(Protocol):
    def signalled(self, signum: int) -> None: ...


def _event(event: str, level: int = logging.INFO, **fields: object) -> None:
    log_event(log, event, level, **fields)


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


def run_name(path: Path, suffix: str) -> str:
    """`tofcc-run-<digest><suffix>`: the run lock's (and control socket's)
    name for the deployment file at `path`, wherever it is given from."""
    import hashlib

    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return f"tofcc-run-{digest}{suffix}"


def run_dirs() -> list[Path]:
    """The directories a `tofcc run` of this user may keep its lock and
    control socket in, best first (the daemon uses the first it can)."""
    return [where for _, where in _run_lock_dirs()]


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

    fd = _open_run_lock(run_name(path, ".lock"))
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
def signal_handlers(daemon: Signalled, pending: list[int] | None = None) -> Iterator[None]:
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
