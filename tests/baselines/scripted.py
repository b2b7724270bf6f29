# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Uniform sources for the baselines' random draws, scripted so a test
knows every draw a marker or congestion point makes."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def scripted(values: Iterable[float], who: str = "the model") -> Callable[[], float]:
    """A uniform source replaying ``values``; drawing past the end fails the test."""
    it = iter(values)

    def draw() -> float:
        try:
            return next(it)
        except StopIteration:
            raise AssertionError(f"{who} drew more random numbers than expected") from None

    return draw
