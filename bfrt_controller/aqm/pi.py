# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The PI step of PIE (RFC 8033) and DualPI2 (RFC 9332) as table entries.

The stateful ALU cannot multiply, so `p += alpha (d - target) + beta (d -
d_old)` runs as `p += T(d) - B(d_old)` with T(d) = (alpha + beta) d - alpha
target and B(d) = beta d (tna/aqm/README.md, "PIE and DualPI2's PI on
Tofino"). SwitchEgress.pi.pi_terms, ternary on the sojourn in ns, gives
both for the delay's step: steps of 2^k ns, k the smallest (at least 12)
that covers the saturation delay in at most STEPS_PER_CURVE steps, each
step one prefix valued at its middle (so a delay is off by at most half a
step: 131 us at DualPI2's gains, 262 us at PIE's), and the prefixes from the
saturation delay up valued there. One lookup, no sum of two (a second
table and an add cost the stage that kept the family within Tofino's
budget). p is 32 bits, 2^32 - 1 being probability 1, so a term is its
probability x 2^32.

The delay saturates where (alpha + beta) d reaches 1/4: T and B then stay
below 2^30 in magnitude, so their difference (delta) is a signed 32-bit
value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ternary_levels import KEY_MAX, range_prefixes

PROB_SCALE = 1 << 32
SATURATION_TERM = 0.25
STEPS_PER_CURVE = 1024
MIN_STEP_SHIFT = 12
U32 = (1 << 32) - 1


@dataclass(frozen=True)
class PiGains:
    """alpha and beta in Hz (probability per second of delay error, per
    update), target in us."""

    alpha: float
    beta: float
    target_us: float


@dataclass(frozen=True)
class PiTerms:
    value: int
    mask: int
    term: int
    beta_term: int


def _u32(x: float) -> int:
    """A signed probability x 2^32, rounded, as the 32-bit action data."""
    return round(x * PROB_SCALE) & U32


def saturation_ns(g: PiGains) -> float:
    return SATURATION_TERM / (g.alpha + g.beta) * 1e9


def step_shift(g: PiGains) -> int:
    """log2 of the step in ns: at most STEPS_PER_CURVE steps to saturation."""
    need = saturation_ns(g) / STEPS_PER_CURVE
    return max(MIN_STEP_SHIFT, math.ceil(math.log2(need)))


def terms_at(g: PiGains, delay_ns: float) -> tuple[int, int]:
    d = delay_ns / 1e9
    return (
        _u32((g.alpha + g.beta) * d - g.alpha * g.target_us / 1e6),
        _u32(g.beta * d),
    )


def pi_terms_entries(g: PiGains) -> list[PiTerms]:
    """pi_terms's entries for one curve (ternary on the sojourn in ns)."""
    k = step_shift(g)
    steps = math.ceil(saturation_ns(g) / (1 << k))
    mask = KEY_MAX ^ ((1 << k) - 1)
    out = [PiTerms(i << k, mask, *terms_at(g, (i + 0.5) * (1 << k))) for i in range(steps)]
    term, beta_term = terms_at(g, steps << k)
    out += [PiTerms(v, m, term, beta_term) for v, m in range_prefixes(steps << k, KEY_MAX)]
    return out


def level_of(probability: float) -> int:
    """A probability as the 15-bit drop level p >> 17 compares with."""
    return min(1 << 15, max(0, round(probability * (1 << 15))))
