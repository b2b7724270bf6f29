# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The drain of a class's virtual queue, in the log domain.

The switch cannot multiply the elapsed time by a rate, so it adds their
logarithms and looks the sum up:

* `SwitchIngress.vq_log_elapsed` (ternary on the elapsed 64-ns ticks, one
  table for every class) answers log2 of the elapsed time in Q7 (units of
  1/128 of a doubling), resolved to `mantissa_bits` leading bits, and its
  action adds the class's `rate_log2_q7` (written by the controller into the
  class's `ecn_threshold` entry): log2 of the drain rate in bytes per tick,
  plus LOG_OFFSET doublings so it is never negative;
* `SwitchIngress.vq_exp_drain` (exact on that sum) answers 2^(sum/128 -
  LOG_OFFSET) bytes, rounded down, at most DRAIN_MAX_BYTES.

Neither table depends on any rate, so the controller writes both once; a
new rate is one `ecn_threshold` entry per class. Every value is rounded
down (the elapsed time to its range's lower end, each logarithm, the
power), so the table never drains more than the exact drain and, with
m mantissa bits, less by a factor of at most (1 - 2^-(m-1)) x 2^(-2/128)
plus one byte: 1.9 % at the default 8 bits (tna/pmqecn/README.md, "Virtual queue";
tests/models/test_pmqecn_virtual_queue.py measures it).

