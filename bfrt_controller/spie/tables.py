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
# prose; Algorithm 2 line 12 prints the comparison reversed): log_sumsq's
# entries are one sixteenth above 16 log2(2 S), so "log_res >= threshold"
# in the data plane is a strict excess of at least 2^(1/16) (4.4 %).
# Without it equal flows would all be "large" and all dropped.
LARGE_MARGIN_LOG16 = 1


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


def epoch_mask(shift: int) -> int:
    """~(2^shift - 1): the epoch's start from the clock."""
    return _u32(~((1 << shift) - 1))


def nearest_shift(interval_ticks: float, low: int, high: int) -> int:
    """The power of two of ticks nearest `interval_ticks` (in log), clamped."""
    return min(high, max(low, round(math.log2(max(interval_ticks, 1.0)))))
