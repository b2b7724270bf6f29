# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Drive one vector through any target: the reference model or a real switch.

The runner owns the meaning of a vector (reset, setup, per-step queue
injection, send, compare); targets only know how to talk to their switch.
"""

from __future__ import annotations

from collections import Counter as Multiset
from dataclasses import dataclass
from typing import Protocol

from .format import (
    RECIRCULATION_PORT,
    CounterSpec,
    KeyMatch,
    QueueSpec,
    RegisterSpec,
    Setup,
    TableEntrySpec,
    Vector,
    VectorFile,
    WriteSpec,
)
from .packets import build_bytes, build_scapy


class VectorMismatch(AssertionError):
    """The switch did not do what the vector says."""


@dataclass(frozen=True)
class QueueHook:
    """Where a program's test hooks live (P4 names): the queue-metadata hook
    and, for programs that read the ingress clock, its hook. With a clock
    hook a step's time_ns reaches the switch as the injected ingress
    timestamp of the port it sends on, so tofino-model runs it too."""

    table: str
    inject_action: str
    key_field: str = "eg_intr_md.egress_port"
    clock_table: str | None = None
    clock_inject_action: str | None = None
    clock_key_field: str = "ig_intr_md.ingress_port"


class VectorTarget(Protocol):
    def reset(self) -> None: ...

    def add_entry(self, entry: TableEntrySpec) -> None: ...

    def delete_entry(self, table: str, key: dict[str, KeyMatch]) -> None: ...

    def write_register(self, name: str, index: int, value: int) -> None: ...

    def add_mirror_session(self, sid: int, port: int, max_pkt_len: int, direction: str) -> None: ...

    def read_register(self, name: str, index: int) -> int: ...

    def read_counter(self, name: str, index: int) -> tuple[int, int]: ...

    def send_and_expect(
        self, port: int, data: bytes, expected: list[tuple[int, bytes]], context: str
    ) -> None:
        """Send one packet; raise VectorMismatch unless exactly `expected` comes out."""
        ...


def _session_port(target: VectorTarget, port: int | str) -> int:
    if isinstance(port, int):
        return port
    # Optional target method: only programs that recirculate need it.
    recirculation_port = getattr(target, "recirculation_port", None)
    if recirculation_port is None:
        raise VectorMismatch(f"mirror session port '{port}': this target cannot name it")
    return int(recirculation_port())


def _set_clock(target: VectorTarget, time_ns: int, where: str) -> None:
    # Optional target method: a target without a settable clock cannot run
    # a vector that says when its packets are sent.
    set_time_ns = getattr(target, "set_time_ns", None)
    if set_time_ns is None:
        raise VectorMismatch(f"{where}: time_ns needs a target whose clock can be set")
    set_time_ns(time_ns)


def _resolve_recirculation(target: VectorTarget, e: TableEntrySpec) -> TableEntrySpec:
    if not any(k.recirculation for k in e.key.values()) and not e.recirculation_data:
        return e
    port = _session_port(target, RECIRCULATION_PORT)
    key = {
        name: (k.model_copy(update={"value": port}) if k.recirculation else k)
        for name, k in e.key.items()
    }
    data = {n: (port if n in e.recirculation_data else v) for n, v in e.data.items()}
    return e.model_copy(update={"key": key, "data": data})


def apply_setup(target: VectorTarget, setup: Setup) -> None:
    for s in setup.mirror_sessions:
        target.add_mirror_session(s.sid, _session_port(target, s.port), s.max_pkt_len, s.direction)
    for e in setup.tables:
        target.add_entry(_resolve_recirculation(target, e))
    for r in setup.registers:
        target.write_register(r.name, r.index, r.value)


def apply_write(target: VectorTarget, write: WriteSpec) -> None:
    """A step's batch: deletes, then adds, then register writes."""
    for d in write.delete:
        target.delete_entry(d.table, d.key)
    for e in write.tables:
        target.add_entry(_resolve_recirculation(target, e))
    for r in write.registers:
        target.write_register(r.name, r.index, r.value)


def _set_queue(
    target: VectorTarget, hook: QueueHook, current: dict[int, QueueSpec], wanted: list[QueueSpec]
) -> dict[int, QueueSpec]:
    want = {q.port: q for q in wanted}
    for port in list(current):
        if port not in want or current[port] != want[port]:
            target.delete_entry(hook.table, {hook.key_field: KeyMatch(value=port)})
            del current[port]
    for port, q in want.items():
        if port not in current:
            target.add_entry(
                TableEntrySpec(
                    table=hook.table,
                    key={hook.key_field: KeyMatch(value=port)},
                    action=hook.inject_action,
                    data={"depth_cells": q.depth_cells, "sojourn_ns": q.sojourn_ns},
                )
            )
            current[port] = q
    return current


def _read_register(target: VectorTarget, r: RegisterSpec, where: str) -> int:
    if r.pipe is None:
        return target.read_register(r.name, r.index)
    # Optional keyword: only a target of several pipes (the model) reads one.
    try:
        return target.read_register(r.name, r.index, pipe=r.pipe)  # type: ignore[call-arg]
    except TypeError as exc:
        if "pipe" not in str(exc):
            raise
        raise VectorMismatch(f"{where}: this target cannot read one pipe's copy") from None


def check_registers(target: VectorTarget, specs: list[RegisterSpec], where: str) -> None:
    for r in specs:
        got = _read_register(target, r, where)
        if got != r.value:
            pipe = "" if r.pipe is None else f" in pipe {r.pipe}"
            raise VectorMismatch(f"{where}: {r.name}[{r.index}]{pipe} = {got}, expected {r.value}")