A class without an `ecn_threshold` entry adds 0: its sum stays below the
smallest key of vq_exp_drain (LOG_OFFSET doublings), so it drains nothing,
as does an elapsed time of 0 (no vq_log_elapsed entry; the sum is 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

# The P4's clock tick (IngressClockHook: bits 37..6 of the ns timestamp).
TICK_NS = 64
ELAPSED_BITS = 32
LOG_FRAC_BITS = 7
LOG_ONE = 1 << LOG_FRAC_BITS
# Doublings added to a rate's log2: rates down to 2^-32 bytes per tick
# (0.015 B/s) stay positive, and an elapsed time's log alone (below 32
# doublings) never reaches a drain entry.
LOG_OFFSET = 32
# The sum's width in the P4 (ig_md.vq_log_drain_q7) and the largest rate
# log: 2^12 bytes per tick is 512 Gb/s.
LOG_SUM_BITS = 16
MAX_RATE_LOG2 = 12
RATE_LOG2_Q7_MAX = (MAX_RATE_LOG2 + LOG_OFFSET) * LOG_ONE
# Drains are capped here: above any virtual-queue length (VQ_CAP_BYTES in
# the P4), and small enough that K_i + drain stays below 2^31.
DRAIN_MAX_BYTES = 1 << 30
# Entries the P4 tables hold (PMQECN_LOG_ENTRIES, PMQECN_EXP_ENTRIES).
LOG_TABLE_SIZE = 4096
EXP_TABLE_SIZE = 8192
# The smallest sum with a drain entry (one byte) and one past the largest sum.
EXP_FIRST_Q7 = LOG_OFFSET * LOG_ONE
EXP_END_Q7 = RATE_LOG2_Q7_MAX + ELAPSED_BITS * LOG_ONE


@dataclass(frozen=True)
class LogEntry:
    elapsed_value: int
    elapsed_mask: int
    log_elapsed_q7: int


def log_entries_count(mantissa_bits: int) -> int:
    """vq_log_elapsed entries: 2^m - 1 below 2^m ticks, 2^(m-1) per longer leading bit."""
    m = _check_bits(mantissa_bits)
    return (1 << m) - 1 + (ELAPSED_BITS - m) * (1 << (m - 1))


def _check_bits(mantissa_bits: int) -> int:
    if not 1 <= mantissa_bits <= ELAPSED_BITS:
        raise ValueError(f"mantissa_bits must be 1..{ELAPSED_BITS}, got {mantissa_bits}")
    return mantissa_bits


def _log2_q7(value: int) -> int:
    """floor(128 log2 value) for value >= 1, exact at powers of two."""
    lead = value.bit_length() - 1
    frac = math.floor(LOG_ONE * math.log2(value / (1 << lead)))
    return lead * LOG_ONE + min(frac, LOG_ONE - 1)


@cache
def log_entries(mantissa_bits: int) -> tuple[LogEntry, ...]:
    """Every vq_log_elapsed entry: the ranges of elapsed ticks that share
    their leading `mantissa_bits` bits, each answering its lower end's log."""
    m = _check_bits(mantissa_bits)
    full = (1 << ELAPSED_BITS) - 1
    out: list[LogEntry] = []
    for lead in range(ELAPSED_BITS):
        kept = min(lead, m - 1)
        low = lead - kept
        mask = full >> low << low
        for bits in range(1 << kept):
            value = (1 << lead) | (bits << low)
            out.append(LogEntry(value, mask, _log2_q7(value)))
    return tuple(out)


def exp_drain_bytes(sum_q7: int) -> int:
    """What vq_exp_drain answers for a sum: 2^(sum/128 - LOG_OFFSET) bytes,
    rounded down and capped; 0 below one byte (no entry)."""
    if sum_q7 < EXP_FIRST_Q7:
        return 0
    whole, frac = divmod(sum_q7 - EXP_FIRST_Q7, LOG_ONE)
    if whole >= DRAIN_MAX_BYTES.bit_length() - 1:
        return DRAIN_MAX_BYTES
    return min(math.floor(math.ldexp(2.0 ** (frac / LOG_ONE), whole)), DRAIN_MAX_BYTES)


@cache
def exp_entries() -> tuple[tuple[int, int], ...]:
    """Every vq_exp_drain entry as (sum, drain bytes)."""
    return tuple((s, exp_drain_bytes(s)) for s in range(EXP_FIRST_Q7, EXP_END_Q7))


def rate_log2_q7(rate_bytes_per_s: int) -> int:
    """A class's ecn_threshold.rate_log2_q7: floor(128 (log2 of its drain in
    bytes per tick + LOG_OFFSET)); 0 (no drain) for a rate of 0."""
    if isinstance(rate_bytes_per_s, bool) or not isinstance(rate_bytes_per_s, int):
        raise TypeError(f"rate_bytes_per_s must be an integer, got {rate_bytes_per_s!r}")
    if rate_bytes_per_s < 0:
        raise ValueError(f"rate_bytes_per_s must be non-negative, got {rate_bytes_per_s}")
    if rate_bytes_per_s == 0:
        return 0
    per_tick = rate_bytes_per_s * TICK_NS / 1_000_000_000
    q7 = math.floor(LOG_ONE * (math.log2(per_tick) + LOG_OFFSET))
    return max(1, min(q7, RATE_LOG2_Q7_MAX))


def log_elapsed_q7(mantissa_bits: int, elapsed_ticks: int) -> int | None:
    """What vq_log_elapsed answers for `elapsed_ticks`; None: no entry (0 ticks)."""
    _check_bits(mantissa_bits)
    if elapsed_ticks == 0:
        return None
    lead = elapsed_ticks.bit_length() - 1
    low = lead - min(lead, mantissa_bits - 1)
    return _log2_q7(elapsed_ticks >> low << low)


def drain_bytes(rate_bytes_per_s: int, mantissa_bits: int, elapsed_ticks: int) -> int:
    """The drain both tables give together (for tests and tools)."""
    log_e = log_elapsed_q7(mantissa_bits, elapsed_ticks)
    if log_e is None:
        return 0
    return exp_drain_bytes(rate_log2_q7(rate_bytes_per_s) + log_e)


def exact_drain_bytes(rate_bytes_per_s: int, elapsed_ticks: int) -> float:
    """The drain the tables approximate: rate x elapsed time."""
    return rate_bytes_per_s * elapsed_ticks * TICK_NS / 1_000_000_000
