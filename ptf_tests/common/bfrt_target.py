# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A real switch (tofino-model or hardware) as a vector target, through BF-Runtime.

Imported only where the SDE's bfrt_grpc and ptf are installed. Ports here are
device ports: vector_tests wraps this target in ports.PortMappedTarget.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import bfrt_grpc.client as gc  # type: ignore[import-not-found]
import ptf  # type: ignore[import-not-found]
import ptf.testutils as testutils  # type: ignore[import-not-found]

from bfrt_controller.backends.bfrt import rpc_error_message
from hw_profiles import HwProfile
from models.switch.tna import TnaProgram
from models.vectors.format import KeyMatch, TableEntrySpec
from models.vectors.runner import VectorMismatch

from .dataplane import expect_outputs

F = TypeVar("F", bound=Callable[..., Any])


def _named_errors(fn: F) -> F:
    """A refused call becomes a VectorMismatch whose text says why: the
    client's exceptions print only per-update errors (an empty "Error(s):"
    for a status such as NOT_FOUND), so the gRPC status and details are used
    when there are none (bfruntime_grpc_client/python/client.py)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except VectorMismatch:
            raise
        except Exception as exc:
            what = ", ".join(repr(a) for a in args if not isinstance(a, bytes))[:200]
            raise VectorMismatch(f"{fn.__name__}({what}): {rpc_error_message(exc)}") from exc

    return wrapper  # type: ignore[return-value]


class BfrtTarget:
    """Talks to the switch by the same P4 names the vectors and the model use."""

    def __init__(
        self,
        test: Any,
        bfrt_info: Any,
        program_model: TnaProgram,
        profile: HwProfile,
        pipe: int = 0,
    ):
        self.test = test
        self.bfrt_info = bfrt_info
        self.target = gc.Target(device_id=0, pipe_id=0xFFFF)
        # The object inventory comes from the reference model, which the parity
        # test holds equal to the P4 source.
        self.model = program_model
        self.profile = profile
        self.pipe = pipe
        self.sessions: set[int] = set()

    def recirculation_port(self) -> int:
        """Pipe 0's recirculation port, where the vectors' ports are."""
        return self.profile.recirculation_ports[self.pipe]

    def _key(
        self, table: Any, table_name: str, key: dict[str, KeyMatch], priority: int | None
    ) -> Any:
        fields = []
        spec = self.model.table(table_name).keys
        for name, k in key.items():
            field = spec.get(name)
            if k.mask is None and field is not None and field.match == "ternary":
                # A bare value on a ternary key is that value exactly, as on
                # the model; BF-Runtime refuses a ternary field without a mask.
                fields.append(gc.KeyTuple(name, k.value, mask=(1 << field.bits) - 1))
            elif k.mask is not None:
                fields.append(gc.KeyTuple(name, k.value, mask=k.mask))
            elif k.prefix_len is not None:
                fields.append(gc.KeyTuple(name, k.value, prefix_len=k.prefix_len))
            else:
                fields.append(gc.KeyTuple(name, k.value))
        if priority is not None:
            fields.append(gc.KeyTuple("$MATCH_PRIORITY", priority))
        return table.make_key(fields)

    def _needs_priority(self, name: str) -> bool:
        return self.model.table(name).needs_priority

    @_named_errors
    def reset(self) -> None:
        for name in self.model.p4.tables:
            t = self.bfrt_info.table_get(name)
            t.entry_del(self.target)
            t.default_entry_reset(self.target)
        for name in [*self.model.p4.registers, *self.model.p4.counters]:
            self.bfrt_info.table_get(name).entry_del(self.target)
        mirror = self.bfrt_info.table_get("$mirror.cfg")
        for sid in sorted(self.sessions):
            mirror.entry_del(self.target, [mirror.make_key([gc.KeyTuple("$sid", sid)])])
        self.sessions.clear()

    @_named_errors
    def add_entry(self, entry: TableEntrySpec) -> None:
        t = self.bfrt_info.table_get(entry.table)
        data = t.make_data([gc.DataTuple(k, v) for k, v in entry.data.items()], entry.action)
        if entry.default:
            t.default_entry_set(self.target, data)
            return
        prio = entry.priority if self._needs_priority(entry.table) else None
        t.entry_add(self.target, [self._key(t, entry.table, entry.key, prio)], [data])

    @_named_errors
    def delete_entry(self, table: str, key: dict[str, KeyMatch]) -> None:
        t = self.bfrt_info.table_get(table)
        prio = 0 if self._needs_priority(table) else None
        t.entry_del(self.target, [self._key(t, table, key, prio)])

    def _register_fields(self, name: str, value: int) -> dict[str, int]:
        """BF-Runtime data fields of a register entry: f1, or one per member
        of a pair (the model packs members, first in the high half)."""
        reg = self.model.register(name)
        if not reg.members:
            return {f"{name}.f1": value}
        return {f"{name}.{m}": v for m, v in reg.split(value).items()}

    @_named_errors
    def write_register(self, name: str, index: int, value: int) -> None:
        t = self.bfrt_info.table_get(name)
        fields = self._register_fields(name, value)
        t.entry_add(
            self.target,
            [t.make_key([gc.KeyTuple("$REGISTER_INDEX", index)])],
            [t.make_data([gc.DataTuple(k, v) for k, v in fields.items()])],
        )

    @_named_errors
    def add_mirror_session(self, sid: int, port: int, max_pkt_len: int, direction: str) -> None:
        t = self.bfrt_info.table_get("$mirror.cfg")
        t.entry_add(
            self.target,
            [t.make_key([gc.KeyTuple("$sid", sid)])],
            [
                t.make_data(
                    [
                        gc.DataTuple("$direction", str_val=direction),
                        gc.DataTuple("$session_enable", bool_val=True),
                        gc.DataTuple("$ucast_egress_port", port),
                        gc.DataTuple("$ucast_egress_port_valid", bool_val=True),
                        gc.DataTuple("$max_pkt_len", max_pkt_len),
                    ],
                    "$normal",
                )
            ],
        )
        self.sessions.add(sid)

    @_named_errors
    def read_register(self, name: str, index: int) -> int:
        t = self.bfrt_info.table_get(name)
        resp = t.entry_get(
            self.target, [t.make_key([gc.KeyTuple("$REGISTER_INDEX", index)])], {"from_hw": True}
        )
        data, _ = next(resp)
        # One value per pipe; the vectors' ports all sit in `self.pipe`.
        d = data.to_dict()
        reg = self.model.register(name)
        if not reg.members:
            return int(d[f"{name}.f1"][self.pipe])
        return reg.pack({m: int(d[f"{name}.{m}"][self.pipe]) for m in reg.members})

    @_named_errors
    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        t = self.bfrt_info.table_get(name)
        resp = t.entry_get(
            self.target, [t.make_key([gc.KeyTuple("$COUNTER_INDEX", index)])], {"from_hw": True}
        )
        data, _ = next(resp)
        d = data.to_dict()
        return int(d.get("$COUNTER_SPEC_PKTS", 0)), int(d.get("$COUNTER_SPEC_BYTES", 0))

    def _poll(self, timeout_s: float) -> tuple[int, bytes] | None:
        result = testutils.dp_poll(self.test, device_number=0, timeout=timeout_s)
        if isinstance(result, self.test.dataplane.PollSuccess):
            return int(result.port), bytes(result.packet)
        return None

    def send_and_expect(
        self,
        port: int,
        data: bytes,
        expected: list[tuple[int, bytes]],
        context: str,
        masks: list[bytes | None] | None = None,
    ) -> None:
        """Every packet out compared as a multiset, not one verify_packet per
        port in vector order (see dataplane.py); under `masks` (p4testgen's
        do-not-care bits) only an expected packet's masked-in bits count."""
        testutils.send_packet(self.test, port, data)
        expect_outputs(
            self._poll,
            expected,
            context,
            timeout_s=ptf.ptfutils.default_timeout,
            quiet_s=ptf.ptfutils.default_negative_timeout,
            masks=masks,
        )
