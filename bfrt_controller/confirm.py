# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc apply --confirm-within SECONDS`: an apply that undoes itself unless
`tofcc confirm` comes in time, as EOS's `commit timer` and Junos's `commit
confirmed` do.

Before the apply, what each switch runs is taken (snapshots.capture) into a
*pending record*, `$XDG_STATE_HOME/tofcc/confirm/<id>.yaml`, with the
deadline (wall-clock time, so any process and a later boot read it alike).
After the apply, a timer process is left behind, in a session of its own so
the CLI's exit, a closed terminal or a dropped SSH connection do not end it
(`python -m bfrt_controller.confirm RECORD`). At the deadline it writes each
switch's snapshot back, one batch each (snapshots.restore), unless `tofcc
confirm` removed the record first. The record then says what happened
(`reverted`, or `failed` and why), so a late `confirm` is told, and the
timer's log lines are in `<id>.log` beside it.

The timer holds a lock (`<id>.timer.lock`) for its life, taken by the CLI
before it starts and handed to it: a record past its deadline whose lock is
free has lost its timer (the host rebooted, someone killed it), and the next
`tofcc apply`, `confirm`, `checkpoint`, `rollback` or `save` performs the
overdue revert itself before anything else.

One pending apply per switch: another `--confirm-within` on a switch with
one waiting is refused until it is confirmed or reverted. Any change made
during the window (a `set`, the optimiser on the model target) is undone
with it, as a configure session's rollback would.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import logging
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

import bfrt_controller

from . import paths
from .audit import AuditLog, audit_log
from .errors import ConfigError, ControllerError
from .logs import configure_logging, log_event
from .paths import PathError
from .snapshots import Snapshot, Unit, restore
from .state import state_dir, state_lock

log = logging.getLogger("tofcc.confirm")

# How often the timer looks for a `confirm` while it waits: it exits soon
# after one instead of sleeping out the window.
POLL_S = 0.5
# The shortest and longest window: below a second nothing could confirm in
# time; a day is already longer than any maintenance window.
MIN_S = 1.0
MAX_S = 86_400.0

PENDING, REVERTING, REVERTED, FAILED = "pending", "reverting", "reverted", "failed"


def now() -> float:
    """Wall-clock seconds (tests move it)."""
    return time.time()


def confirm_dir() -> Path:
    return state_dir() / "confirm"


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


@dataclass(frozen=True)
class UnitChange:
    """One switch of a pending apply: what it ran before, and the config the
    apply wrote (on a BF-Runtime switch, what the revert replaces)."""

    unit: Unit
    before: Snapshot
    applied: Snapshot | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit.as_dict(),
            "before": self.before.as_dict(),
            "applied": None if self.applied is None else self.applied.as_dict(),
        }

    @staticmethod
    def from_dict(raw: object, where: str) -> UnitChange:
        if not isinstance(raw, dict) or not isinstance(raw.get("before"), dict):
            raise ConfigError(where, "must be a mapping with unit and before")
        applied = raw.get("applied")
        return UnitChange(
            Unit.from_dict(raw.get("unit"), f"{where}.unit"),
            Snapshot.from_dict(raw["before"], f"{where}.before"),
            Snapshot.from_dict(applied, f"{where}.applied") if isinstance(applied, dict) else None,
        )


@dataclass(frozen=True)
class Pending:
    id: str
    applied_file: str
    seconds: float
    deadline: float
    units: tuple[UnitChange, ...]
    status: str = PENDING
    outcome: str = ""
    finished: float | None = None
    timer_pid: int | None = None
    unit_keys: tuple[str, ...] = field(default=())
    # Where the apply's audit lines went and its command line: the revert's
    # lines go there too, naming the apply they undo.
    audit_log: str | None = None
    command: str = ""

    @property
    def path(self) -> Path:
        return confirm_dir() / f"{self.id}.yaml"

    def what(self) -> str:
        switches = ", ".join(u.unit.describe() for u in self.units)
        return f"the apply of {self.applied_file} ({switches})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "applied_file": self.applied_file,
            "seconds": self.seconds,
            "deadline": self.deadline,
            "deadline_local": _stamp(self.deadline),
            "timer_pid": self.timer_pid,
            "outcome": self.outcome,
            "finished": self.finished,
            "units": [u.as_dict() for u in self.units],
            "audit_log": self.audit_log,
            "command": self.command,
        }

    @staticmethod
    def from_dict(raw: object, where: str) -> Pending:
        if not isinstance(raw, dict):
            raise ConfigError(where, "must be a mapping")
        try:
            units = tuple(
                UnitChange.from_dict(u, f"{where}: units[{i}]")
                for i, u in enumerate(raw.get("units") or [])
            )
            return Pending(
                str(raw["id"]),
                str(raw["applied_file"]),
                float(raw["seconds"]),
                float(raw["deadline"]),
                units,
                str(raw["status"]),
                str(raw.get("outcome") or ""),
                None if raw.get("finished") is None else float(raw["finished"]),
                raw.get("timer_pid") if isinstance(raw.get("timer_pid"), int) else None,
                tuple(u.unit.key() for u in units),
                None if raw.get("audit_log") is None else str(raw["audit_log"]),
                str(raw.get("command") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(where, f"not a pending-confirm record ({exc!r})") from None


def _write(p: Pending) -> None:
    data = yaml.safe_dump(p.as_dict(), sort_keys=False).encode()
    try:
        paths.replace_file(p.path, data, mode=0o600, private=True)
    except PathError as exc:
        raise ConfigError(f"pending confirm {p.path}", f"cannot be written: {exc}") from None


def read_record(path: Path) -> Pending | None:
    from hw_profiles import safe_yaml

    try:
        if not paths.lexists(path):
            return None
        raw = safe_yaml.load_file(path)
    except PathError as exc:
        raise ConfigError(f"pending confirm {path}", exc.reason) from None
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(f"pending confirm {exc.path}", exc.reason) from None
    return Pending.from_dict(raw, f"pending confirm {path}")


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _records() -> list[Pending]:
    where = confirm_dir()
    found: list[Pending] = []
    with contextlib.suppress(OSError):  # no directory yet: nothing pending
        for name in sorted(os.listdir(where)):
            if name.endswith(".yaml") and not name.startswith("."):
                p = read_record(where / name)
                if p is not None:
                    found.append(p)
    return found


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """The records change under one lock (never held while a switch is written)."""
    with state_lock(confirm_dir() / "records"):
        yield


# ---- the timer's lock --------------------------------------------------------------


def _lock_path(pending_id: str) -> Path:
    return confirm_dir() / f"{pending_id}.timer.lock"


def _take_timer_lock(pending_id: str) -> int:
    with paths.private_dir(confirm_dir()) as dir_fd:
        fd = paths.open_lock(dir_fd, _lock_path(pending_id))
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: nobody else holds it
    return fd


def timer_alive(pending_id: str) -> bool:
    """Whether a process still holds the record's timer lock."""
    try:
        with paths.private_dir(confirm_dir()) as dir_fd:
            fd = paths.open_lock(dir_fd, _lock_path(pending_id))
    except PathError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)
    return False


def _forget(p: Pending) -> None:
    for path in (p.path, _lock_path(p.id), confirm_dir() / f"{p.id}.log"):
        _remove(path)


# ---- starting, confirming, reverting -----------------------------------------------------


def begin(
    units: list[UnitChange],
    applied_file: str,
    seconds: float,
    audit_log: Path | None = None,
    command: str = "",
) -> Pending:
    """The record of an apply about to be made, refused when one of its
    switches already waits for a confirm. Records of finished reverts are
    dropped (their outcome was for the confirm that never came)."""
    if not MIN_S <= seconds <= MAX_S:
        raise ConfigError(
            "--confirm-within", f"must be {MIN_S:g} to {MAX_S:g} seconds, got {seconds:g}"
        )
    keys = tuple(u.unit.key() for u in units)
    with _locked():
        for other in _records():
            if other.status in (PENDING, REVERTING):
                shared = set(keys) & set(other.unit_keys)
                if shared:
                    raise ConfigError(
                        "--confirm-within",
                        f"{other.what()} waits for `tofcc confirm` until "
                        f"{_stamp(other.deadline)}: confirm it or let it revert first",
                    )
            else:
                _forget(other)
        p = Pending(
            secrets.token_hex(6),
            applied_file,
            seconds,
            now() + seconds,
            tuple(units),
            unit_keys=keys,
            audit_log=None if audit_log is None else str(audit_log),
            command=command,
        )
        _write(p)
    return p


def abandon(p: Pending) -> None:
    """The apply wrote nothing (refused, rolled back): nothing to revert."""
    with _locked():
        _forget(p)


Spawn = Callable[[Pending, int], int]


def spawn_timer(p: Pending, lock_fd: int) -> int:
    """Start the timer process for `p`, holding `lock_fd` (the timer lock),
    detached from this process's session; its pid."""
    log_path = confirm_dir() / f"{p.id}.log"
    with paths.private_dir(confirm_dir()) as dir_fd:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        log_fd = os.open(log_path.name, flags, 0o600, dir_fd=dir_fd)
    # The timer runs this tofcc, whatever the caller's sys.path was.
    env = dict(os.environ)
    root = str(Path(bfrt_controller.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (root, env.get("PYTHONPATH")) if x)
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bfrt_controller.confirm",
                str(p.path),
                "--lock-fd",
                str(lock_fd),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            pass_fds=(lock_fd,),
            start_new_session=True,
            env=env,
        )
    finally:
        os.close(log_fd)
    return proc.pid


def arm(p: Pending, spawn: Spawn | None = None) -> Pending:
    """Start `p`'s window now (the apply is done) and leave its timer running."""
    fd = _take_timer_lock(p.id)
    try:
        with _locked():
            armed = replace(p, deadline=now() + p.seconds)
            _write(armed)
            pid = (spawn or spawn_timer)(armed, fd)
            armed = replace(armed, timer_pid=pid)
            _write(armed)
    finally:
        os.close(fd)  # the timer holds its own copy
    return armed


def confirm_all() -> tuple[list[Pending], list[Pending]]:
    """Confirm every apply that waits: (confirmed, too late). A record past
    its deadline is not confirmed: its timer reverts it (or, lost, the caller)."""
    confirmed: list[Pending] = []
    late: list[Pending] = []
    with _locked():
        for p in _records():
            if p.status == PENDING and now() < p.deadline:
                _forget(p)
                confirmed.append(p)
            else:
                late.append(p)
                if p.status in (REVERTED, FAILED):
                    _forget(p)  # told now, to this confirm: not again to the next
    return confirmed, late


def revert(path: Path, force: bool = False) -> Pending | None:
    """Write back what each switch of the record ran before, if the record
    still waits and its deadline has passed; the record as it ends (None:
    nothing to do). `force`: also a revert a lost timer left half done."""
    with _locked():
        p = read_record(path)
        claimable = (PENDING, REVERTING) if force else (PENDING,)
        if p is None or p.status not in claimable or now() < p.deadline:
            return None
        p = replace(p, status=REVERTING)
        _write(p)
    outcomes: list[str] = []
    failed = False
    audit = _audit_of(p)
    for u in p.units:
        unit = u.unit
        try:
            # One audit line per switch written back, as the apply left one.
            with audit.write(
                "confirm-revert",
                unit.switch or unit.target,
                unit.program,
                u.before.config,
                target=unit.target,
                pending=p.id,
            ):
                n = restore(unit, u.before, f"the state before {p.applied_file}", u.applied)
            outcomes.append(f"{u.unit.describe()}: reverted ({n} writes)")
        except ControllerError as exc:
            failed = True
            outcomes.append(f"{u.unit.describe()}: NOT reverted: {exc}")
    done = replace(
        p, status=FAILED if failed else REVERTED, outcome="; ".join(outcomes), finished=now()
    )
    with _locked():
        _write(done)
    log_event(
        log,
        "confirm-expired",
        logging.ERROR if failed else logging.WARNING,
        applied=p.applied_file,
        status=done.status,
        outcome=done.outcome,
    )
    return done


def _audit_of(p: Pending) -> AuditLog:
    """The apply's audit log and command line (a record from before they
    were kept: the default log, and the apply as the record names it)."""
    command = p.command or f"tofcc apply --confirm-within {p.seconds:g} {p.applied_file}"
    return audit_log(None if p.audit_log is None else Path(p.audit_log), command)


def revert_overdue() -> list[Pending]:
    """Revert each record past its deadline whose timer is gone."""
    done = []
    for p in _records():
        if p.status in (PENDING, REVERTING) and now() >= p.deadline and not timer_alive(p.id):
            ended = revert(p.path, force=True)
            if ended is not None:
                done.append(ended)
    return done


def wait_and_revert(path: Path, sleep: Callable[[float], None] = time.sleep) -> str:
    """The timer: wait for the deadline, looking for a confirm, then revert.
    What became of the record."""
    while True:
        p = read_record(path)
        if p is None:
            return "confirmed"
        if p.status != PENDING:
            return p.status
        left = p.deadline - now()
        if left <= 0:
            break
        sleep(min(left, POLL_S))
    ended = revert(path)
    return "confirmed" if ended is None else ended.status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bfrt_controller.confirm")
    parser.add_argument("record", type=Path)
    parser.add_argument("--lock-fd", type=int, default=None)  # held until exit
    args = parser.parse_args(argv)
    configure_logging("info")
    try:
        status = wait_and_revert(args.record)
    except ControllerError as exc:
        log_event(log, "confirm-timer-failed", logging.ERROR, record=args.record, why=exc)
        return 1
    log_event(log, "confirm-timer-done", logging.INFO, record=args.record, status=status)
    return 0 if status in ("confirmed", REVERTED) else 1


if __name__ == "__main__":
    sys.exit(main())
