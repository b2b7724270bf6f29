# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The TNA packet path around a program: ingress -> TM -> egress, plus
egress-to-egress mirroring and recirculation.

The model has no real queues, exactly like tofino-model: the TM reports
enq_qdepth = 0 and deq_timedelta = 0, and queue-dependent logic is driven
through each program's queue-metadata test hook. A Timeline (timeline.py)
takes the TM's place when a run needs packets to wait: each one then leaves
at its own departure time.

Pipes: a program runs one pipe unless set_pipes says otherwise. With more,
every register and counter has one copy per pipe; a packet's ingress runs in
the pipe of the port it arrived on, its egress in the pipe of the port it
leaves by, so a mirror copy's egress is in the pipe of its session's port
and a recirculated packet re-enters ingress in the pipe of the recirculation
port it left by (a resubmitted packet never leaves its ingress pipe). Tables
and mirror sessions are shared: the controller writes every pipe.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from hw_profiles import HwProfile
from models import speedups

from . import native
from .core import Counter, Entry, MirrorSession, Output, P4ModelError, P4Objects, Register, Table

# A packet may loop through a recirculation port at most this many times in
# the model; hardware has no such limit, the model needs one to terminate.
MAX_RECIRCULATIONS = 16
# The pipe counts a Tofino or Tofino2 comes with (a 32 x 100G Tofino has 2,
# a 64 x 100G one 4; boards.py reads a board's from its ports).
VALID_PIPES = (1, 2, 4)


@dataclass
class IngressIntrinsic:
    ingress_port: int
    ingress_mac_tstamp_ns: int = 0
    # ig_prsr_md.global_tstamp: the parser's clock, defined for every packet
    # (a recirculated one's too). The model has one clock: unset (-1), it
    # reads as ingress_mac_tstamp_ns.
    global_tstamp_ns: int = -1

    def __post_init__(self) -> None:
        if self.global_tstamp_ns < 0:
            self.global_tstamp_ns = self.ingress_mac_tstamp_ns


@dataclass
class EgressIntrinsic:
    egress_port: int
    egress_qid: int
    enq_qdepth: int = 0
    deq_timedelta: int = 0
    # The depth of the packet's queue as it leaves, this packet excluded
    # (cells, 19 bits like enq_qdepth).
    deq_qdepth: int = 0
    global_tstamp_ns: int = 0


@dataclass
class EgressMirror:
    session_id: int
    header: bytes


# An ingress-to-egress mirror: the copy is the packet as it arrived, behind
# the mirror header.
IngressMirror = EgressMirror


@dataclass
class IngressResult:
    drop: bool
    egress_port: int = 0
    qid: int = 0
    data: bytes = b""
    mirror: IngressMirror | None = None
    # ig_intr_md_for_tm.ingress_cos: the PPG that counts the packet (PFC).
    icos: int = 0


@dataclass
class EgressResult:
    drop: bool
    data: bytes = b""
    mirror: EgressMirror | None = None


class Snapshot(NamedTuple):
    tables: dict[str, tuple[list[Entry], tuple[str, dict[str, int]]]]
    # Every pipe's copy, in pipe order.
    registers: dict[str, list[list[int]]]
    counters: dict[str, list[tuple[list[int], list[int]]]]
    sessions: dict[int, MirrorSession]


class TrafficManager(Protocol):
    """What holds a packet between ingress and egress (timeline.py)."""

    def enqueue(self, port: int, qid: int, data: bytes, depth: int) -> None: ...


