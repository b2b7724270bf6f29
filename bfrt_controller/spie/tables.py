# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The arithmetic S-PIE's data plane does by lookup, as table entries.

- PI terms: alpha x d and beta x d, with d a signed delay difference in
  1024 ns units and the result in 2^-32 units of probability. d's signed
  high byte (d >> 8 in -128..127) and its low byte each have an entry
  holding its share, so the two lookups add up to the product for any
  |d| < 2^15 (33.5 ms); beyond, a catch-all per sign gives the term at the
  range's end (the low byte's share still adds, < 0.8 % of it).
- Logs: 16 x log2(v) rounded down, from v's leading one and the four bits
  after it (exact below 32), as ternary entries on a 32-bit value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

U32 = 0xFFFFFFFF
# One unit of d, in seconds, and one unit of p.
DELAY_UNIT_S = 1024e-9
PROB_ONE = 1 << 32
# d in [-2^15, 2^15): the high byte in -128..127.
D_LIMIT = 1 << 15
# Ternary priorities: a lower value wins. Exact-range entries beat the
# catch-alls.
IN_RANGE_PRIORITY = 1
CATCH_ALL_PRIORITY = 2
LOG_FRACTION_BITS = 4
LOG_SCALE = 1 << LOG_FRACTION_BITS
# A flow is large when its share *exceeds* the weighted average (seed 002's
# prose; Algorithm 2 line 12 prints the comparison reversed), beyond what
# the logs' rounding can fake. Each of the three logs rounds down by up to
# 1 + 16 log2(17/16) (< 2.4) sixteenths: log 2 S low makes the looked-up
# margin of a flow at the average read up to 2.4 high (the other two only
# read it lower); log_sumsq's entries are LARGE_MARGIN_LOG16 above 16 log2(2 S),
# so the data plane's margin is not negative (bit 15 clear: large) only
# for a measured excess of 4 sixteenths: 1.19 x the average as the logs
# read it, 1.139 x at least (tests/test_spie_model.py checks by exhaustion
# that no flow at or below the average is large). That is also what keeps
# the sketch live now that it counts admitted packets only: the flow with
# the smallest count is never large, so some flow is always admitted and
# the threshold moves; with a margin of 2 four equal flows all read large
# within 16 counts and nothing was admitted for the rest of the epoch.
LARGE_MARGIN_LOG16 = 4


@dataclass(frozen=True)
class TermEntry:
    value: int
    mask: int
    priority: int
    term: int  # two's complement, 32 bits
    minus_term: int


def _u32(x: int) -> int:
    return x & U32


def term_units(gain_per_s: float, d_units: int) -> int:
    """gain x d in 2^-32 units of probability, d in 1024 ns units."""
    return round(gain_per_s * d_units * DELAY_UNIT_S * PROB_ONE)


def term_entries(gain_per_s: float) -> tuple[list[TermEntry], list[TermEntry]]:
    """(high-byte entries, low-byte entries) for one gain."""
    hi = [
        TermEntry(
            _u32(h << 8),
            0xFFFFFF00,
            IN_RANGE_PRIORITY,
            _u32(term_units(gain_per_s, h << 8)),
            _u32(-term_units(gain_per_s, h << 8)),
        )
        for h in range(-128, 128)
    ]
    top = term_units(gain_per_s, D_LIMIT - 256)
    bottom = term_units(gain_per_s, -D_LIMIT)
    hi += [
        TermEntry(0, 0x80000000, CATCH_ALL_PRIORITY, _u32(top), _u32(-top)),
        TermEntry(0x80000000, 0x80000000, CATCH_ALL_PRIORITY, _u32(bottom), _u32(-bottom)),
    ]
    lo = [
        TermEntry(
            b,
            0xFF,
            IN_RANGE_PRIORITY,
            _u32(term_units(gain_per_s, b)),
            _u32(-term_units(gain_per_s, b)),
        )
        for b in range(256)
    ]
    return hi, lo


