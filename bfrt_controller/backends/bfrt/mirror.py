# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`$mirror.cfg`: mirror sessions, written one update per call outside the
transaction (pipe_mgr refuses mirror calls inside one: batch.py) and put
back from the snapshot when a later write is refused."""

from __future__ import annotations

from collections.abc import Hashable

from hw_profiles import HwProfile
from models.switch.core import P4ModelError

from ...switch import MirrorSessionWrite
from .batch import Checked, Op, Slot, SlotKind, restore_entry
from .client import ALL_PIPES, MAX_MIRROR_PKT_LEN, MIRROR_FIELDS, MIRROR_TABLE
from .session import Session


class MirrorWriter:
    handles: tuple[type, ...] = (MirrorSessionWrite,)
    kinds: tuple[SlotKind, ...] = ("mirror",)

    def __init__(self, session: Session, profile: HwProfile) -> None:
        self.s = session
        self.profile = profile

    def check(self, i: int, w: MirrorSessionWrite) -> Checked:
        p = self.profile
        if not p.valid_mirror_session(w.sid):
            raise P4ModelError(
                f"{MIRROR_TABLE}: $sid {w.sid} outside "
                f"{p.mirror_session_min}..{p.mirror_session_max} on {p.chip}"
            )
        key = self.s.make_key(MIRROR_TABLE, **{"$sid": w.sid})
        op = Op(i, w, MIRROR_TABLE, "mirror", ("mirror", w.sid), key=key)
        if w.delete:
            op.intent = "delete"
        else:
            if not 0 <= w.port <= p.max_port:
                raise P4ModelError(f"{MIRROR_TABLE}: $ucast_egress_port {w.port} invalid")
            if not 0 <= w.max_pkt_len <= MAX_MIRROR_PKT_LEN:
                raise P4ModelError(f"{MIRROR_TABLE}: $max_pkt_len {w.max_pkt_len} invalid")
            if w.direction not in ("INGRESS", "EGRESS", "BOTH"):
                raise P4ModelError(f"{MIRROR_TABLE}: $direction {w.direction!r} invalid")
            if not 0 <= w.queue <= p.max_queue_id:
                raise P4ModelError(f"{MIRROR_TABLE}: $egress_port_queue {w.queue} invalid")
            if not 0 <= w.icos <= 7:
                raise P4ModelError(f"{MIRROR_TABLE}: $ingress_cos {w.icos} invalid")
            values = {
                "$direction": w.direction,
                "$session_enable": True,
                "$ucast_egress_port": w.port,
                "$ucast_egress_port_valid": True,
                "$max_pkt_len": w.max_pkt_len,
                "$egress_port_queue": w.queue,
                "$ingress_cos": w.icos,
            }
            op.data = self.s.make_data(MIRROR_TABLE, values, "$normal")
        return [(op, Slot("mirror", MIRROR_TABLE, ALL_PIPES, key=key))]

    def prepare(self, ops: list[Op], slots: dict[Hashable, Slot]) -> None:
        pass

    def read_prior(self, slot: Slot) -> None:
        data = self.s.get(slot.table, slot.key)
        slot.present = data is not None
        if data is not None:
            d = data.to_dict()
            slot.action = d["action_name"]
            slot.prior = {n: d[n] for n in MIRROR_FIELDS if n in d}

    def restore(self, slot: Slot, exists_now: bool) -> None:
        restore_entry(self.s, slot, exists_now, self.s.continue_on_error())

    def read(self, sid: int) -> MirrorSessionWrite | None:
        """The session as `$mirror.cfg` holds it (bf_rt_mirror_tf1.json: the
        $normal action's fields); None when there is none."""
        data = self.s.get(MIRROR_TABLE, self.s.make_key(MIRROR_TABLE, **{"$sid": sid}))
        if data is None:
            return None
        d = data.to_dict()
        return MirrorSessionWrite(
            sid,
            int(d["$ucast_egress_port"]),
            int(d.get("$max_pkt_len", 0)),
            d["$direction"],
            queue=int(d.get("$egress_port_queue", 0)),
            icos=int(d.get("$ingress_cos", 0)),
        )
