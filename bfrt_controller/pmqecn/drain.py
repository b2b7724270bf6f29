"""The drain table of a class's virtual queue (SwitchIngress.vq_drain).

The switch cannot multiply the elapsed time by a rate, so the controller
writes the product into a ternary table: one entry per leading bit p of the
elapsed ticks and per value of the next min(p, mantissa_bits - 1) bits, each
giving the bytes drained over the LOWER end of its range, rounded down. A
drain is therefore exact for elapsed times below 2^mantissa_bits ticks and
otherwise short by less than 2^-(mantissa_bits - 1) of the exact drain, plus
under one byte of rounding (tna/README.md, "Virtual queue"). The entries of
one class never overlap, so their priorities do not matter; an elapsed time
of zero matches none and drains nothing (the table's default).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

# The P4's clock tick (IngressClockHook: bits 37..6 of the ns timestamp).
TICK_NS = 64
ELAPSED_BITS = 32
# Drains are capped here: above any virtual-queue length (VQ_CAP_BYTES in
# the P4), and small enough that K_i + drain stays below 2^31.
DRAIN_MAX_BYTES = 1 << 30
# Ternary entries the P4 table holds (PMQECN_DRAIN_ENTRIES).
DRAIN_TABLE_SIZE = 4096


@dataclass(frozen=True)
class DrainEntry:
    elapsed_value: int
    elapsed_mask: int
    drain_bytes: int


def entries_per_class(mantissa_bits: int) -> int:
    """Entries one class needs: 2^b - 1 below 2^b ticks, 2^(b-1) per longer leading bit."""
    b = mantissa_bits
    return (1 << b) - 1 + (ELAPSED_BITS - b) * (1 << (b - 1))


def drain_entries(rate_bytes_per_s: int, mantissa_bits: int) -> list[DrainEntry]:
    """Every entry of one class draining at `rate_bytes_per_s`."""
    if rate_bytes_per_s < 0:
        raise ValueError(f"rate_bytes_per_s must be non-negative, got {rate_bytes_per_s}")
    if not 1 <= mantissa_bits <= ELAPSED_BITS:
        raise ValueError(f"mantissa_bits must be 1..{ELAPSED_BITS}, got {mantissa_bits}")
    per_tick = rate_bytes_per_s * TICK_NS
    return [
        DrainEntry(value, mask, min(per_tick * value // 1_000_000_000, DRAIN_MAX_BYTES))
        for value, mask in _ranges(mantissa_bits)
    ]


@cache
def _ranges(mantissa_bits: int) -> tuple[tuple[int, int], ...]:
    """(lower end, ternary mask) of every entry, the same for every rate:
    the controller rewrites all of them at each weight change."""
    full = (1 << ELAPSED_BITS) - 1
    out: list[tuple[int, int]] = []
    for lead in range(ELAPSED_BITS):
        kept = min(lead, mantissa_bits - 1)
        low = lead - kept
        mask = full >> low << low
        out.extend(((1 << lead) | (m << low), mask) for m in range(1 << kept))
    return tuple(out)


def drain_bytes(rate_bytes_per_s: int, mantissa_bits: int, elapsed_ticks: int) -> int:
    """What the table answers for `elapsed_ticks` (for tests and tools)."""
    if elapsed_ticks == 0:
        return 0
    lead = elapsed_ticks.bit_length() - 1
    low = lead - min(lead, mantissa_bits - 1)
    lower_end = elapsed_ticks >> low << low
    return min(rate_bytes_per_s * TICK_NS * lower_end // 1_000_000_000, DRAIN_MAX_BYTES)
