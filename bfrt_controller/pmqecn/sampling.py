# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Which share of a class's departures the egress sums for W_i.

PMQECN's egress sums the sojourn of the first of every 2^k departures of a
class (k per class, ``sojourn_sampling``) and counts every departure.  The
sum is the class's queue in packet-nanoseconds over the interval (Little),
so summing every departure pins its 32 bits once a class holds about four
packets on average for a second.  Each interval the controller reads the
sum, sees what a whole sum would have been, and picks the smallest k that
keeps the next one below half the register: a slow class is summed whole, a
fast deep one is sampled, and a sum that pinned anyway moves k up by several
steps at once.
"""

from __future__ import annotations

U32_MAX = 0xFFFFFFFF
# Half the register, so a class may double its rate or queue between two
# readings before its sum pins.
SUM_BUDGET_NS = 1 << 31
# A pinned sum says only "at least this much": k moves up this many steps.
SATURATED_STEP_LOG2 = 4
# One departure in 2^24 still gives a 100G port's worst case (148.8 Mpps)
# eight samples a second.
MAX_SAMPLE_LOG2 = 24


def sample_mask(sample_log2: int) -> int:
    """The table's ``sample_mask``: the low k bits of the departure count."""
    return (1 << sample_log2) - 1


def samples_taken(departures: int, sample_log2: int) -> int:
    """How many of ``departures`` (counted from 0 since the last clear) were
    summed: those whose count before them has k zero low bits."""
    return (departures + sample_mask(sample_log2)) >> sample_log2


def next_sample_log2(sample_log2: int, sum_ns: int) -> int:
    """k for the next interval, from this interval's sum taken at k."""
    if sum_ns >= U32_MAX:
        return min(sample_log2 + SATURATED_STEP_LOG2, MAX_SAMPLE_LOG2)
    whole_ns = sum_ns << sample_log2
    k = 0
    while (whole_ns >> k) > SUM_BUDGET_NS and k < MAX_SAMPLE_LOG2:
        k += 1
    return k
