# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What the programs' probability tables share (P4QCN's feedback_probability,
AQM's red_level and codel_due): a probability as the 15-bit level the data
plane compares with a random value, a key range as its fewest ternary
prefixes, and the config's bound on how many levels a queue gets."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .common import Strict

# The data plane draws a 15-bit random value: a level of 2^15 always fires.
LEVEL_ALWAYS = 1 << 15
KEY_BITS = 32
KEY_MAX = (1 << KEY_BITS) - 1


def level_of(probability: float) -> int:
    return min(LEVEL_ALWAYS, max(0, round(probability * LEVEL_ALWAYS)))


def range_prefixes(lo: int, hi: int, bits: int = KEY_BITS) -> list[tuple[int, int]]:
    """[lo, hi] as the fewest (value, mask) prefixes."""
    full = (1 << bits) - 1
    out: list[tuple[int, int]] = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << bits
        while size > hi - lo + 1:
            size >>= 1
        out.append((lo, full ^ (size - 1)))
        lo += size
    return out


class Levels(Strict):
    # Levels per queue between its two thresholds: one per cell up to this
    # many, else equal-width buckets (aqm/levels.py, p4qcn/levels.py).
    max_steps: Annotated[int, Field(ge=1, le=256)] = 64
