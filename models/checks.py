# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Parameter and clock checks shared by the models (the baselines, the
M/M/1/N queue, PMQECN's reaction point).

Every check raises ``ValueError`` naming the offending parameter, so a bad
simulator configuration fails at construction instead of producing a plausible
but wrong rate trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Integral, Real


def real(value: object, name: str) -> float:
    """``value`` as a finite float, else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return result


def positive(value: object, name: str) -> float:
    result = real(value, name)
    if result <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return result


def non_negative(value: object, name: str) -> float:
    result = real(value, name)
    if result < 0.0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return result


def probability(value: object, name: str) -> float:
    result = real(value, name)
    if not 0.0 <= result <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return result


def integer(value: object, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; floats are refused so ns and bytes stay exact."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    result = int(value)
    if result < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {result}")
    return result


class Clock:
    """Last event time seen by one state machine.

    The models have no clock of their own; they trust the caller's ``now_ns``.
    Refusing time that runs backwards turns a mis-ordered event queue in the
    simulator into an immediate error rather than a silently skipped timer.
    """

    def __init__(self) -> None:
        self.now_ns = 0

    def advance(self, now_ns: object) -> int:
        now = integer(now_ns, "now_ns", 0)
        if now < self.now_ns:
            raise ValueError(f"now_ns went backwards: {now} < {self.now_ns}")
        self.now_ns = now
        return now


UniformSource = Callable[[], float]


def bernoulli(p: float, uniform: UniformSource) -> bool:
    """True with probability ``p``, drawing from ``uniform`` only when 0 < p < 1.

    Not drawing at the certain ends keeps a deterministic test's random stream
    aligned with the packets that actually sit on a probability ramp.
    """
    if p <= 0.0:
        return False
    if p >= 1.0:
        return True
    u = uniform()
    if not 0.0 <= u < 1.0:
        raise ValueError(f"uniform source must return a value in [0, 1), got {u!r}")
    return u < p
