# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The reference model as a vector target (what pytest runs everywhere)."""

from __future__ import annotations

from models.vectors.format import KeyMatch, TableEntrySpec
from models.vectors.runner import compare_outputs

from .core import Match, MirrorSession
from .tna import TnaProgram


def to_match(k: KeyMatch) -> Match:
    return Match(k.value, prefix_len=k.prefix_len, mask=k.mask)


class ModelTarget:
    """`pipe`: the pipe the vector's ports are in (a port mapper moves them
    there): its recirculation port, and its copy of each register, are the
    ones the vector names. Writes go to every pipe, counters read summed
    over the pipes, as the PTF target does on a switch."""

    def __init__(self, program: TnaProgram, pipe: int = 0) -> None:
        if not 0 <= pipe < program.pipes:
            raise ValueError(f"pipe {pipe}: the model runs {program.pipes} pipe(s)")
        self.program = program
        self.pipe = pipe

    def reset(self) -> None:
        self.program.reset()
        self.program.now_ns = 0

    def set_time_ns(self, time_ns: int) -> None:
        """The switch clock ingress_mac_tstamp / global_tstamp read from."""
        self.program.now_ns = time_ns

    def recirculation_port(self) -> int:
        """The recirculation port of the vector's pipe (pipe 0 unless moved)."""
        return self.program.profile.recirculation_ports[self.pipe]

    def add_entry(self, entry: TableEntrySpec) -> None:
        table = self.program.table(entry.table)
        if entry.default:
            table.set_default(entry.action, dict(entry.data))
        else:
            key = {name: to_match(k) for name, k in entry.key.items()}
            table.add(key, entry.action, dict(entry.data), entry.priority)

    def delete_entry(self, table: str, key: dict[str, KeyMatch]) -> None:
        self.program.table(table).delete({name: to_match(k) for name, k in key.items()})

    def write_register(self, name: str, index: int, value: int) -> None:
        self.program.register(name).write_all(index, value)

    def add_mirror_session(self, sid: int, port: int, max_pkt_len: int, direction: str) -> None:
        self.program.mirror_session_add(
            MirrorSession(sid, port, direction=direction, max_pkt_len=max_pkt_len)  # type: ignore[arg-type]
        )

    def read_register(self, name: str, index: int, pipe: int | None = None) -> int:
        """The cell in `pipe` (default: the vector's pipe)."""
        return self.program.register(name).read_pipe(self.pipe if pipe is None else pipe, index)

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        return self.program.counter(name).read(index)

    def send_and_expect(
        self,
        port: int,
        data: bytes,
        expected: list[tuple[int, bytes]],
        context: str,
        masks: list[bytes | None] | None = None,
    ) -> None:
        got = [(o.port, o.data) for o in self.program.send(port, data)]
        compare_outputs(got, expected, context, masks)
