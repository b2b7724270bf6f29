# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The PI step of PIE (RFC 8033) and DualPI2 (RFC 9332) as table entries.

The stateful ALU cannot multiply, so `p += alpha (d - target) + beta (d -
d_old)` runs as `p += T(d) - B(d_old)` with T(d) = (alpha + beta) d - alpha
target and B(d) = beta d (tna/aqm/README.md, "PIE and DualPI2's PI on
Tofino"). Both are linear in d, so each is the sum of a value for the
delay's high byte (SwitchEgress.pi.pi_hi, ternary: one prefix per byte,
and prefixes from the saturation delay up) and one for its low byte
(pi_lo, exact). d is in units of 2^12 ns (sojourn_ns >> 12); p in 32 bits,
2^32 - 1 being probability 1, so a term is its probability x 2^32.

The delay saturates where (alpha + beta) d reaches 1/4: T and B then stay
below 2^30 in magnitude, so their difference (delta) is a signed 32-bit
value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.switch.aqm_mechanisms import PI_DELAY_SHIFT, PI_LO_BITS

from .levels import KEY_MAX, range_prefixes

PROB_SCALE = 1 << 32
UNIT_S = (1 << PI_DELAY_SHIFT) / 1e9
LO_VALUES = 1 << PI_LO_BITS
HI_VALUES = 1 << 8  # the delay's tabled 16 bits: a high byte beside the low one
SATURATION_TERM = 0.25
U32 = (1 << 32) - 1


@dataclass(frozen=True)
class PiGains:
    """alpha and beta in Hz (probability per second of delay error, per
    update), target in us."""

    alpha: float
    beta: float
    target_us: float


@dataclass(frozen=True)
class PiHi:
    value: int
    mask: int
    term: int
    beta_term: int


@dataclass(frozen=True)
class PiLo:
    low_byte: int
    term: int
    beta_term: int


def _u32(x: float) -> int:
    """A signed probability x 2^32, rounded, as the 32-bit action data."""
    return round(x * PROB_SCALE) & U32


def saturation_hi(g: PiGains) -> int:
    """The first high byte whose delay is at or past the saturation delay."""
    d_sat_units = SATURATION_TERM / ((g.alpha + g.beta) * UNIT_S)
    return min(HI_VALUES - 1, math.floor(d_sat_units / LO_VALUES))


def hi_terms(g: PiGains, hi: int) -> tuple[int, int]:
    d = hi * LO_VALUES * UNIT_S
    return (
        _u32((g.alpha + g.beta) * d - g.alpha * g.target_us / 1e6),
        _u32(g.beta * d),
    )


def pi_hi_entries(g: PiGains) -> list[PiHi]:
    """pi_hi's entries for one curve (ternary on the whole delay in units)."""
    top = saturation_hi(g)
    mask = KEY_MAX ^ (LO_VALUES - 1)
    out = [PiHi(h * LO_VALUES, mask, *hi_terms(g, h)) for h in range(top)]
    term, beta_term = hi_terms(g, top)
    out += [
        PiHi(t.value, t.mask, term, beta_term) for t in range_prefixes(top * LO_VALUES, KEY_MAX)
    ]
    return out


def pi_lo_entries(g: PiGains) -> list[PiLo]:
    """pi_lo's entries for one curve (exact on the delay's low byte)."""
    return [
        PiLo(lo, _u32((g.alpha + g.beta) * lo * UNIT_S), _u32(g.beta * lo * UNIT_S))
        for lo in range(LO_VALUES)
    ]


def level_of(probability: float) -> int:
    """A probability as the 15-bit drop level p >> 17 compares with."""
    return min(1 << 15, max(0, round(probability * (1 << 15))))
