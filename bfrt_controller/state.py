# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Where `tofcc --target model` keeps the intended state between invocations.

A real switch holds its own state; the model lives only as long as one
command, so the model target saves the config and the live per-class
values to a small YAML file and replays them on the next command.

Several commands may run at once (a supervisor loop beside one-shot
changes), so a command that writes holds an exclusive lock on
`<state>.lock` from its read to its write, writes through a new temporary
file that is synced before it replaces the state, and treats a state file
it cannot read as an error naming it: taking it as "no state" would
silently revert the switch to the default config. A command that only
reads takes no lock: the file is only ever replaced whole, so a reader sees
one complete state, never waits for a writer (`optimize --interval` holds
the lock for its whole loop) and needs no write access to the directory.

The state and its lock live only in a directory no other user can write
(paths.private_dir; the default one is made 0700), and neither is ever
opened through a symlink.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from hw_profiles import safe_yaml

from . import paths
from .errors import ConfigError, ControllerError
from .paths import PathError
from .validation import parse_model

LOCK_WAIT_S = 120.0


class SavedState(BaseModel):
    """What save_state writes. Only the shape is checked here: the config,
    the live values and the ports are checked key by key by the program's
    own schema when they are replayed (against the program the command
    runs, which may not be the one saved), and their errors name the key."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    program: Annotated[str, Field(min_length=1)]
    config: dict[Any, Any]
    live: dict[Any, Any] | None = None
    # A deployment target's ports, as its file gave them.
    front_panel: dict[Any, Any] | None = None


class StateBusy(ControllerError):
    """Another tofcc command held the state lock for longer than we wait.

    Exit 6, "busy", as when another client owns the program on a switch:
    4 says the switch is unreachable, which sends a user to the wrong place."""

    exit_code = 6


def state_dir() -> Path:
    """tofcc's own state directory: $XDG_STATE_HOME/tofcc, else
    ~/.local/state/tofcc (a relative XDG_STATE_HOME is ignored, as the XDG
    spec says)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = str(Path.home() / ".local" / "state")
    return Path(base) / "tofcc"


def default_state_path(program: str) -> Path:
    return state_dir() / f"model-{program}.yaml"


def target_state_path(name: str) -> Path:
    """The state of a deployment's `target: model` switch called `name`: one
    per target name, beside the CLI's own, so `apply`, `diff`, `run` and the
    one-shot commands naming that target all see one switch. (`name` is
    [A-Za-z0-9_.-]+, deployment.TargetSpec: a file name, never a path.)"""
    return state_dir() / f"target-{name}.yaml"


def _state_error(path: Path, doing: str, exc: PathError) -> ConfigError:
    """`exc` as the state file's error; the path is repeated only when it is
    another one (its directory, a file in the way)."""
    why = exc.reason if exc.path == str(path) else str(exc)
    return ConfigError(f"state file {path}", f"{doing}: {why}")


def load_state(path: Path) -> dict[str, Any] | None:
    """The saved state, or None when there is none yet; anything unreadable
    or malformed is a ConfigError naming the file."""
    try:
        if not paths.lexists(path):
            return None
    except PathError as exc:
        raise _state_error(path, "cannot be read", exc) from None
    try:
        data = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(f"state file {exc.path}", exc.reason) from None
    state = parse_model(SavedState, data, f"state file {path}")
    return state.model_dump(exclude_unset=True)


def save_state(
    path: Path,
    program: str,
    config: dict[str, Any],
    live: dict[str, Any],
    front_panel: dict[str, Any] | None = None,
) -> None:
    """`front_panel`: a deployment target's ports, as its file gave them."""
    data: dict[str, Any] = {"program": program, "config": config, "live": live}
    if front_panel is not None:
        data["front_panel"] = front_panel
    text = yaml.safe_dump(data, sort_keys=False)
    try:
        paths.replace_file(path, text.encode(), mode=0o600, private=True)
    except PathError as exc:
        raise _state_error(path, "cannot be written", exc) from None


@contextlib.contextmanager
def state_lock(path: Path, wait_s: float | None = None) -> Iterator[None]:
    """Hold the exclusive lock beside `path` for one read-modify-write.

    Only a command that writes takes it (and so creates the directory, 0700,
    and the lock file); one that only reads takes none."""
    lock_path = path.with_name(path.name + ".lock")
    try:
        with paths.private_dir(path.parent) as dir_fd:
            fd = paths.open_lock(dir_fd, lock_path)
    except PathError as exc:
        raise _state_error(path, "cannot be locked", exc) from None
    try:
        wait_s = LOCK_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
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
        os.close(fd)  # closing releases the lock
