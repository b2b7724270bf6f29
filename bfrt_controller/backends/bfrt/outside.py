# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Writes that take no part in pipe_mgr's transaction and are not fixed
rows: `$PORT`, tm.ppg.cfg and the pools. Each is one call of its own, made
before the batch's tables, and put back by its writer if that call or
anything after it is refused. A step that changed nothing leaves nothing to
put back: restoring a port it never touched would delete and re-add it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ...errors import SwitchUnavailable, WriteError
from ...switch import Write
from .client import message

Record = TypeVar("Record")


@dataclass
class Step(Generic[Record]):
    """One outside write: `call` returns whether it changed the switch;
    `record` is what the writer's restore needs to put it back."""

    index: int
    what: str
    call: Callable[[], bool]
    record: Record


def each_then_rest(
    writes: Sequence[Write],
    rest_index: list[int],
    steps: Sequence[Step[Record]],
    restore: Callable[[list[Record]], None],
    write_rest: Callable[[Sequence[Write]], None],
) -> None:
    """Run each step, then write the rest of the batch; on a refusal restore
    what the steps changed, newest first, and name the refused write. A step
    that fails part-way is restored too: its writer reads what is there."""
    done: list[Record] = []
    for step in steps:
        try:
            changed = step.call()
        except SwitchUnavailable:
            raise
        except Exception as exc:
            why = message(exc)
            restore([*done, step.record])
            raise WriteError(step.index, step.what, why) from None
        if changed:
            done.append(step.record)
    rest = [writes[i] for i in rest_index]
    try:
        write_rest(rest)
    except WriteError as exc:
        restore(done)
        raise WriteError(rest_index[exc.index], exc.what, exc.reason) from None
