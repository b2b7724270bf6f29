# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Reference model of tna/spie/spie.p4 (S-PIE and plain PIE), control by control.

Read it beside the P4: same tables (names, keys, actions, defaults), same
registers (widths), same order of decisions. tna/spie/README.md explains
the design (the PI step in egress, its state carried to ingress through the
recirculation port, the sketch's lazy epochs and Eq. 9 as a log test) and
lists every departure from seed 002.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import NamedTuple

from hw_profiles import HwProfile
from models import speedups

from .aqm_types import AqmBridged
from .common import (
    U32_MASK,
    Cursor,
    FeedbackTrust,
    IngressClockHook,
    Ipv4Forward,
    ParserError,
    SourceGuard,
    TimestampQueueHook,
    header_parser,
)
from .core import MEMO_KEYS, Action, Counter, KeyField, P4Objects, Register, Table
from .headers import (
    ETHERTYPE_TOFCC_FEEDBACK,
    FEEDBACK_VERSION,
    PKT_TYPE_BRIDGED,
    BridgedMd,
    Ethernet,
    Header,
    Headers,
    ParsedMd,
    QueueMd,
    bits,
    emit,
)
from .tna import (
    EgressIntrinsic,
    EgressMirror,
    EgressResult,
    IngressIntrinsic,
    IngressResult,
    TnaProgram,
)

SPIE_PORTS = 512
SPIE_SLOTS = 256
SPIE_SKETCH_COLUMNS = 4096
SPIE_LOG_ENTRIES = 512
SPIE_TERM_ENTRIES = 272
SPIE_MODE_NONE = 0
SPIE_MODE_PIE = 1
SPIE_MODE_SPIE = 2
# S-PIE with PIE's p for every packet while congested too (departure 12).
SPIE_MODE_SPIE_PIE = 3
FEEDBACK_TYPE_SPIE_STATE = 5
# bridged class_id of a packet that found its port idle (no fresh update).
SPIE_BRIDGED_IDLE = 1
PKT_TYPE_MIRROR_SPIE = 5
# A counter less than this above its epoch's start is this epoch's: no more
# than the cap needs (SPIE_EPOCH_WINDOW).
EPOCH_WINDOW = 1 << 16
# A count stops at this (2^16 - 1 < 2^k for every epoch k >= 16): it can
# never reach the next epoch's start, so no earlier epoch reads as current.
SPIE_COUNT_CAP = 0xFFFF
# The second pass of a resubmitted packet runs this long after its first:
# the ingress pipeline's latency plus the way back to its parser. The chip
# publishes no figure; about a microsecond is its order, and what matters is
# that packets arriving meanwhile see the first pass's count.
RESUBMIT_DELAY_NS = 1000
SIGN_32 = 0x80000000
U16_MASK = 0xFFFF
RANDOM_31_MASK = 0x7FFFFFFF
# sketch_config's default action data: T_threshold = 2^24 ticks, 4096
# columns, every packet counted, a large flow's packet always dropped.
DEFAULT_EPOCH_MASK = 0xFF000000
DEFAULT_COLUMN_MASK = 0x0FFF
DEFAULT_SAMPLE_MASK = 0
DEFAULT_LARGE_DROP = 0x80000000
# log_res's and log_count's default: m_before = 0 (the flow's first packet
# this epoch) or m_count_before < 2 is never large (-1024 as 16 bits).
LOG_NEVER = 0xFC00
# The three rows' CRC-16 polynomials (reflected in and out, init 0, no xor),
# as the shift-right register uses them: 0x8005, 0x1021, 0x3D65 bit-reversed.
ROW_POLYNOMIALS_REFLECTED = (0xA001, 0x8408, 0xA6BC)


def crc16_reflected(data: bytes, poly_reflected: int) -> int:
    """CRCPolynomial<bit<16>>(poly, reversed=true, msb=false, extended=false,
    init=0, xor=0), as bf-utils computes it: bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly_reflected if crc & 1 else crc >> 1
    return crc


def _crc_table(poly_reflected: int) -> tuple[int, ...]:
    return tuple(crc16_reflected(bytes([b]), poly_reflected) for b in range(256))


# The same CRCs a byte at a time (every packet hashes three times; the
# evaluation runs millions): tests/test_spie_model.py holds both to one value.
_CRC_TABLES = tuple(_crc_table(p) for p in ROW_POLYNOMIALS_REFLECTED)


def crc16_table(data: bytes, table: tuple[int, ...]) -> int:
    crc = 0
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


def flow_key(hdr: Headers, parsed: ParsedMd) -> bytes:
    """The hashed fields in order, each MSB first: {src, dst, protocol,
    l4 source port, l4 destination port}."""
    return (
        hdr.ipv4.src_addr.to_bytes(4, "big")
        + hdr.ipv4.dst_addr.to_bytes(4, "big")
        + hdr.ipv4.protocol.to_bytes(1, "big")
        + parsed.l4_src_port.to_bytes(2, "big")
        + parsed.l4_dst_port.to_bytes(2, "big")
    )


def row_hashes(key: bytes) -> tuple[int, int, int]:
    if speedups.ENABLED and type(key) is bytes:
        # A run has few flows and hashes each one's key on every packet
        # (issue 48: three CRC loops per packet); a CRC depends on the key
        # alone.
        found = _ROW_HASHES.get(key)
        if found is None:
            found = _row_hashes(key)
            if len(_ROW_HASHES) < MEMO_KEYS:
                _ROW_HASHES[key] = found
        return found
    return _row_hashes(key)


def _row_hashes(key: bytes) -> tuple[int, int, int]:
    t0, t1, t2 = _CRC_TABLES
    return crc16_table(key, t0), crc16_table(key, t1), crc16_table(key, t2)


_ROW_HASHES: dict[bytes, tuple[int, int, int]] = {}


def before(t_ticks: int, deadline_ticks: int) -> bool:
    """`deadline - t < 0x80000000` fails: t is after the deadline."""
    return (deadline_ticks - t_ticks) & U32_MASK >= SIGN_32


def to_signed32(value: int) -> int:
    value &= U32_MASK
    return value - (1 << 32) if value & SIGN_32 else value


@dataclass
class SpieMirror(Header):
    pkt_type: int = bits(8)
    slot: int = bits(8)
    congested: int = bits(8)
    reserved: int = bits(8)
    prob: int = bits(32)
    now_ticks: int = bits(32)


@dataclass
class SpieHeaders(Headers):
    """`struct headers_t` with the instances S-PIE makes valid."""

    aqm_bridged: AqmBridged = field(default_factory=AqmBridged)
    spie_mirror: SpieMirror = field(default_factory=SpieMirror)


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False
    now_ticks: int = 0
    mode: int = SPIE_MODE_NONE
    slot: int = 0
    column_mask: int = 0
    stale_before_ticks: int = 0
    epoch_mask: int = 0
    epoch_base: int = 0
    sample_mask: int = 0
    sample_bits: int = 0
    hash0: int = 0
    hash1: int = 0
    hash2: int = 0
    row0: int = 0
    row1: int = 0
    row2: int = 0
    row01: int = 0
    m_before: int = 0
    m_count_before: int = 0
    sumsq: int = 0
    log_count: int = 0
    log_threshold: int = 0
    large_margin: int = 0
    fresh: int = 0
    congested: int = 0
    prob: int = 0
    random: int = 0
    prob_margin: int = 0
    large_drop: int = 0
    large_drop_margin: int = 0


@dataclass
class EgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    queue: QueueMd = field(default_factory=QueueMd)
    active: int = 0
    slot: int = 0
    session: int = 0
    del_ref_ns_shr10: int = 0
    congested_from_ns_shr10: int = 0
    due_before_ticks: int = 0
    del_cur_ns_shr10: int = 0
    del_old_ns_shr10: int = 0
    sojourn_ticks: int = 0
    step_ticks: int = 0
    tick: int = 0
    d_ref: int = 0
    d_old: int = 0
    congested_margin: int = 0
    terms: dict[str, tuple[int, int]] = field(default_factory=dict)
    delta: int = 0
    minus_delta: int = 0
    prob: int = 0
    report: bool = False
    mirror_congested: int = 0


class UndoDigest(NamedTuple):
    """spie_undo_h: what the first pass added to S and its epoch's start."""

    sum_added: int
    epoch_base: int


@dataclass
class PendingPass:
    """A resubmitted packet on its way back to the parser."""

    due_ns: int
    pipe: int
    ingress_port: int
    data: bytes
    digest: UndoDigest


class IngressRandomHook:
    """control IngressRandomHook of spie.p4: 31 bits, pinned per ingress port."""

    def __init__(self, p4: P4Objects, path: str, seed: int = 0) -> None:
        self.inject = Action(f"{path}.inject", (("random_value", 32),))
        self.random_override = p4.table(
            Table(
                f"{path}.random_override",
                [KeyField("ig_intr_md.ingress_port", 9, "exact")],
                [self.inject, Action("NoAction")],
                ("NoAction", {}),
                size=512,
            )
        )
        self.rng = random.Random(seed)

    def apply(self, ig_intr_md: IngressIntrinsic) -> int:
        # The P4 draws 31 bits (Random<bit<31>>); the low 31 of 32 are as
        # uniform, and keep the evaluation's streams what they were.
        value = self.rng.getrandbits(32) & RANDOM_31_MASK
        r = self.random_override.lookup({"ig_intr_md.ingress_port": ig_intr_md.ingress_port})
        if r.action == self.inject.name:
            value = r.data["random_value"] & RANDOM_31_MASK
        return value


def log_table(p4: P4Objects, name: str, key: str, action: Action, default: int) -> Table:
    return p4.table(
        Table(
            name,
            [KeyField(key, 32, "ternary")],
            [action],
            (action.name, {"log16": default}),
            size=SPIE_LOG_ENTRIES,
        )
    )


class Spie(TnaProgram):
    name = "spie"

    def __init__(self, profile: HwProfile) -> None:
        super().__init__(profile)
        p4 = self.p4

        # Resubmitted packets whose second pass is still to come.
        self._pending: list[PendingPass] = []

        # ---- SwitchIngress ------------------------------------------
        ig = "SwitchIngress"
        self.trust = FeedbackTrust(p4, f"{ig}.trust")
        self.source_guard = SourceGuard(p4, f"{ig}.source_guard")
        self.forward = Ipv4Forward(p4, f"{ig}.forward")
        self.clock = IngressClockHook(p4, f"{ig}.clock")
        self.random_hook = IngressRandomHook(p4, f"{ig}.random_hook")
        self.large_flow_drops = p4.counter(Counter(f"{ig}.large_flow_drops", SPIE_PORTS, "packets"))
        self.random_drops = p4.counter(Counter(f"{ig}.random_drops", SPIE_PORTS, "packets"))
        self.rejected_updates = p4.counter(Counter(f"{ig}.rejected_updates", SPIE_PORTS, "packets"))
        self.prob = p4.register(Register(f"{ig}.prob", 32, SPIE_SLOTS))
        self.state = p4.register(Register(f"{ig}.state", 32, SPIE_SLOTS))
        self.congested = p4.register(Register(f"{ig}.congested", 32, SPIE_SLOTS))
        self.accept_update = Action(f"{ig}.accept_update", (("next_port", 9),))
        self.refuse_update = Action(f"{ig}.refuse_update")
        self.update_ports = p4.table(
            Table(
                f"{ig}.update_ports",
                [KeyField("ig_intr_md.ingress_port", 9, "exact")],
                [self.accept_update, self.refuse_update],
                (self.refuse_update.name, {}),
                size=16,
            )
        )
        self.set_spie = Action(
            f"{ig}.set_spie", (("slot", 8), ("mode", 2), ("minus_stale_ticks", 32))
        )
        self.no_spie = Action(f"{ig}.no_spie")
        self.spie_port = p4.table(
            Table(
                f"{ig}.spie_port",
                [KeyField("ig_tm_md.ucast_egress_port", 9, "exact")],
                [self.set_spie, self.no_spie],
                (self.no_spie.name, {}),
                size=SPIE_SLOTS,
            )
        )
        self.set_sketch = Action(
            f"{ig}.set_sketch",
            (("epoch_mask", 32), ("column_mask", 16), ("sample_mask", 32), ("large_drop", 32)),
        )
        self.sketch_config = p4.table(
            Table(
                f"{ig}.sketch_config",
                [],
                [self.set_sketch],
                (
                    self.set_sketch.name,
                    {
                        "epoch_mask": DEFAULT_EPOCH_MASK,
                        "column_mask": DEFAULT_COLUMN_MASK,
                        "sample_mask": DEFAULT_SAMPLE_MASK,
                        "large_drop": DEFAULT_LARGE_DROP,
                    },
                ),
                size=1,
            )
        )
        self.rows = [
            p4.register(Register(f"{ig}.sketch_row{i}", 32, SPIE_SKETCH_COLUMNS)) for i in range(3)
        ]
        self.m_count = p4.register(Register(f"{ig}.m_count", 32, SPIE_SLOTS))
        self.sumsq = p4.register(Register(f"{ig}.sumsq", 32, SPIE_SLOTS))
        self.set_log_res = Action(f"{ig}.set_log_res", (("log16", 16),))
        self.set_log_count = Action(f"{ig}.set_log_count", (("log16", 16),))
        self.set_log_sumsq = Action(f"{ig}.set_log_sumsq", (("log16", 16),))
        self.log_res = log_table(p4, f"{ig}.log_res", "ig_md.m_before", self.set_log_res, LOG_NEVER)
        self.log_count = log_table(
            p4, f"{ig}.log_count", "ig_md.m_count_before", self.set_log_count, LOG_NEVER
        )
        self.log_sumsq = log_table(p4, f"{ig}.log_sumsq", "ig_md.sumsq", self.set_log_sumsq, 0)

        # ---- SwitchEgress -------------------------------------------
        eg = "SwitchEgress"
        self.queue_hook = TimestampQueueHook(p4, f"{eg}.queue_hook", profile.chip == "tofino2")
        self.pi_updates = p4.counter(Counter(f"{eg}.pi_updates", SPIE_PORTS, "packets"))
        self.last_update_ticks = p4.register(Register(f"{eg}.last_update_ticks", 32, SPIE_SLOTS))
        self.del_old = p4.register(Register(f"{eg}.del_old", 32, SPIE_SLOTS))
        self.pi_prob = p4.register(Register(f"{eg}.pi_prob", 32, SPIE_SLOTS))
        self.set_pi = Action(
            f"{eg}.set_pi",
            (
                ("slot", 8),
                ("session", profile.mirror_session_max.bit_length()),
                ("del_ref_ns_shr10", 32),
                ("congested_from_ns_shr10", 32),
                ("minus_t_update_ticks", 32),
            ),
        )
        self.no_pi = Action(f"{eg}.no_pi")
        self.pi_port = p4.table(
            Table(
                f"{eg}.pi_port",
                [KeyField("eg_intr_md.egress_port", 9, "exact")],
                [self.set_pi, self.no_pi],
                (self.no_pi.name, {}),
                size=SPIE_SLOTS,
            )
        )
        self.term_tables: dict[str, tuple[Table, Action, str]] = {}
        for name, key in (
            ("alpha_hi", "eg_md.d_ref"),
            ("alpha_lo", "eg_md.d_ref"),
            ("beta_hi", "eg_md.d_old"),
            ("beta_lo", "eg_md.d_old"),
        ):
            action = Action(f"{eg}.set_{name}", (("term", 32), ("minus_term", 32)))
            table = p4.table(
                Table(
                    f"{eg}.{name}",
                    [KeyField(key, 32, "ternary")],
                    [action],
                    (action.name, {"term": 0, "minus_term": 0}),
                    size=SPIE_TERM_ENTRIES,
                )
            )
            self.term_tables[name] = (table, action, key)

    # ---- ingress register actions (one per register per packet) ----
    def tagged_insert(self, reg: Register, index: int, epoch_base: int, counted: bool) -> int:
        """SPIE_TAGGED_INSERT / m_count_insert (counted) or SPIE_TAGGED_READ /
        m_count_read: the count before this packet."""
        c = reg.read(index)
        d = (c - epoch_base) & U32_MASK
        if d >= EPOCH_WINDOW:
            reg.write(index, (epoch_base + 1) & U32_MASK)
            return 0
        if counted and d < SPIE_COUNT_CAP:
            reg.write(index, (c + 1) & U32_MASK)
        return d

    def tagged_undo(self, reg: Register, index: int, undo_base: int) -> int:
        """SPIE_TAGGED_UNDO / m_count_undo: a counted packet that was dropped
        is taken back out of its first pass's epoch (`undo_base`, the
        digest's); another epoch's counter, or one at the cap, is left
        alone. Returns the count as the undo found it."""
        c = reg.read(index)
        d = (c - undo_base) & U32_MASK
        if d < SPIE_COUNT_CAP:
            reg.write(index, (c - 1) & U32_MASK)
        return d

    def sumsq_add(self, slot: int, md: IgMd, counted: bool) -> int:
        """sumsq_add (saturating; only while m_count counts) or sumsq_read:
        S before this packet."""
        before = self.sumsq.read(slot)
        if md.m_count_before == 0:
            self.sumsq.write(slot, md.row0 if counted else 0)
        elif counted and md.m_count_before < SPIE_COUNT_CAP:
            self.sumsq.write(slot, min(before + md.row0, U32_MASK))
        return before

    def sumsq_undo(self, slot: int, md: IgMd) -> None:
        """Less what the first pass added, when m_count's undo took its count
        out (m_count_before: what m_count_undo found)."""
        if md.m_count_before < SPIE_COUNT_CAP:
            self.sumsq.write(slot, max(self.sumsq.read(slot) - md.row0, 0))

    def state_read(self, slot: int, md: IgMd) -> int:
        s = self.state.read(slot)
        return 0 if (md.stale_before_ticks - s) & U32_MASK < SIGN_32 else 1

    def congested_read(self, slot: int, md: IgMd) -> int:
        c = self.congested.read(slot)
        if c == 0:
            return 0
        return 0 if (md.stale_before_ticks - c) & U32_MASK < SIGN_32 else 1

    # ---- ingress ----------------------------------------------------
    def ingress(self, ig_intr_md: IngressIntrinsic, data: bytes) -> IngressResult:
        """A counted packet of an S-PIE port that is dropped is resubmitted
        (undo_large / undo_random) and its second pass, with the digest,
        takes its count back out: the counts are of admitted packets. The
        second pass comes RESUBMIT_DELAY_NS later, as on the chip: packets
        arriving meanwhile see the first pass's count."""
        # The clock is read only when a pass is due or made (issue 48: most
        # packets find none waiting and resubmit none); reading it is a
        # lookup, which nothing in the pass changes.
        if self._pending or not speedups.ENABLED:
            self.run_resubmitted(self.clock_ns(ig_intr_md))
        result, digest = self.ingress_pass(ig_intr_md, data, None)
        if digest is not None:
            self._pending.append(
                PendingPass(
                    self.clock_ns(ig_intr_md) + RESUBMIT_DELAY_NS,
                    self.active_pipe,
                    ig_intr_md.ingress_port,
                    data,
                    digest,
                )
            )
        return result

    def clock_ns(self, ig_intr_md: IngressIntrinsic) -> int:
        """The time the ingress clock reads for this packet (a test's pinned
        time, through IngressClockHook's table, or the MAC timestamp): the
        second pass's due time is on the clock the program sees."""
        r = self.clock.ingress_tstamp_override.lookup(
            {"ig_intr_md.ingress_port": ig_intr_md.ingress_port}
        )
        if r.action == self.clock.inject.name:
            return int(r.data["tstamp_ns"])
        return ig_intr_md.ingress_mac_tstamp_ns

    def run_resubmitted(self, until_ns: int | None = None) -> None:
        """The second passes due by `until_ns` (None: every one), in the
        order they were resubmitted, each in its packet's pipe."""
        due = [u for u in self._pending if until_ns is None or u.due_ns <= until_ns]
        if not due:
            return
        self._pending = [u for u in self._pending if u not in due]
        pipe = self.active_pipe
        for u in due:
            self.select_pipe(u.pipe)
            self.ingress_pass(IngressIntrinsic(u.ingress_port, u.due_ns), u.data, u.digest)
        self.select_pipe(pipe)

    # A control-plane read or write comes long after any packet's second
    # pass: it sees them all done.
    def register(self, name: str) -> Register:
        self.run_resubmitted()
        return super().register(name)

    def counter(self, name: str) -> Counter:
        self.run_resubmitted()
        return super().counter(name)

    def reset(self) -> None:
        self._pending = []
        super().reset()

    def ingress_pass(
        self, ig_intr_md: IngressIntrinsic, data: bytes, digest: UndoDigest | None
    ) -> tuple[IngressResult, UndoDigest | None]:
        """One pass of SwitchIngress: the first (digest None) or the second of
        a resubmitted packet (with the first's digest). Returns the result
        and, if the packet is resubmitted, its digest."""
        core = self.native_core()
        if core is not None:
            done: tuple[IngressResult, UndoDigest | None] | None = core.ingress(
                core.binding, ig_intr_md, data, digest
            )
            if done is not None:
                return done
        resubmitted = digest is not None
        hdr = SpieHeaders()
        md = IgMd()
        pkt = Cursor(data)
        try:
            header_parser(pkt, hdr, md.parsed)
        except ParserError:
            return IngressResult(drop=True), None  # TNA drops on a parser error

        in_port = ig_intr_md.ingress_port
        hdr.bridged.set_valid()
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED
        hdr.bridged.class_id = 0
        hdr.bridged.ingress_port = in_port
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr
        md.now_ticks = self.clock.apply(ig_intr_md)
        hdr.aqm_bridged.set_valid()
        hdr.aqm_bridged.now_ticks = md.now_ticks
        hdr.aqm_bridged.arrival_ns = ig_intr_md.ingress_mac_tstamp_ns & U32_MASK
        cfg = self.sketch_config.lookup({}).data
        md.epoch_mask, md.column_mask = cfg["epoch_mask"], cfg["column_mask"]
        md.sample_mask = cfg["sample_mask"]
        md.large_drop = cfg["large_drop"]
        md.hash0, md.hash1, md.hash2 = row_hashes(flow_key(hdr, md.parsed))
        md.epoch_base = hdr.aqm_bridged.now_ticks & md.epoch_mask
        md.hash0 &= md.column_mask
        md.hash1 &= md.column_mask
        md.hash2 &= md.column_mask
        # The second pass reads no random value (the P4 draws one and uses
        # none of it); the model keeps one draw per arrival.
        md.random = 0 if resubmitted else self.random_hook.apply(ig_intr_md)
        md.sample_bits = md.random & md.sample_mask
        counted = md.sample_bits == 0

        md.forged = self.trust.apply(hdr, in_port, len(data))
        md.spoofed = self.source_guard.apply(hdr, in_port, len(data))
        md.mode = SPIE_MODE_NONE
        update = self.update_ports.lookup({"ig_intr_md.ingress_port": in_port})
        update_port = update.action == self.accept_update.name
        next_update_port = update.data["next_port"] if update_port else 0
        drop = False
        egress_port = 0
        if md.forged:
            drop = True
        elif hdr.feedback.is_valid() and hdr.feedback.msg_type == FEEDBACK_TYPE_SPIE_STATE:
            slot = hdr.feedback.class_id & 0xFF
            if update_port:
                self.prob.write(slot, hdr.feedback.rate)
                self.state.write(slot, hdr.feedback.target_rate)
                self.congested.write(
                    slot, hdr.feedback.target_rate if hdr.feedback.degree == 1 else 0
                )
                # The ring round the pipes: on to the next pipe's recirculation
                # port until that is where the update started (pass_update).
                if next_update_port == hdr.feedback.flow_src_port & 0x1FF:
                    drop = True  # drop_update()
                else:
                    egress_port = next_update_port
            else:
                drop = True  # reject_update()
                self.rejected_updates.count(in_port, len(data))
        elif md.spoofed:
            drop = True
        else:
            drop, egress_port = self.forward.apply(hdr)
            r = self.spie_port.lookup({"ig_tm_md.ucast_egress_port": egress_port})
            if r.action == self.set_spie.name:
                md.slot = r.data["slot"]
                md.mode = r.data["mode"]
                md.stale_before_ticks = (
                    hdr.aqm_bridged.now_ticks + r.data["minus_stale_ticks"]
                ) & U32_MASK

        if digest is not None:
            for reg, column in zip(self.rows, (md.hash0, md.hash1, md.hash2), strict=True):
                self.tagged_undo(reg, column, digest.epoch_base)
            md.row0 = digest.sum_added  # undo_amount()
        elif not md.forged and not md.spoofed and hdr.ipv4.is_valid():
            md.row0 = self.tagged_insert(self.rows[0], md.hash0, md.epoch_base, counted)
            md.row1 = self.tagged_insert(self.rows[1], md.hash1, md.epoch_base, counted)
            md.row2 = self.tagged_insert(self.rows[2], md.hash2, md.epoch_base, counted)
        if md.mode != SPIE_MODE_NONE:
            md.prob = self.prob.read(md.slot)
            md.fresh = self.state_read(md.slot, md)
            md.congested = self.congested_read(md.slot, md)
            if md.fresh == 0:
                hdr.bridged.class_id = SPIE_BRIDGED_IDLE  # mark_idle()
            if digest is not None:
                md.m_count_before = self.tagged_undo(self.m_count, md.slot, digest.epoch_base)
                self.sumsq_undo(md.slot, md)
            else:
                md.m_count_before = self.tagged_insert(
                    self.m_count, md.slot, md.epoch_base, counted
                )
                md.sumsq = self.sumsq_add(md.slot, md, counted)
        md.prob_margin = (md.random - md.prob) & U32_MASK
        md.large_drop_margin = (md.random - md.large_drop) & U32_MASK
        md.row01 = min(md.row0, md.row1)
        md.m_before = min(md.row01, md.row2)
        # Algorithm 2: congested, a large flow's packet is dropped (with
        # probability large_drop: README departure 13) and, in
        # S-PIE mode, any other admitted; not congested, PIE's p (SPIE_PIE:
        # p while congested too). A counted packet of a port in a sketch
        # mode that is dropped is resubmitted to be uncounted.
        sketch_mode = md.mode >> 1 == 1
        spie_congested = sketch_mode and md.congested == 1
        if spie_congested and not resubmitted:
            # The P4 looks the logs up for every packet; only this branch
            # reads them (the evaluation runs millions of packets).
            self.large_test(md)
        undo = UndoDigest(md.row0, md.epoch_base) if sketch_mode and counted else None
        if resubmitted:
            drop = True  # drop_undone()
        elif spie_congested and md.large_margin >> 15 == 0 and md.large_drop_margin >> 31 == 1:
            self.large_flow_drops.count(egress_port, len(data))
            if undo is not None:
                return IngressResult(drop=True), undo  # undo_large()
            drop = True
        elif md.mode == SPIE_MODE_SPIE and md.congested == 1:
            pass  # a small flow while congested: admitted
        elif md.mode != SPIE_MODE_NONE and md.fresh == 1 and md.prob_margin >> 31 == 1:
            self.random_drops.count(egress_port, len(data))
            if undo is not None:
                return IngressResult(drop=True), undo  # undo_random()
            drop = True
        if drop:
            return IngressResult(drop=True), None
        out = emit(
            hdr.bridged, hdr.aqm_bridged, hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback
        )
        return IngressResult(drop=False, egress_port=egress_port, data=out + pkt.payload), None

    def large_test(self, md: IgMd) -> None:
        """log_count, then log_sumsq's and log_res's actions, each taking its
        difference: log 2S (plus the margin) - log m_count, then log m_before
        - that; not negative (bit 15 clear) <=> large."""
        md.log_count = self.log_count.lookup({"ig_md.m_count_before": md.m_count_before}).data[
            "log16"
        ]
        log_sumsq = self.log_sumsq.lookup({"ig_md.sumsq": md.sumsq}).data["log16"]
        md.log_threshold = (log_sumsq - md.log_count) & U16_MASK
        log_res = self.log_res.lookup({"ig_md.m_before": md.m_before}).data["log16"]
        md.large_margin = (log_res - md.log_threshold) & U16_MASK

    # ---- egress register actions ------------------------------------
    def tick_check(self, slot: int, md: EgMd, now_ticks: int) -> int:
        last = self.last_update_ticks.read(slot)
        if (md.due_before_ticks - last) & U32_MASK < SIGN_32:
            self.last_update_ticks.write(slot, now_ticks)
            return 1
        return 0

    def del_old_swap(self, slot: int, md: EgMd) -> int:
        previous = self.del_old.read(slot)
        self.del_old.write(slot, md.del_cur_ns_shr10)
        return previous

    def prob_step(self, slot: int, md: EgMd, idle: bool) -> int:
        """prob_down (p |-| -delta) or prob_up (p |+| delta): saturating;
        after an idle spell prob_restart_down (0) or prob_restart_up (delta)."""
        p = 0 if idle else self.pi_prob.read(slot)
        p = max(p - md.minus_delta, 0) if md.delta >> 31 == 1 else min(p + md.delta, U32_MASK)
        self.pi_prob.write(slot, p)
        return p

    def pi_terms(self, md: EgMd) -> None:
        """alpha_hi/lo, beta_hi/lo, sum_terms(), sum_delta()."""
        for name, (table, _action, key) in self.term_tables.items():
            value = md.d_ref if key == "eg_md.d_ref" else md.d_old
            d = table.lookup({key: value}).data
            md.terms[name] = (d["term"], d["minus_term"])
        t = md.terms
        alpha_term = (t["alpha_hi"][0] + t["alpha_lo"][0]) & U32_MASK
        beta_term = (t["beta_hi"][0] + t["beta_lo"][0]) & U32_MASK
        minus_alpha = (t["alpha_hi"][1] + t["alpha_lo"][1]) & U32_MASK
        minus_beta = (t["beta_hi"][1] + t["beta_lo"][1]) & U32_MASK
        md.delta = (alpha_term + beta_term) & U32_MASK
        md.minus_delta = (minus_alpha + minus_beta) & U32_MASK

    # ---- egress -----------------------------------------------------
    def egress(self, eg_intr_md: EgressIntrinsic, data: bytes) -> EgressResult:
        core = self.native_core()
        if core is not None:
            done: EgressResult | None = core.egress(core.binding, eg_intr_md, data)
            if done is not None:
                return done
        hdr = SpieHeaders()
        md = EgMd()
        pkt = Cursor(data)
        if pkt.lookahead_byte() == PKT_TYPE_MIRROR_SPIE:
            hdr.spie_mirror = pkt.extract(SpieMirror)
            hdr.ethernet = pkt.extract(Ethernet)
        else:
            hdr.bridged = pkt.extract(BridgedMd)
            hdr.aqm_bridged = pkt.extract(AqmBridged)
            header_parser(pkt, hdr, md.parsed)

        if hdr.spie_mirror.is_valid():
            self.build_update(hdr, eg_intr_md.egress_port)
        elif hdr.ipv4.is_valid() and not hdr.feedback.is_valid():
            md.queue = self.queue_hook.apply(eg_intr_md, hdr.aqm_bridged.arrival_ns)
            r = self.pi_port.lookup({"eg_intr_md.egress_port": eg_intr_md.egress_port})
            if r.action == self.set_pi.name:
                md.active = 1
                md.slot = r.data["slot"]
                md.session = r.data["session"]
                md.del_ref_ns_shr10 = r.data["del_ref_ns_shr10"]
                md.congested_from_ns_shr10 = r.data["congested_from_ns_shr10"]
                md.due_before_ticks = (
                    hdr.aqm_bridged.now_ticks + r.data["minus_t_update_ticks"]
                ) & U32_MASK
        if md.active == 1:
            md.tick = self.tick_check(md.slot, md, hdr.aqm_bridged.now_ticks)
        md.del_cur_ns_shr10 = md.queue.sojourn_ns >> 10
        # The step's time is its departure's, not its arrival's (spie.p4
        # differences()).
        md.sojourn_ticks = md.queue.sojourn_ns >> 6
        md.step_ticks = (hdr.aqm_bridged.now_ticks + md.sojourn_ticks) & U32_MASK
        if md.tick == 1:
            md.del_old_ns_shr10 = self.del_old_swap(md.slot, md)
        md.d_ref = (md.del_cur_ns_shr10 - md.del_ref_ns_shr10) & U32_MASK
        md.d_old = (md.del_cur_ns_shr10 - md.del_old_ns_shr10) & U32_MASK
        md.congested_margin = (md.del_cur_ns_shr10 - md.congested_from_ns_shr10) & U32_MASK
        if md.tick == 1:
            # The P4 looks the terms up for every packet; only a step reads them.
            self.pi_terms(md)
            md.prob = self.prob_step(md.slot, md, hdr.bridged.class_id == SPIE_BRIDGED_IDLE)
            md.report = True
            md.mirror_congested = 0 if md.congested_margin >> 31 == 1 else 1
            self.pi_updates.count(eg_intr_md.egress_port, len(data))

        # ---- SwitchEgressDeparser ----
        mirror = None
        if md.report:
            header = SpieMirror(
                PKT_TYPE_MIRROR_SPIE,
                md.slot,
                md.mirror_congested,
                0,
                md.prob,
                md.step_ticks,
            )
            header.set_valid()
            mirror = EgressMirror(md.session, header.pack())
        if hdr.ipv4.is_valid():
            hdr.ipv4.hdr_checksum = hdr.ipv4.checksum()
        out = emit(hdr.ethernet, hdr.ipv4, hdr.tcp, hdr.udp, hdr.feedback)
        return EgressResult(drop=False, data=out + pkt.payload, mirror=mirror)

    def build_update(self, hdr: SpieHeaders, egress_port: int) -> None:
        """A PI step's copy becomes the state update ingress accepts on a
        recirculation port; the port it leaves by starts the ring."""
        hdr.ethernet.dst_addr = 0
        hdr.ethernet.src_addr = 0
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FEEDBACK
        fb = hdr.feedback
        fb.set_valid()
        fb.version = FEEDBACK_VERSION
        fb.msg_type = FEEDBACK_TYPE_SPIE_STATE
        fb.class_id = hdr.spie_mirror.slot
        fb.queue_id = 0
        fb.degree = hdr.spie_mirror.congested
        fb.flow_protocol = 0
        fb.flow_src_port = egress_port
        fb.rate = hdr.spie_mirror.prob >> 1
        fb.target_rate = hdr.spie_mirror.now_ticks  # the step's time
        hdr.spie_mirror.set_invalid()
