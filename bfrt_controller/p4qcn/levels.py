# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Eq. 1 as the entries of SwitchEgress.feedback_probability.

The data plane compares a 15-bit random value with a level (P x 32768) read
from a ternary table on the queue depth, so the controller turns each
queue's (Q_min, Q_max, alpha) into depth ranges with a level each, and each
range into ternary prefixes:

* depth <= Q_min: no entry (level 0, never);
* Q_min < depth < Q_max: level round(32768 min(1, alpha (d - Q_min))) for
  each cell d, or, when there are more such cells than `max_steps`, for
  equal-width buckets of cells, each at the level of its lowest cell (the
  probability never exceeds Eq. 1's within a bucket);
* depth >= max(Q_max, Q_min + 1): level 32768 (always), up to the 32-bit
  key's top, because the paper keeps feedback on above Q_PFC too.

Adjacent ranges with one level are merged before they are expanded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ternary_levels import KEY_MAX as DEPTH_KEY_MAX
from ..ternary_levels import LEVEL_ALWAYS as LEVEL_ALWAYS
from ..ternary_levels import level_of as level_of
from ..ternary_levels import range_prefixes as range_prefixes


@dataclass(frozen=True)
class LevelRange:
    lo_cells: int
    hi_cells: int
    level: int


@dataclass(frozen=True)
class TernaryDepth:
    value: int
    mask: int
    level: int


def eq1_probability(depth_cells: int, q_min_cells: int, q_max_cells: int, alpha: float) -> float:
    """Eq. 1 with the boundaries P4QCN's prose gives (tna/p4qcn/README.md)."""
    if depth_cells <= q_min_cells:
        return 0.0
    if depth_cells >= q_max_cells:
        return 1.0
    return min(1.0, alpha * (depth_cells - q_min_cells))


def default_alpha(q_min_cells: int, q_max_cells: int) -> float:
    """P reaches 1 exactly at Q_max (the paper's Fig. 3)."""
    return 1.0 / (q_max_cells - q_min_cells) if q_max_cells > q_min_cells else 1.0


def level_ranges(
    q_min_cells: int, q_max_cells: int, alpha: float | None, max_steps: int
) -> list[LevelRange]:
    """The queue's depth ranges with a non-zero level, merged, ascending."""
    a = default_alpha(q_min_cells, q_max_cells) if alpha is None else alpha
    always_from = max(q_max_cells, q_min_cells + 1)
    ranges: list[LevelRange] = []

    def add(lo: int, hi: int, level: int) -> None:
        if level == 0:
            return
        if ranges and ranges[-1].level == level and ranges[-1].hi_cells + 1 == lo:
            ranges[-1] = LevelRange(ranges[-1].lo_cells, hi, level)
        else:
            ranges.append(LevelRange(lo, hi, level))

    middle = always_from - (q_min_cells + 1)
    width = max(1, math.ceil(middle / max_steps))
    lo = q_min_cells + 1
    while lo < always_from:
        hi = min(lo + width - 1, always_from - 1)
        add(lo, hi, level_of(eq1_probability(lo, q_min_cells, q_max_cells, a)))
        lo = hi + 1
    add(always_from, DEPTH_KEY_MAX, LEVEL_ALWAYS)
    return ranges


def ternary_entries(
    q_min_cells: int, q_max_cells: int, alpha: float | None, max_steps: int
) -> list[TernaryDepth]:
    return [
        TernaryDepth(value, mask, r.level)
        for r in level_ranges(q_min_cells, q_max_cells, alpha, max_steps)
        for value, mask in range_prefixes(r.lo_cells, r.hi_cells)
    ]