class TnaProgram(ABC):
    """Base of every reference model. Subclasses read like their P4 program."""

    name: str = ""

    def __init__(self, profile: HwProfile) -> None:
        self.profile = profile
        self.p4 = P4Objects()
        self.mirror_sessions: dict[int, MirrorSession] = {}
        self.now_ns = 0
        self.pipes = 1
        self._pipe = 0
        # A port id is its pipe number above this many bits (Tofino: 7).
        self._local_bits = profile.port_id_bits - (profile.pipes - 1).bit_length()
        # None: a packet goes from ingress straight to egress.
        self.tm: TrafficManager | None = None
        self._native: native.Core | None = None
        self._native_bound = False

    # -- the compiled core (models/switch/native) ----------------------
    def native_core(self) -> native.Core | None:
        """The compiled core when the speed-ups run it, else None (the
        program runs in Python)."""
        if not (speedups.ENABLED and speedups.NATIVE):
            return None
        if not self._native_bound:
            self._native = native.bind(self)
            self._native_bound = True
        return self._native

    def __getstate__(self) -> dict[str, Any]:
        # A core's functions are not copied or pickled: a copy binds its own.
        state = dict(self.__dict__)
        state["_native"], state["_native_bound"] = None, False
        return state

    # -- pipes ---------------------------------------------------------
    def set_pipes(self, pipes: int) -> None:
        """Run `pipes` pipes: every register and counter gets a copy per pipe,
        each at its initial value (as when the program is loaded)."""
        if pipes not in VALID_PIPES or pipes > self.profile.pipes:
            raise P4ModelError(
                f"{self.name}: {pipes} pipes; {self.profile.chip} runs "
                f"{', '.join(str(n) for n in VALID_PIPES if n <= self.profile.pipes)}"
            )
        for r in self.p4.registers.values():
            r.set_pipes(pipes)
        for c in self.p4.counters.values():
            c.set_pipes(pipes)
        self.pipes = pipes
        self._pipe = 0

    @property
    def active_pipe(self) -> int:
        """The pipe whose copies the registers and counters answer with now."""
        return self._pipe

    def pipe_of(self, port: int) -> int:
        """The pipe whose copy of the state a packet on `port` uses."""
        return 0 if self.pipes == 1 else port >> self._local_bits

    def has_port(self, port: int) -> bool:
        """A device port of the switch: of the chip, and with several pipes,
        of one the switch runs (a 2-pipe Tofino has no pipe 2 or 3)."""
        if not self.profile.has_port(port):
            return False
        return self.pipes == 1 or port >> self._local_bits < self.pipes

    def select_pipe(self, pipe: int) -> None:
        """Registers and counters answer with `pipe`'s copy from now on."""
        if pipe == self._pipe:
            return
        for r in self.p4.registers.values():
            r.select_pipe(pipe)
        for c in self.p4.counters.values():
            c.select_pipe(pipe)
        self._pipe = pipe

    def ingress_in_pipe(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        """ingress() in the pipe of the port the packet arrived on."""
        if self.pipes > 1:
            self.select_pipe(ig_intr_md.ingress_port >> self._local_bits)
        return self.ingress(ig_intr_md, data)

    def egress_in_pipe(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        """egress() in the pipe of the port the packet leaves by."""
        if self.pipes > 1:
            self.select_pipe(eg_intr_md.egress_port >> self._local_bits)
        return self.egress(eg_intr_md, data)

    # -- control plane -------------------------------------------------
    def table(self, name: str) -> Table:
        try:
            return self.p4.tables[name]
        except KeyError:
            raise P4ModelError(f"{self.name}: unknown table '{name}'") from None

    def register(self, name: str) -> Register:
        try:
            return self.p4.registers[name]
        except KeyError:
            raise P4ModelError(f"{self.name}: unknown register '{name}'") from None

    def counter(self, name: str) -> Counter:
        try:
            return self.p4.counters[name]
        except KeyError:
            raise P4ModelError(f"{self.name}: unknown counter '{name}'") from None

    def mirror_session_add(self, session: MirrorSession) -> None:
        if not self.profile.valid_mirror_session(session.sid):
            raise P4ModelError(
                f"$mirror.cfg: $sid {session.sid} outside {self.profile.mirror_session_min}.."
                f"{self.profile.mirror_session_max} on {self.profile.chip}"
            )
        if not 0 <= session.egress_port <= self.profile.max_port or (
            self.pipes > 1 and not self.has_port(session.egress_port)
        ):
            raise P4ModelError(f"$mirror.cfg: $ucast_egress_port {session.egress_port} invalid")
        if session.max_pkt_len < 0 or session.max_pkt_len > 0x3FFF:
            raise P4ModelError(f"$mirror.cfg: $max_pkt_len {session.max_pkt_len} invalid")
        # pipe_mgr_mirror_buffer.c: a queue beyond the chip's 5 (Tofino) or
        # 7 (Tofino2) bits, an iCoS beyond 3 bits.
        if not 0 <= session.queue <= self.profile.max_queue_id:
            raise P4ModelError(f"$mirror.cfg: $egress_port_queue {session.queue} invalid")
        if not 0 <= session.icos <= 7:
            raise P4ModelError(f"$mirror.cfg: $ingress_cos {session.icos} invalid")
        self.mirror_sessions[session.sid] = session

    def mirror_session_delete(self, sid: int) -> None:
        if sid not in self.mirror_sessions:
            raise P4ModelError(f"$mirror.cfg: no session {sid}")
        del self.mirror_sessions[sid]

    def snapshot(self) -> Snapshot:
        """Control-plane-visible state, for restore(). Entries and sessions are
        never changed in place (a write replaces them), so copying the
        containers is enough - and cheap for tables of thousands of entries."""
        return Snapshot(
            {
                n: (list(t.entries), (t.default[0], dict(t.default[1])))
                for n, t in self.p4.tables.items()
            },
            {n: r.copies() for n, r in self.p4.registers.items()},
            {n: c.copies() for n, c in self.p4.counters.items()},
            {sid: copy.copy(s) for sid, s in self.mirror_sessions.items()},
        )

    def restore(self, snap: Snapshot) -> None:
        """Put back a snapshot in place (the program keeps its object references)."""
        tables, registers, counters, sessions = snap
        for n, (entries, default) in tables.items():
            t = self.p4.tables[n]
            t.entries, t.default = list(entries), (default[0], dict(default[1]))
        for n, copies in registers.items():
            self.p4.registers[n].restore_copies(copies)
        for n, counts in counters.items():
            self.p4.counters[n].restore_copies(counts)
        self.mirror_sessions = {sid: copy.copy(s) for sid, s in sessions.items()}

    def reset(self) -> None:
        """Back to the state just after the program is loaded."""
        for t in self.p4.tables.values():
            t.clear()
        for r in self.p4.registers.values():
            r.clear()
        for c in self.p4.counters.values():
            c.clear()
        self.mirror_sessions.clear()

    # -- data plane ----------------------------------------------------
    @abstractmethod
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult: ...

    @abstractmethod
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult: ...

    def send(self, port: int, data: bytes) -> list[Output]:
        """Inject one packet on `port`; return every packet the switch emits."""
        if not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"port {port} outside 0..{self.profile.max_port}")
        if self.pipes > 1 and port >> self._local_bits >= self.pipes:
            raise P4ModelError(
                f"port {port} is in pipe {port >> self._local_bits}; the switch "
                f"runs pipes 0..{self.pipes - 1}"
            )
        outputs: list[Output] = []
        self._run(port, data, outputs, depth=0)
        return outputs

    def ingress_mirror_copy(
        self, mirror: IngressMirror, data: bytes
    ) -> tuple[int, bytes, int] | None:
        """(port, copy, queue) an ingress mirror makes of `data`, the packet as it
        arrived; None for a missing, disabled or egress-only session (hardware
        makes no copy then)."""
        session = self.mirror_sessions.get(mirror.session_id)
        if session is None or not session.enabled or session.direction == "EGRESS":
            return None
        copy = data[: session.max_pkt_len] if session.max_pkt_len else data
        return session.egress_port, mirror.header + copy, session.queue

    def _run(self, port: int, data: bytes, outputs: list[Output], depth: int) -> None:
        ig = self.ingress_in_pipe(IngressIntrinsic(port, self.now_ns), data)
        # drop_ctl = 1 drops the packet, not its mirror copy.
        if ig.mirror is not None:
            made = self.ingress_mirror_copy(ig.mirror, data)
            if made is not None:
                self._enqueue(made[0], made[2], made[1], outputs, depth)
        # The traffic manager drops a packet for a device port no pipe has
        # (p4testgen's Tofino target: port 511 is its drop port).
        if ig.drop or not self.has_port(ig.egress_port):
            return
        self._enqueue(ig.egress_port, ig.qid, ig.data, outputs, depth)

    def _enqueue(self, port: int, qid: int, data: bytes, outputs: list[Output], depth: int) -> None:
        """The traffic manager: egress at once, or when the timeline says."""
        if self.tm is None:
            self._egress_and_out(port, qid, data, outputs, depth)
        else:
            self.tm.enqueue(port, qid, data, depth)

    def _egress_and_out(
        self,
        port: int,
        qid: int,
        data: bytes,
        outputs: list[Output],
        depth: int,
        deq_timedelta: int = 0,
    ) -> None:
        md = EgressIntrinsic(port, qid, deq_timedelta=deq_timedelta, global_tstamp_ns=self.now_ns)
        eg = self.egress_in_pipe(md, data)
        if not eg.drop:
            if port in self.profile.recirculation_ports:
                if depth >= MAX_RECIRCULATIONS:
                    raise P4ModelError(f"packet recirculated more than {MAX_RECIRCULATIONS} times")
                self._run(port, eg.data, outputs, depth + 1)
            else:
                outputs.append(Output(port, eg.data, qid))
        if eg.mirror is not None:
            session = self.mirror_sessions.get(eg.mirror.session_id)
            # Hardware silently makes no copy for a missing or disabled session.
            if session is not None and session.enabled and session.direction != "INGRESS":
                copy = eg.data
                if session.max_pkt_len:
                    copy = copy[: session.max_pkt_len]
                self._enqueue(
                    session.egress_port, session.queue, eg.mirror.header + copy, outputs, depth
                )