def check_counters(target: VectorTarget, specs: list[CounterSpec], where: str) -> None:
    for c in specs:
        pkts, nbytes = target.read_counter(c.counter, c.index)
        if c.packets is not None and pkts != c.packets:
            raise VectorMismatch(
                f"{where}: {c.counter}[{c.index}] packets = {pkts}, expected {c.packets}"
            )
        if c.bytes is not None and nbytes != c.bytes:
            raise VectorMismatch(
                f"{where}: {c.counter}[{c.index}] bytes = {nbytes}, expected {c.bytes}"
            )


def _inject_clock(
    target: VectorTarget, hook: QueueHook, current: dict[int, int], port: int, time_ns: int
) -> None:
    """The ingress timestamp packets on `port` see from now on."""
    assert hook.clock_table is not None and hook.clock_inject_action is not None
    if current.get(port) == time_ns:
        return
    key = {hook.clock_key_field: KeyMatch(value=port)}
    if port in current:
        target.delete_entry(hook.clock_table, key)
    target.add_entry(
        TableEntrySpec(
            table=hook.clock_table,
            key=key,
            action=hook.clock_inject_action,
            data={"tstamp_ns": time_ns},
        )
    )
    current[port] = time_ns


def run_vector(target: VectorTarget, vfile: VectorFile, vector: Vector, hook: QueueHook) -> None:
    target.reset()
    hooked_clock = vector.uses_clock and hook.clock_table is not None
    if vector.uses_clock and not hooked_clock:
        _set_clock(target, 0, vector.name)
    apply_setup(target, vfile.setup)
    apply_setup(target, vector.setup)
    queue_state: dict[int, QueueSpec] = {}
    clock_state: dict[int, int] = {}
    now_ns = 0
    for n, step in enumerate(vector.steps):
        where = f"{vector.name} step {n}"
        if step.time_ns is not None:
            now_ns = step.time_ns
            if not hooked_clock:
                _set_clock(target, step.time_ns, where)
        if hooked_clock:
            _inject_clock(target, hook, clock_state, step.send.port, now_ns)
        if step.write is not None:
            apply_write(target, step.write)
        queue_state = _set_queue(target, hook, queue_state, step.queue)
        data = build_bytes(step.send.packet)
        expected = [(e.port, build_bytes(e.packet)) for e in step.expect]
        masks = [None if e.mask is None else bytes.fromhex(e.mask) for e in step.expect]
        for i in range(step.repeat):
            ctx = where if step.repeat == 1 else f"{where} packet {i}"
            if any(m is not None for m in masks):
                _send_and_expect_masked(target, step.send.port, data, expected, masks, ctx)
            else:
                target.send_and_expect(step.send.port, data, expected, ctx)
        check_registers(target, step.registers, where)
        check_counters(target, step.counters, where)
    check_registers(target, vector.registers, f"{vector.name} end")
    check_counters(target, vector.counters, f"{vector.name} end")


def _send_and_expect_masked(
    target: VectorTarget,
    port: int,
    data: bytes,
    expected: list[tuple[int, bytes]],
    masks: list[bytes | None],
    context: str,
) -> None:
    # Optional keyword: a target that cannot compare under a mask must say
    # so rather than compare the ignored bits exactly.
    try:
        target.send_and_expect(port, data, expected, context, masks=masks)  # type: ignore[call-arg]
    except TypeError as exc:
        if "masks" not in str(exc):
            raise
        raise VectorMismatch(f"{context}: this target cannot compare masked packets") from None


def _masked_equal(got: bytes, want: bytes, mask: bytes | None) -> bool:
    if mask is None:
        return got == want
    if len(got) != len(want):
        return False
    return all((g ^ w) & m == 0 for g, w, m in zip(got, want, mask, strict=True))


def compare_outputs(
    got: list[tuple[int, bytes]],
    expected: list[tuple[int, bytes]],
    context: str,
    masks: list[bytes | None] | None = None,
) -> None:
    """Same packets on the same ports (order across ports does not matter);
    where `masks` gives one for an expected packet, only its 1 bits count."""
    if masks is not None and any(m is not None for m in masks):
        left = list(got)
        missing: list[tuple[int, bytes]] = []
        for (port, want), mask in zip(expected, masks, strict=True):
            hit = next(
                (n for n, (p, d) in enumerate(left) if p == port and _masked_equal(d, want, mask)),
                None,
            )
            if hit is None:
                missing.append((port, want))
            else:
                del left[hit]
        if not missing and not left:
            return
        lines = [f"{context}: output differs (under the expected packets' masks)"]
        lines += [f"  missing on port {p}: {build_scapy_summary(d)}" for p, d in missing]
        lines += [f"  unexpected on port {p}: {build_scapy_summary(d)}" for p, d in left]
        raise VectorMismatch("\n".join(lines))
    if Multiset(got) == Multiset(expected):
        return
    lines = [f"{context}: output differs"]
    for port, data in expected:
        if (port, data) not in got:
            lines.append(f"  missing on port {port}: {build_scapy_summary(data)}")
    for port, data in got:
        if (port, data) not in expected:
            lines.append(f"  unexpected on port {port}: {build_scapy_summary(data)}")
    raise VectorMismatch("\n".join(lines))


def build_scapy_summary(data: bytes) -> str:
    from scapy.layers.l2 import Ether

    return f"{Ether(data).summary()} [{data.hex()}]"


__all__ = [
    "QueueHook",
    "VectorMismatch",
    "VectorTarget",
    "build_scapy",
    "compare_outputs",
    "run_vector",
]