@dataclass(frozen=True)
class LogEntry:
    value: int
    mask: int
    log16: int


def log_ranges() -> list[tuple[int, int, int]]:
    """(value, mask, smallest v matched) covering 1 .. 2^32 - 1, disjoint."""
    out = []
    for e in range(32):
        if e < LOG_FRACTION_BITS:
            out += [(v, U32, v) for v in range(1 << e, 1 << (e + 1))]
            continue
        low_bits = e - LOG_FRACTION_BITS
        mask = _u32(~((1 << low_bits) - 1))
        for m in range(LOG_SCALE):
            v = (1 << e) | (m << low_bits)
            out.append((v, mask, v))
    return out


def log16(v: int) -> int:
    """16 x log2(v) rounded down (v >= 1), exactly in integers."""
    # floor(16 log2 v) = the largest k with 2^k <= v^16.
    k = 16 * (v.bit_length() - 1)
    while (v**16) >> (k + 1) >= 1:
        k += 1
    return k


def log_entries(offset: int = 0, times: int = 1, plus: int = 0) -> list[LogEntry]:
    """Entries giving 16 log2(times x v + offset) + plus for each range's smallest v."""
    return [
        LogEntry(value, mask, log16(times * low + offset) + plus)
        for value, mask, low in log_ranges()
    ]


LOG_NEVER = 0xFC00  # -1024 as 16 bits: a log that makes the flow never large
# A flow counted fewer times than this in the epoch is never large: equal
# flows served in turn differ by one packet, a share of 1/count, which the
# allowance covers only from here (tests/test_spie_model.py).
LARGE_MIN_COUNT = 16


# Counts in units of 2^u packets (u > 0, a sampled sketch) of equal flows
# differ by chance: a count c of 1-in-2^u samples deviates by about
# sqrt((1 - 2^-u) / c) of itself, 25 % at 16 counts when u = 4, beyond the
# margin (13.9 % at least), and a flow judged large loses every packet
# until the others catch up, so at 100 Gb/s equal flows lost three times
# PIE's rate in an epoch's first 2,000 packets. Counts from
# 128 (1 - 2^-u) on keep the chance deviation within 1/sqrt(128) (8.8 %),
# within the margin: 64 counts at u = 1, 96 at 2, 120 at 4, 126 at 6.
LARGE_MIN_COUNT_SAMPLED = 128


def large_min_count(sample_shift: int) -> int:
    """The count below which no flow is large, for a sketch counting 1
    packet in 2^sample_shift."""
    if sample_shift == 0:
        return LARGE_MIN_COUNT
    sampled = math.ceil(LARGE_MIN_COUNT_SAMPLED * (1 - 2.0**-sample_shift))
    return max(LARGE_MIN_COUNT, sampled)


def log_res_entries(min_count: int = LARGE_MIN_COUNT) -> list[LogEntry]:
    """log_res: 16 log2(m_before), LOG_NEVER below min_count."""
    return [
        LogEntry(value, mask, LOG_NEVER if low < min_count else log16(low))
        for value, mask, low in log_ranges()
    ]


def log_count_entries() -> list[LogEntry]:
    """log_count is keyed on m_count_before and gives 16 log2(m_count_before
    - 1): for 0 (its default) and 1 there is no log, the test never holds."""
    out = [LogEntry(1, U32, LOG_NEVER)]
    out += [LogEntry(value, mask, log16(low - 1)) for value, mask, low in log_ranges() if low >= 2]
    return out


def epoch_mask(shift: int) -> int:
    """~(2^shift - 1): the epoch's start from the clock."""
    return _u32(~((1 << shift) - 1))


def nearest_shift(interval_ticks: float, low: int, high: int) -> int:
    """The power of two of ticks nearest `interval_ticks` (in log), clamped."""
    return min(high, max(low, round(math.log2(max(interval_ticks, 1.0)))))


def sample_mask(shift: int) -> int:
    """2^u - 1: a packet is counted when these bits of its random value are 0."""
    return (1 << shift) - 1
