# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""RED's drop curve and CoDel's control law as ternary table entries.

The data plane cannot multiply, divide or take square roots, so the
controller writes the curves as step functions:

* RED (SwitchEgress.red_level, ternary on N x avg, N = 2^k the block size):
  Floyd & Jacobson's p_b = max_p (avg - min_th) / (max_th - min_th) for
  min_th <= avg < max_th as a level (p_b x 32768) per cell of the average
  (each cell's N sums share the level of their lowest average), or equal-
  width buckets when there are more than `max_steps` such cells; 32768 and
  `hard` (drop even when ECN-capable) from max_th up; no entry below
  min_th or where p_b rounds to 0.
* CoDel (SwitchEgress.codel_due, ternary on the time since the dropping
  state began): RFC 8289 drops at the state's start and then after
  interval/sqrt(1), interval/sqrt(2), ... so the k-th drop is due at
  e(k-1) = interval x S(k-1), S(m) = sum_{i=1..m} 1/sqrt(i). Each range
  [e(m), e(m+1) - 1] says m + 1 drops are due; from e(count_cap) on the
  entry says `tail`: one drop every interval/sqrt(count_cap). Every e(m) is
  computed from the exact sum and rounded up to the clock's 64 ns tick, so
  a drop is never early and never more than one tick late, and the error
  does not accumulate from one drop to the next.

Each range becomes its fewest ternary prefixes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.switch.common import CLOCK_TICK_SHIFT

from ..ternary_levels import KEY_MAX, range_prefixes
from ..ternary_levels import LEVEL_ALWAYS as LEVEL_ALWAYS
from ..ternary_levels import level_of as level_of

TICK_NS = 1 << CLOCK_TICK_SHIFT


@dataclass(frozen=True)
class RedLevel:
    value: int
    mask: int
    level: int
    hard: int


@dataclass(frozen=True)
class CodelDue:
    value: int
    mask: int
    due_count: int
    tail: int


def red_probability(avg_cells: float, min_th_cells: int, max_th_cells: int, max_p: float) -> float:
    """Floyd & Jacobson's p_b (no count-based spacing, tna/aqm/README.md)."""
    if avg_cells < min_th_cells:
        return 0.0
    if avg_cells >= max_th_cells:
        return 1.0
    return max_p * (avg_cells - min_th_cells) / (max_th_cells - min_th_cells)


def red_entries(
    min_th_cells: int, max_th_cells: int, max_p: float, block_shift: int, max_steps: int
) -> list[RedLevel]:
    """The queue's red_level entries, keyed on N x avg (N = 2^block_shift)."""
    n = 1 << block_shift
    ranges: list[tuple[int, int, int, int]] = []  # lo, hi (sums), level, hard

    def add(lo: int, hi: int, level: int, hard: int) -> None:
        if level == 0:
            return
        if ranges and ranges[-1][2:] == (level, hard) and ranges[-1][1] + 1 == lo:
            ranges[-1] = (ranges[-1][0], hi, level, hard)
        else:
            ranges.append((lo, hi, level, hard))

    cells = max_th_cells - min_th_cells
    width = max(1, math.ceil(cells / max_steps))
    c = min_th_cells
    while c < max_th_cells:
        top = min(c + width, max_th_cells)
        add(
            c * n,
            top * n - 1,
            level_of(red_probability(c, min_th_cells, max_th_cells, max_p)),
            0,
        )
        c = top
    add(max_th_cells * n, KEY_MAX, LEVEL_ALWAYS, 1)
    return [
        RedLevel(value, mask, level, hard)
        for lo, hi, level, hard in ranges
        for value, mask in range_prefixes(lo, hi)
    ]


def ticks_ceil(ns: float) -> int:
    return math.ceil(ns / TICK_NS - 1e-9)


def codel_breakpoints_ticks(interval_us: float, count_cap: int) -> list[int]:
    """e(0..count_cap): when the 1st .. (count_cap + 1)-th drop is due."""
    interval_ns = interval_us * 1000
    out = [0]
    s = 0.0
    for i in range(1, count_cap + 1):
        s += 1 / math.sqrt(i)
        out.append(ticks_ceil(interval_ns * s))
    return out


def codel_tail_step_ticks(interval_us: float, count_cap: int) -> int:
    return ticks_ceil(interval_us * 1000 / math.sqrt(count_cap))


def codel_entries(interval_us: float, count_cap: int) -> list[CodelDue]:
    """The queue's codel_due entries, keyed on the ticks since the dropping
    state began."""
    e = codel_breakpoints_ticks(interval_us, count_cap)
    out: list[CodelDue] = []
    for m in range(count_cap):
        out += [CodelDue(v, mask, m + 1, 0) for v, mask in range_prefixes(e[m], e[m + 1] - 1)]
    out += [CodelDue(v, mask, count_cap, 1) for v, mask in range_prefixes(e[count_cap], KEY_MAX)]
    return out
