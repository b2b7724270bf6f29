# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Width audit: every register, counter and accumulating metadata field of
every program in tna/ (those tofcc_common/registry.py names), how wide the
P4 declares it, what it counts, and how long it takes to overflow at the
chip's worst case.

The worst case is the fastest port's line rate from hw_profiles/
(`max_port_gbps`: 100 Gb/s on Tofino, 400 Gb/s on Tofino2) in
minimum-size frames (84 bytes on the wire), or all ports into one
(`capacity_gbps`) where arrivals from several ports reach the same state.
Each entry is classified:

- cannot overflow: bounded by construction, or its time to overflow is
  longer than the interval over which it is used (its epoch);
- by design: it saturates (or, for a clock compared as a difference, wraps)
  and the consequence is stated;
- defect: it can overflow within its epoch; the note says who fixes it.

Widths are read from the P4 source through models/switch/p4_source.py, the
reader tests/test_p4_model_parity.py holds the models to the P4 with (for
each chip: comments stripped, typedefs resolved, sub-controls and included
files followed), so `tests/test_width_audit.py` fails
when a declaration changes without this table, when a register or counter
is missing from it, and when the table in tna/README.md (between the
markers) differs from what this script prints.

    python scripts/width_audit.py            # print the table
    python scripts/width_audit.py --check    # exit 1 if tna/README.md differs
    python scripts/width_audit.py --write    # rewrite tna/README.md's table
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hw_profiles import HwProfile, load_profile  # noqa: E402
from models.switch.p4_source import P4Program, read_program  # noqa: E402
from tofcc_common.registry import PROGRAMS as REGISTRY  # noqa: E402

TNA = ROOT / "tna"
README = TNA / "README.md"
BEGIN = "<!-- width-audit:begin (scripts/width_audit.py --write) -->"
END = "<!-- width-audit:end -->"
PROGRAMS = tuple(sorted(REGISTRY))
CHIPS = ("tofino", "tofino2")
MIN_WIRE_BYTES = 84  # 64-byte frame + 8 preamble + 12 inter-frame gap
TICK_NS = 64  # the ingress clock's unit (IngressClockHook)

CANNOT = "cannot overflow"
BY_DESIGN = "by design"
DEFECT = "defect"
CLASSES = (CANNOT, BY_DESIGN, DEFECT)


# ---- growth models ---------------------------------------------------------


@dataclass(frozen=True)
class PerPacket:
    """Grows by up to `step` per packet (packets, or another unit per
    packet); `fan_in`: the packets of one port ("port") or of all ports into
    one ("all")."""

    step: float = 1.0
    fan_in: str = "port"
    unit: str = "packet"


@dataclass(frozen=True)
class PerByte:
    fan_in: str = "port"


@dataclass(frozen=True)
class Clock:
    """A timestamp in units of `unit_ns`: wraps every 2^W units."""

    unit_ns: float


@dataclass(frozen=True)
class Bounded:
    """Never beyond `max_value` whatever the rate."""

    max_value: int
    why: str


Growth = PerPacket | PerByte | Clock | Bounded


@dataclass(frozen=True)
class Entry:
    program: str  # a directory of tna/, or "include" for tna/include/
    name: str  # register/counter name, or struct.field for metadata
    kind: str  # register | counter | metadata
    width: str  # as declared: "32", or "16+16" for a pair
    counts: str
    growth: Growth
    epoch_s: float | None  # how long it must hold; None: forever
    epoch: str  # what the epoch is
    cls: str
    note: str


def pps(gbps: float) -> float:
    return gbps * 1e9 / (MIN_WIRE_BYTES * 8)


def fan_gbps(profile: HwProfile, fan_in: str) -> float:
    return float(profile.capacity_gbps if fan_in == "all" else profile.max_port_gbps)


def value_bits(width: str) -> int:
    """The accumulating part of a pair is its widest half."""
    return max(int(w) for w in width.split("+"))


def overflow_s(e: Entry, profile: HwProfile) -> float:
    """Seconds from zero to 2^W at the chip's worst case (inf: never)."""
    top = float(1 << value_bits(e.width))
    g = e.growth
    if isinstance(g, Bounded):
        return math.inf if g.max_value < top else 0.0
    if isinstance(g, Clock):
        return top * g.unit_ns * 1e-9
    if isinstance(g, PerByte):
        return top / (fan_gbps(profile, g.fan_in) * 1e9 / 8)
    return top / (g.step * pps(fan_gbps(profile, g.fan_in)))


