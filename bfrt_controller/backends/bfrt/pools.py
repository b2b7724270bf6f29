# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tm.pool.cfg and tm.pool.app_pfc: device-wide rows that always exist,
only modified (the server has no add or delete for them), and modified
back on a refusal."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from models.switch.core import P4ModelError

from ...errors import ControllerError, SwitchUnavailable, WriteError
from ...switch import PFC_LEVELS, PPG_POOLS, TmPoolWrite, Write
from ..model import check_pool
from .client import message
from .outside import Step
from .session import Session

PoolRecord = tuple[str, int | None, int]


class PoolWriter:
    def __init__(self, session: Session, prefix: str, buffer_cells: int) -> None:
        self.s = session
        self.prefix = prefix
        self.buffer_cells = buffer_cells

    def _where(self, pool: str, icos: int | None) -> tuple[str, str, object]:
        table = f"{self.prefix}.tm.pool.{'cfg' if icos is None else 'app_pfc'}"
        field = "size_cells" if icos is None else "pfc_limit_cells"
        keys: dict[str, object] = {"pool": pool}
        if icos is not None:
            keys["cos"] = icos
        return table, field, self.s.make_key(table, **keys)

    def _set(self, pool: str, icos: int | None, cells: int) -> None:
        table, field, key = self._where(pool, icos)
        data = self.s.table(table).make_data([self.s.data_tuple(field, cells)])
        self.s.call_one(table, "entry_mod", key, data)

    def cells(self, pool: str, icos: int | None) -> int:
        table, field, key = self._where(pool, icos)
        data = self.s.get(table, key)
        if data is None:
            raise ControllerError(f"{table}: no row for pool {pool}")
        return int(data.to_dict()[field])

    def read(self, pool: str) -> TmPoolWrite:
        limits = (
            tuple((c, self.cells(pool, c)) for c in range(PFC_LEVELS)) if pool in PPG_POOLS else ()
        )
        return TmPoolWrite(pool, self.cells(pool, None), limits)

    def restore(self, done: list[PoolRecord]) -> None:
        problems: list[str] = []
        for pool, icos, before in reversed(done):
            try:
                self._set(pool, icos, before)
            except SwitchUnavailable:
                raise
            except Exception as exc:
                problems.append(f"{pool}{'' if icos is None else f' cos {icos}'}: {message(exc)}")
        if problems:
            raise ControllerError(f"rollback of TM pools incomplete: {'; '.join(problems)}")

    def plan(self, writes: Sequence[Write]) -> tuple[list[int], list[Step[PoolRecord]]]:
        rest = [i for i, w in enumerate(writes) if not isinstance(w, TmPoolWrite)]
        steps: list[Step[PoolRecord]] = []
        for i, w in enumerate(writes):
            if not isinstance(w, TmPoolWrite):
                continue
            try:
                check_pool(w, self.buffer_cells)
                rows: list[tuple[int | None, int]] = []
                if w.size_cells is not None:
                    rows.append((None, w.size_cells))
                rows += list(w.pfc_limit_cells)
                for icos, cells in rows:
                    before = self.cells(w.pool, icos)
                    steps.append(
                        Step(
                            i,
                            w.describe(),
                            self._setter(w.pool, icos, cells),
                            (w.pool, icos, before),
                        )
                    )
            except SwitchUnavailable:
                raise
            except (ControllerError, P4ModelError, KeyError, ValueError, TypeError) as exc:
                raise WriteError(i, w.describe(), message(exc)) from None
        return rest, steps

    def _setter(self, pool: str, icos: int | None, cells: int) -> Callable[[], bool]:
        def call() -> bool:
            # A modify to the value held is still a write: pool rows are cheap
            # and always exist, and the switch may round what it keeps.
            self._set(pool, icos, cells)
            return True

        return call
