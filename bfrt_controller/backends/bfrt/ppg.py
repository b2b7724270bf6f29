# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tm.ppg.cfg: PPGs are allocated per pipe by entry add (bf_rt_tm_tf1.json
tableEntryAdd: "Allocates a new PPG identified by dev_tgt.pipe_id and the
ppg_id"), outside pipe_mgr's transaction: each PPG is one call, and put
back (deleted, modified back, re-added) if anything later is refused."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from models.switch.core import P4ModelError

from ...errors import ControllerError, SwitchUnavailable, WriteError
from ...switch import Switch, TmPpgWrite, Write
from ..model import check_ppg
from .client import message
from .outside import Step
from .session import Session
from .tm import TmRowWriter

PpgRecord = tuple[TmPpgWrite, TmPpgWrite | None]


class PpgWriter:
    def __init__(self, session: Session, tm: TmRowWriter, switch: Switch) -> None:
        self.s = session
        self.tm = tm
        self.switch = switch  # for what a read of a written PPG returns (Switch.holds)
        self.table = tm.name("tm.ppg.cfg")

    def _call(self, call: str, w: TmPpgWrite) -> None:
        key = self.s.make_key(self.table, ppg_id=w.ppg_id)
        if call == "entry_del":
            self.s.call_one(self.table, call, key, pipe=w.port >> 7)
            return
        values = {**w.action_fields(), **w.fields()}
        t = self.s.table(self.table)
        data = t.make_data([self.s.data_tuple(n, v) for n, v in values.items()], "dev_port")
        self.s.call_one(self.table, call, key, data, pipe=w.port >> 7)

    def read(self, port: int, ppg_id: int, max_port: int) -> TmPpgWrite | None:
        if not 0 <= port <= max_port:
            raise P4ModelError(f"{self.table}: dev_port {port} invalid")
        data = self.s.get(self.table, self.s.make_key(self.table, ppg_id=ppg_id), port >> 7)
        if data is None:
            return None
        d = data.to_dict()
        if int(d["dev_port"]) != port:
            return None
        xoff = int(d["pool_max_cells"])
        return TmPpgWrite(
            ppg_id,
            port,
            tuple(c for c in range(8) if d[f"icos_{c}"]),
            xoff,
            xoff - int(d["hysteresis_cells"]),
            int(d["pfc_skid_max_cells"]),
            str(d["pool_id"]),
        )

    def _apply(self, w: TmPpgWrite, prior: TmPpgWrite | None) -> bool:
        if w.delete:
            if prior is None:
                return False
            self._call("entry_del", w)
        elif prior is None:
            self._call("entry_add", w)
        elif prior != self.switch.holds(w):
            # Compared as the target reads it back: rounded on an ASIC only.
            self._call("entry_mod", w)
        else:
            return False
        return True

    def restore(self, done: list[PpgRecord]) -> None:
        problems: list[str] = []
        for w, prior in reversed(done):
            try:
                now = self.read(w.port, w.ppg_id, self.switch.profile.max_port)
                if prior is None:
                    if now is not None:
                        self._call("entry_del", w)
                elif now is None:
                    self._call("entry_add", prior)
                elif now != prior:
                    self._call("entry_mod", prior)
            except SwitchUnavailable:
                raise
            except Exception as exc:
                problems.append(f"ppg {w.ppg_id}: {message(exc)}")
        if problems:
            raise ControllerError(f"rollback of {self.table} incomplete: {'; '.join(problems)}")

    def plan(self, writes: Sequence[Write]) -> tuple[list[int], list[Step[PpgRecord]]]:
        """The batch's PPG writes as steps (each checked, its prior read),
        and the indices of the rest."""
        rest = [i for i, w in enumerate(writes) if not isinstance(w, TmPpgWrite)]
        steps: list[Step[PpgRecord]] = []
        for i, w in enumerate(writes):
            if not isinstance(w, TmPpgWrite):
                continue
            try:
                check_ppg(w, self.switch.profile.max_port)
                self.tm.port_cfg(w.port)  # a port the device lacks: refused before any write
                prior = self.read(w.port, w.ppg_id, self.switch.profile.max_port)
            except SwitchUnavailable:
                raise
            except (ControllerError, P4ModelError, KeyError, ValueError, TypeError) as exc:
                raise WriteError(i, w.describe(), f"{self.tm.prefix}.{message(exc)}") from None
            steps.append(Step(i, w.describe(), _bind(self._apply, w, prior), (w, prior)))
        return rest, steps


def _bind(
    fn: Callable[[TmPpgWrite, TmPpgWrite | None], bool], w: TmPpgWrite, prior: TmPpgWrite | None
) -> Callable[[], bool]:
    return lambda: fn(w, prior)
