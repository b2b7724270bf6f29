"""Where `tofcc --target model` keeps the intended state between invocations.

A real switch holds its own state; the model lives only as long as one
command, so the model target saves the config and the live per-class
values to a small YAML file and replays them on the next command.

Several commands may run at once (a supervisor loop beside one-shot
changes), so a command holds an exclusive lock on `<state>.lock` from the
read to the write, writes through a unique temporary file that is synced
before it replaces the state, and treats a state file it cannot read as an
error naming it: taking it as "no state" would silently revert the switch
to the default config.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from hw_profiles import safe_yaml

from .errors import ConfigError, ControllerError

STATE_KEYS = {"program", "config", "live"}
LOCK_WAIT_S = 120.0


class StateBusy(ControllerError):
    """Another tofcc command held the state lock for longer than we wait.

    Exit 6, "busy", as when another client owns the program on a switch:
    4 says the switch is unreachable, which sends a user to the wrong place."""

    exit_code = 6


def default_state_path(program: str) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tofcc" / f"model-{program}.yaml"


def load_state(path: Path) -> dict[str, Any] | None:
    """The saved state, or None when there is none yet; anything unreadable
    or malformed is a ConfigError naming the file."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(f"state file {exc.path}", exc.reason) from None
    if not isinstance(data, dict):
        raise ConfigError(f"state file {path}", "must be a mapping with program, config, live")
    unknown = sorted(str(k) for k in set(data) - STATE_KEYS)
    if unknown:
        raise ConfigError(f"state file {path}", f"unknown key '{unknown[0]}'")
    if not isinstance(data.get("program"), str):
        raise ConfigError(f"state file {path}: program", "must be a program name")
    if not isinstance(data.get("config"), dict):
        raise ConfigError(f"state file {path}: config", "must be a mapping")
    if data.get("live") is not None and not isinstance(data["live"], dict):
        raise ConfigError(f"state file {path}: live", "must be a mapping")
    return data


def save_state(path: Path, program: str, config: dict[str, Any], live: dict[str, Any]) -> None:
    text = yaml.safe_dump({"program": program, "config": config, "live": live}, sort_keys=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ConfigError(f"state file {path}", f"cannot be written: {_why(path, exc)}") from None
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"state file {path}", f"cannot be written: {_why(path, exc)}") from None
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _why(path: Path, exc: OSError) -> str:
    """The reason, in the user's terms: mkdir under a file says "File exists"."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        for parent in path.parents:
            if parent.exists() and not parent.is_dir():
                return f"{parent} is a file, not a directory"
    return str(exc.strerror or exc)


@contextlib.contextmanager
def state_lock(path: Path, wait_s: float | None = None, create: bool = True) -> Iterator[None]:
    """Hold the exclusive lock beside `path` for one read-modify-write.

    `create=False` (a command that only reads): no directory is made for the
    lock; where there is none there is no state to guard, so none is taken."""
    lock_path = path.with_name(path.name + ".lock")
    if not create and not lock_path.parent.is_dir():
        if lock_path.parent.exists() or any(
            p.exists() and not p.is_dir() for p in lock_path.parents
        ):
            raise ConfigError(
                f"state file {path}", f"cannot be locked: {_why(path, NotADirectoryError())}"
            )
        yield
        return
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a")  # noqa: SIM115 - held open for the lock's lifetime
    except OSError as exc:
        raise ConfigError(f"state file {path}", f"cannot be locked: {_why(path, exc)}") from None
    try:
        wait_s = LOCK_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise ConfigError(
                        f"state file {path}", f"cannot be locked: {exc.strerror}"
                    ) from None
                if time.monotonic() >= deadline:
                    raise StateBusy(
                        f"state file {path} is held by another tofcc command "
                        f"(waited {wait_s:.0f} s); try again when it has finished"
                    ) from None
                time.sleep(0.02)
        yield
    finally:
        handle.close()  # closing releases the lock
