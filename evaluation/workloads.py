# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Flow-size distributions with Poisson arrivals (seed 004's web-search-like
mix), expanded into ordinary sized flows when a scenario is loaded.

A workload names source hosts, destination hosts, a size CDF and a load:
each source starts flows as a Poisson process whose rate makes its offered
load `load` x `load_rate` (rate / (8 x mean flow size)), each to a
destination drawn uniformly (never itself), each of a size drawn from the
CDF by inverse transform with linear interpolation between its points (as
the HPCC and pFabric simulations sample it). The generator is numpy's,
seeded by the scenario's seed and the workload's index, so a scenario file
always means the same flows.
"""

from __future__ import annotations

import itertools

import numpy as np

# DCTCP's web-search workload (Alizadeh et al., SIGCOMM 2010, Fig. 4), as
# tabulated for the pFabric and HPCC simulations: (bytes, cumulative P).
WEBSEARCH_CDF: tuple[tuple[int, float], ...] = (
    (0, 0.0),
    (10_000, 0.15),
    (20_000, 0.2),
    (30_000, 0.3),
    (50_000, 0.4),
    (80_000, 0.53),
    (200_000, 0.6),
    (1_000_000, 0.7),
    (2_000_000, 0.8),
    (5_000_000, 0.9),
    (10_000_000, 0.97),
    (30_000_000, 1.0),
)
CDFS = {"websearch": WEBSEARCH_CDF}
# Seed 004's size classes.
SMALL_BYTES = 100_000
LARGE_BYTES = 10_000_000


def check_cdf(points: list[tuple[int, float]]) -> None:
    """Sizes strictly increasing, probabilities non-decreasing from <= 0 ... to 1."""
    if len(points) < 2:
        raise ValueError("a CDF needs at least two points")
    sizes = [s for s, _ in points]
    probs = [p for _, p in points]
    if any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError("sizes must increase strictly")
    if any(b < a for a, b in itertools.pairwise(probs)):
        raise ValueError("cumulative probabilities must not decrease")
    if probs[-1] != 1.0 or probs[0] < 0:
        raise ValueError("cumulative probabilities must run from >= 0 to exactly 1")
    if sizes[0] < 0:
        raise ValueError("sizes must not be negative")


def mean_bytes(points: tuple[tuple[int, float], ...] | list[tuple[int, float]]) -> float:
    """The mean of the piecewise-linear CDF (uniform within each segment)."""
    total = points[0][0] * points[0][1]
    for (s0, p0), (s1, p1) in itertools.pairwise(points):
        total += (p1 - p0) * (s0 + s1) / 2
    return total


def sample_sizes(
    rng: np.random.Generator,
    points: tuple[tuple[int, float], ...] | list[tuple[int, float]],
    n: int,
) -> np.ndarray:
    sizes = np.asarray([s for s, _ in points], dtype=float)
    probs = np.asarray([p for _, p in points], dtype=float)
    u = rng.random(n)
    # np.interp needs increasing x; repeated probabilities (flat segments)
    # are harmless for the inverse (a jump in size).
    drawn = np.interp(u, probs, sizes)
    return np.maximum(1, np.ceil(drawn)).astype(np.int64)


def expand(
    seed: int,
    index: int,
    sources: list[str],
    destinations: list[str],
    cdf: tuple[tuple[int, float], ...] | list[tuple[int, float]],
    load: float,
    load_rate_bps: int,
    start_s: float,
    stop_s: float,
    max_flows: int,
) -> list[tuple[str, str, float, int]]:
    """(src, dst, start_s, size_bytes) of every flow, in start order."""
    rng = np.random.default_rng([seed, index])
    lam = load * load_rate_bps / (8 * mean_bytes(cdf))
    out: list[tuple[str, str, float, int]] = []
    for src in sources:
        targets = [d for d in destinations if d != src]
        t = start_s
        while True:
            t += rng.exponential(1 / lam)
            if t >= stop_s:
                break
            dst = targets[int(rng.integers(len(targets)))]
            size = int(sample_sizes(rng, cdf, 1)[0])
            out.append((src, dst, float(t), size))
            if len(out) > max_flows:
                raise ValueError(
                    f"more than max_flows = {max_flows} flows; lower the load or the "
                    "window, or raise max_flows"
                )
    out.sort(key=lambda f: f[2])
    return out