def fmt_s(s: float) -> str:
    if math.isinf(s):
        return "never"
    for unit, scale in (("d", 86400.0), ("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}"
    return f"{s:.3g} s"


def fmt_growth(g: Growth) -> str:
    if isinstance(g, Bounded):
        return f"at most {g.max_value:,} ({g.why})"
    if isinstance(g, Clock):
        return f"clock, {g.unit_ns:g} ns units"
    if isinstance(g, PerByte):
        return "bytes" + (", all ports into one" if g.fan_in == "all" else "")
    step = "1" if g.step == 1 else f"{g.step:,.0f}"
    where = ", all ports into one" if g.fan_in == "all" else ""
    return f"{step} {g.unit} per packet{where}"


# ---- the audit --------------------------------------------------------------

_COUNTER_NOTE = (
    "statistics for the controller, no decision reads it; BF-RT reads 64-bit "
    "software copies the driver keeps synced from the chip (narrow hardware "
    "counters are evicted to them before they wrap), and 2^64 at this rate is "
    "centuries. Verify the sync on hardware."
)
_TICKS_NOTE = (
    "compared only as the sign of a 32-bit difference, over intervals far below 2^31 ticks (137 s)"
)
_BUF_DRAIN_NS_TOFINO = 286720 * 80 * 8 / 100  # the whole buffer at 100 Gb/s, ns


def _counters(program: str, names: tuple[str, ...], what: str, fan_in: str = "port") -> list[Entry]:
    return [
        Entry(
            program,
            n,
            "counter",
            "32",
            what.format(name=n.replace("_", " ")),
            PerPacket(1, fan_in),
            None,
            "read by the controller",
            CANNOT,
            _COUNTER_NOTE,
        )
        for n in names
    ]


def _ticks(program: str, name: str, kind: str, what: str, longest_s: float, note: str) -> Entry:
    return Entry(
        program,
        name,
        kind,
        "32",
        what,
        Clock(TICK_NS),
        longest_s,
        "longest interval compared",
        CANNOT,
        note or _TICKS_NOTE,
    )


def _pi_prob(program: str) -> Entry:
    """PIE's p in the egress PI step (S-PIE's and the AQM family's)."""
    return Entry(
        program,
        "pi_prob",
        "register",
        "32",
        "p in 2^-32 units",
        Bounded((1 << 32) - 1, "saturating |+| and |-|"),
        None,
        "per step",
        CANNOT,
        "",
    )


def _slope_pair(program: str, prefix: str) -> tuple[Entry, Entry]:
    """DA-DCTCP's two-sample slope state (its program's and the family's)."""
    return (
        Entry(
            program,
            f"{prefix}last_depth",
            "register",
            "32",
            "the depth the queue's previous departure left behind, cells",
            Bounded((1 << 19) - 1, "deq_qdepth is 19 bits"),
            None,
            "per packet",
            CANNOT,
            "",
        ),
        Entry(
            program,
            f"{prefix}last_slope",
            "register",
            "32",
            "the EWMA slope sample, cells",
            Bounded((1 << 19) - 1, "a difference of two depths"),
            None,
            "per packet",
            CANNOT,
            "",
        ),
    )


AUDIT: tuple[Entry, ...] = (
    # ---- shared includes ---------------------------------------------------
    *_counters("include", ("untrusted_feedback_drops",), "feedback from untrusted ports", "all"),
    *_counters("include", ("spoofed_source_drops",), "packets from outside a port's binding"),
    _ticks(
        "include",
        "aqm_bridged_h.now_ticks",
        "metadata",
        "the ingress clock (48-bit MAC timestamp bits 37..6) bridged to egress",
        60.0,
        "every program's times are this clock; " + _TICKS_NOTE,
    ),
    Entry(
        "include",
        "aqm_bridged_h.arrival_ns",
        "metadata",
        "32",
        "the MAC timestamp's low 32 bits, for Tofino's sojourn (egress - arrival)",
        Clock(1),
        _BUF_DRAIN_NS_TOFINO * 1e-9,
        "longest sojourn: the whole buffer at 100 Gb/s",
        CANNOT,
        "a difference within one sojourn (ms) of a 4.3 s clock",
    ),
    Entry(
        "include",
        "queue_md_t.sojourn_ns",
        "metadata",
        "32",
        "one packet's sojourn in ns",
        Bounded(int(_BUF_DRAIN_NS_TOFINO * 4), "the whole buffer drained at a quarter of 100 Gb/s"),
        None,
        "per packet",
        CANNOT,
        "Tofino2's 32-bit deq_timedelta, or a difference of two timestamps",
    ),
    # ---- aqm: RED and CoDel -----------------------------------------------
    *_counters("aqm", ("aqm_drops", "aqm_marks"), "{name} of the port"),
    Entry(
        "aqm",
        "red_block_packets",
        "register",
        "32",
        "packets in the current RED block",
        Bounded(1 << 12, "a block is 2^w_q_shift <= 2^12 packets"),
        None,
        "one block",
        CANNOT,
        "restarts at the block's end",
    ),
    Entry(
        "aqm",
        "red_block_sum_cells",
        "register",
        "32",
        "queue depth summed over the block",
        Bounded(((1 << 19) - 1) << 12, "depth < 2^19 cells x 2^12 packets"),
        None,
        "one block",
        CANNOT,
        "MAX_BLOCK_SHIFT bounds it below 2^31",
    ),
    Entry(
        "aqm",
        "red_avg_sum_cells",
        "register",
        "32",
        "the last closed block's sum (N x avg)",
        Bounded(((1 << 19) - 1) << 12, "a copy of a block sum"),
        None,
        "one block",
        CANNOT,
        "",
    ),
    *(
        _ticks("aqm", n, "register", what, 10.0, "")
        for n, what in (
            ("codel_first_above_ticks", "when the sojourn first exceeded target"),
            ("codel_drop_start_ticks", "when the dropping state began"),
            ("codel_tail_next_ticks", "the next tail drop's time"),
        )
    ),
    Entry(
        "aqm",
        "codel_count",
        "register",
        "32",
        "CoDel's drops in the dropping state",
        Bounded(256, "below due_count, at most count_cap <= 256"),
        None,
        "one dropping state",
        CANNOT,
        "",
    ),
    # The PI shared by PIE and DualPI2, and DA-DCTCP's slope (the family).
    _pi_prob("aqm"),
    Entry(
        "aqm",
        "pi_old_beta",
        "register",
        "32",
        "B(d) of the last step, 2^-32 units of p",
        Bounded((1 << 32) - 1, "a pi_terms entry, clamped to 32 bits by the controller"),
        None,
        "per step",
        CANNOT,
        "",
    ),
    _ticks("aqm", "pi_last_update_ticks", "register", "the last PI step's time", 60.0, ""),
    *_slope_pair("aqm", "dadctcp_"),
    Entry(
        "aqm",
        "eg_md_t.block_sum_cells",
        "metadata",
        "32",
        "the closed block's sum",
        Bounded(((1 << 19) - 1) << 12, "as red_block_sum_cells"),
        None,
        "per packet",
        CANNOT,
        "",
    ),
    # ---- bfcc ----------------------------------------------------------------
    *_counters(
        "bfcc",
        (
            "fake_drops",
            "backpressure_received",
            "admitted_by_qid",
            "flagged_departures",
            "fakes_sent",
            "recirculation_skips",
        ),
        "{name}",
    ),
    Entry(
        "bfcc",
        "bp_recorded_ns",
        "register",
        "32",
        "when the port's backpressure state was recorded (global timestamp, ns)",
        Clock(1),
        1.0,
        "the state's lifetime (bp_alive_max_ns)",
        CANNOT,
        "its age is a 32-bit difference, compared with a lifetime of ms",
    ),
    Entry(
        "bfcc",
        "bp_state",
        "register",
        "16",
        "group ++ refresh epoch ++ degree of the last backpressure received",
        Bounded(0xFFFF, "fields, not a count"),
        None,
        "per message",
        CANNOT,
        "the refresh epoch bits wrap by construction (a tag, compared for equality)",
    ),
    Entry(
        "bfcc",
        "rr_count",
        "register",
        "8",
        "packets since the last fake packet",
        Bounded(255, "restarts at rate_threshold_packets (8 bits)"),
        None,
        "one round",
        CANNOT,
        "",
    ),
    Entry(
        "bfcc",
        "occupancy_window",
        "register",
        "32+32",
        "window number ++ congested departures in it",
        PerPacket(1, "port", "window"),
        None,
        "a group's idle time, in windows",
        BY_DESIGN,
        "the window number is vq_occupancy's epoch tag and wraps after 2^32 "
        "windows (one congested departure each at worst): a group that returns "
        "after an idle of exactly a multiple of 2^32 windows of its congestion "
        "point, probability 2^-32 per returning group, continues its stale count "
        "for that one window (the next window restarts it); once per wrap, in "
        "window 0, a slot unused since reset reads its initial tag 0 as current "
        "and its group keys as group 0 for that window (no upstream, no message). "
        "16 bits wrapped in 440 us (issue 33)",
    ),
    Entry(
        "bfcc",
        "vq_occupancy",
        "register",
        "32+32",
        "window tag ++ (~count ++ group)",
        Bounded(0xFF, "count <= window_packets, 8 bits"),
        None,
        "one window",
        CANNOT,
        "the count in the key half is bounded; the tag is occupancy_window's (see there)",
    ),
    Entry(
        "bfcc",
        "congested_vq",
        "register",
        "32+32",
        "window tag ++ the window's best key",
        Bounded(0xFFFF, "a key, not a count"),
        None,
        "one window",
        CANNOT,
        "written by every congested departure of its congestion point, so its tag is never stale",
    ),
    Entry(
        "bfcc",
        "recirculation_depth",
        "register",
        "32",
        "the depth a recirculated original left behind in its pipe's recirculation queue, cells",
        Bounded((1 << 19) - 1, "deq_qdepth is 19 bits"),
        None,
        "per packet",
        CANNOT,
        "",
    ),
    Entry(
        "bfcc",
        "bp_last_sent",
        "register",
        "16",
        "group ++ refresh epoch ++ degree last sent",
        Bounded(0xFFFF, "fields, not a count"),
        None,
        "per message",
        CANNOT,
        "",
    ),
    Entry(
        "bfcc",
        "ig_md_t.now_ns",
        "metadata",
        "32",
        "the global timestamp's low 32 bits, ns",
        Clock(1),
        1.0,
        "the backpressure lifetime",
        CANNOT,
        "ages are 32-bit differences over ms",
    ),
    # ---- dadctcp -------------------------------------------------------------
    *_counters("dadctcp", ("ce_marked", "not_ect_dropped"), "{name}"),
    *_slope_pair("dadctcp", ""),
    _ticks(
        "dadctcp",
        "last_departure",
        "register",
        "the egress clock (global_tstamp bits 37..6, read in egress) at the queue's "
        "latest departure",
        60.0,
        "the controller reads it once per interval (at most 60 s) and compares "
        "it with its previous read and the switch's freshest departure as 32-bit "
        "differences, so a wrap between reads is a difference like any other",
    ),
    # ---- p4qcn ---------------------------------------------------------------
    *_counters("p4qcn", ("chosen", "feedback_sent", "feedback_suppressed", "ce_marked"), "{name}"),
    Entry(
        "p4qcn",
        "fb_last_tick",
        "register",
        "32",
        "when the flow slot last sent feedback, ticks",
        Clock(TICK_NS),
        None,
        "the clock's period",
        BY_DESIGN,
        "compared as window_start < last <= now, unsigned: in the first interval "
        "after each 275 s wrap one feedback is suppressed (documented in the P4)",
    ),
    _ticks("p4qcn", "p4qcn_bridged_h.now_ticks", "metadata", "the ingress clock", 1.0, ""),
    # ---- pmqecn --------------------------------------------------------------
    Entry(
        "pmqecn",
        "class_counters",
        "counter",
        "32",
        "packets and bytes per class (status and metrics; lambda_i is read from class_arrivals)",
        PerByte("all"),
        None,
        "read by the controller",
        CANNOT,
        _COUNTER_NOTE,
    ),
    Entry(
        "pmqecn",
        "vq_used",
        "register",
        "16",
        "packets at the current WRR level",
        Bounded(0xFFFF, "restarts at the level's weight (16 bits)"),
        None,
        "one level",
        CANNOT,
        "",
    ),
    Entry(
        "pmqecn",
        "vq_level",
        "register",
        "8",
        "the current WRR level",
        Bounded(0xFF, "restarts past the last level"),
        None,
        "one round",
        CANNOT,
        "",
    ),
    Entry(
        "pmqecn",
        "vq_last_tick",
        "register",
        "32",
        "the class's last packet, ticks",
        Clock(TICK_NS),
        None,
        "a class's idle time",
        BY_DESIGN,
        "elapsed = now - last wraps after 275 s idle: a class idle for just over "
        "a multiple of 275 s drains its virtual queue for the remainder only; the "
        "queue is capped below 2^30 bytes, so it empties within ms at the class's rate "
        "once packets flow",
    ),
    Entry(
        "pmqecn",
        "vq_bytes",
        "register",
        "32",
        "the class's virtual queue, bytes",
        Bounded(0x3FFFC000 + 0xFFFF, "VQ_CAP_BYTES plus one frame; the drain saturates at 0"),
        None,
        "per packet",
        CANNOT,
        "",
    ),
    Entry(
        "pmqecn",
        "class_arrivals",
        "register",
        "32",
        "the class's arrivals in one ingress pipe (lambda_i, and each pipe's share of its drain)",
        PerPacket(1, "all"),
        1.0,
        "the controller's interval (interval_s, 1 s)",
        BY_DESIGN,
        "wraps; the controller takes each pipe's difference modulo 2^32 every "
        "interval, exact while a pipe counts fewer than 2^32 of one class's "
        "packets in an interval: 1.8 s with a 64-port Tofino pipe's 16 x 100G "
        "all 64-byte frames of one class (the time shown is every port of the "
        "chip into one class, which no one pipe sees)",
    ),
    Entry(
        "pmqecn",
        "feedback_gate",
        "register",
        "32+32",
        "per class and pipe: ticks since the last feedback copy; copies let through",
        PerPacket(1, "port"),
        None,
        "since the switch started",
        BY_DESIGN,
        "quiet saturates (2^32 ticks, 275 s, is above any interval, so a "
        "pinned value still lets the next copy through); made wraps, and the "
        "controller takes copies lost as made less rebuilt modulo 2^32 "
        "(bfrt_controller/pmqecn/status.py)",
    ),
    # The two halves (sojourn_epoch) are registers of their own, alike.
    *(
        Entry(
            "pmqecn",
            f"sojourn_sum_ns_{half}",
            "register",
            "32",
            f"sojourn times of one departure in 2^k summed per class (W_i), half {half}",
            PerPacket(_BUF_DRAIN_NS_TOFINO, "port", "ns"),
            1.0,
            "the controller's interval (interval_s, 1 s)",
            BY_DESIGN,
            "the times shown are for k = 0 (every departure summed). The controller "
            "picks k per class each interval so the next sum stays below 2^31 "
            "(bfrt_controller/pmqecn/sampling.py): it pins only when a class's "
            "sum more than doubles between two readings, and then saturates; that "
            "interval's W_i is taken as unknown (the backlog is counted instead) "
            "and k rises by 4",
        )
        for half in (0, 1)
    ),
    *(
        Entry(
            "pmqecn",
            f"sojourn_pkts_{half}",
            "register",
            "32",
            f"departures per class (W_i's divisor), half {half}",
            PerPacket(1, "port"),
            1.0,
            "the controller's interval (interval_s, 1 s)",
            CANNOT,
            "saturating; the controller reads a half after the epoch has left "
            "it and clears it (one request) before the epoch returns to it",
        )
        for half in (0, 1)
    ),
    Entry(
        "pmqecn",
        "ig_md_t.vq_len_bytes",
        "metadata",
        "32",
        "the virtual queue this packet leaves",
        Bounded(0x3FFFC000 + 0xFFFF, "as vq_bytes"),
        None,
        "per packet",
        CANNOT,
        "",
    ),
    _ticks("pmqecn", "ig_md_t.now_ticks", "metadata", "the ingress clock", 1.0, ""),
    *_counters("pmqecn", ("feedback_rebuilt",), "feedback copies rebuilt per class"),
    # ---- spie ----------------------------------------------------------------
    *_counters(
        "spie",
        ("large_flow_drops", "random_drops", "rejected_updates", "pi_updates"),
        "{name}",
    ),
    Entry(
        "spie",
        "prob",
        "register",
        "32",
        "p in 2^-31 units (ingress copy)",
        Bounded((1 << 31) - 1, "p <= 1"),
        None,
        "per update",
        CANNOT,
        "",
    ),
    _pi_prob("spie"),
    Entry(
        "spie",
        "del_old",
        "register",
        "32",
        "the last step's delay, 1024 ns units",
        Bounded((1 << 22) - 1, "a 32-bit ns sojourn >> 10"),
        None,
        "per step",
        CANNOT,
        "",
    ),
    *(
        _ticks("spie", n, "register", what, 60.0, "")
        for n, what in (
            ("state", "the last update's time (freshness), ticks"),
            ("congested", "the last congested update's time, ticks"),
            ("last_update_ticks", "the last PI step's time, ticks"),
        )
    ),
    *(
        Entry(
            "spie",
            f"sketch_row{i}",
            "register",
            "32",
            "the epoch's start (ticks) + the flow's count, in units of 2^u packets",
            Bounded(0xFFFF, "the count stops at SPIE_COUNT_CAP - 1"),
            None,
            "one epoch (<= 2^24 ticks)",
            BY_DESIGN,
            "a line-rate epoch of the fastest S-PIE port is at most 65,534 counts "
            "(60,000 sampled: the controller's epoch and u); only arrivals beyond the "
            "port's rate reach the cap, where the count stops below 2^16 <= 2^k, so it "
            "never reads as the next epoch's, and an undo leaves it there",
        )
        for i in range(3)
    ),
    Entry(
        "spie",
        "m_count",
        "register",
        "32",
        "the epoch's start + the port's count this epoch",
        Bounded(0xFFFF, "the count stops at SPIE_COUNT_CAP - 1"),
        None,
        "one epoch (<= 2^24 ticks)",
        BY_DESIGN,
        "as the rows; at the cap S stops with it, so the test keeps the ratio "
        "it had while more arrives than the port drains",
    ),
    Entry(
        "spie",
        "sumsq",
        "register",
        "32",
        "S: the counts before each counted packet, summed over the epoch",
        Bounded(65_534 * 65_533 // 2, "a line-rate epoch's count (count - 1) / 2"),
        None,
        "one epoch (<= 2^24 ticks)",
        BY_DESIGN,
        "below 2^31 at line rate; beyond it (several ports into one) it stops "
        "when m_count reaches its cap, and the add saturates at 2^32 - 1 "
        "(tna/spie/README.md, Sized for the ports it guards)",
    ),
    Entry(
        "spie",
        "ig_md_t.sumsq",
        "metadata",
        "32",
        "S before this packet",
        Bounded((1 << 32) - 1, "a copy of the saturating register"),
        None,
        "per packet",
        CANNOT,
        "",
    ),
    _ticks("spie", "ig_md_t.now_ticks", "metadata", "the ingress clock", 60.0, ""),
)


# ---- P4 declarations ----------------------------------------------------------


def _owner(path: Path) -> str:
    """The program a declaration belongs to: its directory of tna/, or
    "include" for tna/include/."""
    return path.parent.name


@functools.cache
def _read(tna: Path, program: str, chip: str) -> P4Program:
    return read_program(tna / program / f"{program}.p4", load_profile(chip))


def declared(program: str, chip: str = "tofino") -> dict[tuple[str, str], str]:
    """(kind, name) -> width for every Register and Counter the program
    declares in its own files (under "include", those tna/include/ declares),
    and struct.field -> width for every bit-string field of its structs and
    headers and of the includes'. Read as the compiler sees the source for
    `chip` (tests/test_p4_model_parity.py's reader: comments stripped, the
    preprocessor run, typedefs resolved, sub-controls followed); an entry of
    struct members is "w1+w2"."""
    programs = PROGRAMS if program == "include" else (program,)
    out: dict[tuple[str, str], str] = {}
    for prog in programs:
        p4 = _read(TNA, prog, chip)
        for name, decl in p4.declarations.items():
            if _owner(decl.file) == program:
                width = "+".join(str(w) for w in decl.widths)
                out[(decl.kind, name.rsplit(".", 1)[-1])] = width
        for sname, struct in p4.structs.items():
            # Bridged headers a program uses are declared once, in headers.p4.
            if _owner(struct.file) in (program, "include"):
                for fname, w in struct.fields.items():
                    out[("metadata", f"{sname}.{fname}")] = str(w)
    return out


def check_declarations() -> list[str]:
    """Every mismatch between AUDIT and the P4: a width that differs, an
    audited name that is gone, a register or counter not audited."""
    problems: list[str] = []
    programs = ("include", *PROGRAMS)
    audited = {(e.program, e.kind, e.name) for e in AUDIT}
    for program, chip in ((p, c) for p in programs for c in CHIPS):
        decl = declared(program, chip)
        for (kind, name), width in decl.items():
            if kind != "metadata" and (program, kind, name) not in audited:
                problems.append(f"{program}: {kind} {name} (bit<{width}>) is not in the audit")
        for e in (e for e in AUDIT if e.program == program):
            got = decl.get((e.kind, e.name))
            if got is None:
                problems.append(f"{program}: {e.kind} {e.name} is audited but not declared")
            elif got != e.width:
                problems.append(
                    f"{program}: {e.kind} {e.name} is {got} bits in the P4, {e.width} in the audit"
                )
    # A problem both chips share is one problem.
    problems = list(dict.fromkeys(problems))
    for e in AUDIT:
        if e.cls not in CLASSES:
            problems.append(f"{e.program}.{e.name}: class {e.cls!r}")
    return problems


def check_classes(profiles: dict[str, HwProfile]) -> list[str]:
    """An entry classed as unable to overflow must outlast its epoch on both
    chips; a defect must be one that can."""
    problems: list[str] = []
    for e in AUDIT:
        for chip, profile in profiles.items():
            t = overflow_s(e, profile)
            if e.cls == CANNOT and e.epoch_s is None and not math.isinf(t) and e.kind != "counter":
                problems.append(
                    f"{e.program}.{e.name}: no epoch but overflows in {fmt_s(t)} on {chip}"
                )
            if e.cls == CANNOT and e.epoch_s is not None and t <= e.epoch_s:
                problems.append(
                    f"{e.program}.{e.name}: overflows in {fmt_s(t)} on {chip}, "
                    f"within its epoch ({fmt_s(e.epoch_s)})"
                )
    return problems


# ---- the table ------------------------------------------------------------------


def table(profiles: dict[str, HwProfile]) -> str:
    t1, t2 = profiles["tofino"], profiles["tofino2"]
    head = (
        f"| program | object | width | counts | grows by | must hold for | "
        f"overflow at {t1.max_port_gbps}G (Tofino) | overflow at {t2.max_port_gbps}G "
        f"(Tofino2) | class | why / consequence |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for e in AUDIT:
        cells = [
            e.program,
            f"`{e.name}` ({e.kind})",
            e.width,
            e.counts,
            fmt_growth(e.growth),
            e.epoch + ("" if e.epoch_s is None else f" ({fmt_s(e.epoch_s)})"),
            fmt_s(overflow_s(e, t1)),
            fmt_s(overflow_s(e, t2)),
            e.cls,
            e.note.replace("|", "/"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows) + "\n"


def section(profiles: dict[str, HwProfile]) -> str:
    return (
        f"{BEGIN}\n"
        "Worst case: the chip's fastest port (hw_profiles' `max_port_gbps`) in "
        f"{MIN_WIRE_BYTES}-byte minimum frames on the wire, or all ports into one "
        "(`capacity_gbps`) where noted. Counters are listed at their declared "
        "width.\n\n" + table(profiles) + END
    )


def readme_section(text: str) -> str | None:
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < 0:
        return None
    return text[i : j + len(END)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if tna/README.md differs")
    ap.add_argument("--write", action="store_true", help="rewrite tna/README.md's table")
    args = ap.parse_args(argv)
    profiles = {c: load_profile(c) for c in CHIPS}
    problems = check_declarations() + check_classes(profiles)
    for p in problems:
        print(f"width audit: {p}", file=sys.stderr)
    want = section(profiles)
    text = README.read_text()
    have = readme_section(text)
    if args.write:
        if have is None:
            raise SystemExit(f"{README}: no {BEGIN} ... {END} markers")
        README.write_text(text.replace(have, want))
    elif args.check:
        if have != want:
            print("tna/README.md's width table differs: run scripts/width_audit.py --write")
            return 1
    else:
        print(want)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
