# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The daemon's model targets' state files: a model switch "stays up"
across daemon restarts and one-shot commands as a real one does, because its
state file is read before the daemon writes it and saved after (state.py
locks it as the CLI does)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .fleet import Target, save_target
from .logs import log_event
from .state import load_state, state_lock, target_state_path

log = logging.getLogger("tofcc.service")

# How long a cycle waits for a one-shot command's hold on a model target's
# state file: a short one, as the cycle holds up the fleet meanwhile; past it
# the cycle fails (logged) and the next one tries again.
MODEL_STATE_WAIT_S = 5.0


def file_stamp(path: Path) -> tuple[int, int] | None:
    """Which version of a state file this is: each save is a new file
    (state.save_state replaces it whole), so its inode and mtime change."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns)


class ModelStates:
    """`keep`: the daemon keeps its model targets' state files (`tofcc run`);
    else it keeps none (tests, a daemon in a process of its own)."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self._saved: dict[str, tuple[int, int] | None] = {}

    @contextlib.contextmanager
    def locked(self, t: Target) -> Iterator[Path | None]:
        """The state file of `t`'s model switch, locked as the CLI locks it,
        or None when the daemon keeps none for it."""
        if not self.keep or t.resolved.spec.target != "model":
            yield None
            return
        path = target_state_path(t.name)
        with state_lock(path, wait_s=MODEL_STATE_WAIT_S):
            yield path

    def save(self, t: Target, path: Path) -> None:
        save_target(path, t.app)
        self._saved[t.name] = file_stamp(path)

    def adopt_one_shot_writes(
        self,
        t: Target,
        path: Path,
        audited: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        """A one-shot command (`tofcc --config DEPLOY set-threshold ...`) wrote
        the target's switch since the daemon last saved it: its live values
        are what the switch holds now, so the daemon goes on from them, as a
        daemon on a real switch finds an operator's write in the tables."""
        stamp = file_stamp(path)
        if stamp == self._saved.get(t.name):
            return
        # Taken as seen first: a file that will not restore fails one cycle, not each.
        self._saved[t.name] = stamp
        saved = load_state(path)
        if saved is not None and saved["program"] == t.resolved.spec.program:
            t.app.restore_live(saved.get("live") or {}, f"state file {path}: live")
            with audited():  # the daemon's switch written: one audit line
                t.app.push_all()
            log_event(log, "adopted", logging.INFO, switch=t.name, state=path)
