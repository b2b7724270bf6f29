# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP's per-queue threshold reallocation (seed 004, section 3.2,
Eqs. 10-14, Algorithm 2), in the paper's unit: packets.

Algorithm 2 moves threshold from idle queues of a port (q_j < K_j: K_rest)
to busy ones (q_j > K_j: K_over) under Eq. 11: (a) the thresholds of a
port sum to K_port, (b) K_j > q_j. Read as printed it keeps neither:

* The reallocation (lines 10-26) sits inside the loop that sums q, K,
  K_over and K_rest (lines 2-9, `end for` at line 27), so early queues
  would be reallocated from partial sums. Here the sums come first.
* It adds the shares to K_baseline for some queues and to q_j for others.
  With the sums first, the new thresholds total
  sum_over K_baseline + sum_under K_old (when total_q >= total_k) or
  sum_over K_old + sum_under K_baseline (otherwise): K_port only while
  K_baseline = K_old, i.e. in the first round. The algorithm's output is
  "the new threshold baseline", so `reallocate` reads K_baseline as the
  previous round's output, K_old; then (a) holds in every round.
* When total_q < total_k, line 23 lowers an idle queue's threshold by its
  share of K_over, which can put it below the queue (q = [12, 10, 5],
  K = [10, 10, 10]: the second queue, unmarked at 10 of 10, gets 9.26 and
  its next packets are marked), which (b) exists to prevent. `reallocate`
  keeps such a queue at q_j and takes the difference from the busy
  queues, which are above their thresholds and marked either way.
* When total_q >= K_port, (b) cannot hold for every queue (the K_j sum to
  K_port <= total_q); the printed rule is kept.
* total_q = 0 (every queue empty) divides by zero; the thresholds stay.

`algorithm2_as_printed` is the printed rule with the sums first, for the
tests that show where it breaks Eq. 11.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


class ThresholdError(ValueError):
    """Inputs that make no reallocation (the message names the input)."""


@dataclass(frozen=True)
class Reallocation:
    k_new: tuple[int, ...]  # packets, summing to K_port
    busy: bool  # total_q >= K_port (Algorithm 2's first branch)
    k_over: float
    k_rest: float
    why: str


def _sums(q: Sequence[float], k_old: Sequence[float]) -> tuple[float, float, float, float]:
    total_q = float(sum(q))
    total_k = float(sum(k_old))
    over = sum(qj - kj for qj, kj in zip(q, k_old, strict=True) if qj > kj)
    rest = sum(kj - qj for qj, kj in zip(q, k_old, strict=True) if qj <= kj)
    return total_q, total_k, over, rest


def algorithm2_as_printed(
    q: Sequence[float], k_baseline: Sequence[float], k_old: Sequence[float]
) -> list[float]:
    """Lines 10-26 with the sums of lines 2-9 taken first (floats, no repair)."""
    total_q, total_k, over, rest = _sums(q, k_old)
    if total_q == 0:
        raise ZeroDivisionError("total_q is 0: Algorithm 2 divides by it")
    out = []
    for qj, kb, ko in zip(q, k_baseline, k_old, strict=True):
        share = qj / total_q
        if total_q >= total_k:
            out.append(kb + share * rest if qj > ko else qj + share * rest)
        else:
            out.append(qj - share * over if qj > ko else kb - share * over)
    return out


def _check(q: Sequence[float], k_old: Sequence[int], k_port: int, min_k: int) -> None:
    if len(q) != len(k_old) or not q:
        raise ThresholdError(f"q: {len(q)} depths for {len(k_old)} thresholds")
    for i, qj in enumerate(q):
        if not (math.isfinite(qj) and qj >= 0):
            raise ThresholdError(f"q[{i}] must be a finite depth >= 0, got {qj!r}")
    for i, kj in enumerate(k_old):
        if isinstance(kj, bool) or not isinstance(kj, int) or kj < min_k:
            raise ThresholdError(f"k_old[{i}] must be an integer >= {min_k}, got {kj!r}")
    if sum(k_old) != k_port:
        raise ThresholdError(f"k_old: sums to {sum(k_old)}, K_port is {k_port}")
    if k_port < min_k * len(q):
        raise ThresholdError(
            f"k_port {k_port} leaves fewer than {min_k} packets for each of {len(q)} queues"
        )


def whole_packets(values: Sequence[float], total: int, floor: Sequence[int]) -> list[int]:
    """Whole packets summing to `total`, none below its floor: floors first,
    then largest remainders (ties to the lower index)."""
    base = [max(f, math.floor(v)) for v, f in zip(values, floor, strict=True)]
    left = total - sum(base)
    if left < 0:
        # Floors pushed the sum over: take back from the largest, never below a floor.
        for i in sorted(range(len(base)), key=lambda j: (-base[j], j)):
            take = min(-left, base[i] - floor[i])
            base[i] -= take
            left += take
            if left == 0:
                break
        return base
    order = sorted(range(len(values)), key=lambda j: (-(values[j] - math.floor(values[j])), j))
    for i in order[:left]:
        base[i] += 1
    return base


def reallocate(
    q: Sequence[float], k_old: Sequence[int], k_port: int, min_k: int = 1
) -> Reallocation:
    """Algorithm 2 with K_baseline = K_old (one round), repaired as the
    module docstring says; every threshold >= min_k, their sum K_port."""
    _check(q, k_old, k_port, min_k)
    total_q, _, over, rest = _sums(q, k_old)
    busy = total_q >= k_port
    if total_q == 0:
        return Reallocation(tuple(k_old), busy, over, rest, "every queue empty: unchanged")
    raw = algorithm2_as_printed(q, k_old, k_old)
    floor = [min_k] * len(q)
    why = "busy port: idle share to busy queues" if busy else "idle port: overflow shared out"
    if not busy:
        # Eq. 11(b) for the queues that were within their thresholds.
        for i, (qj, kj) in enumerate(zip(q, k_old, strict=True)):
            if qj <= kj:
                floor[i] = max(min_k, math.ceil(qj))
        deficit = sum(max(0.0, f - r) for f, r in zip(floor, raw, strict=True))
        if deficit > 0:
            donors = [i for i, (qj, kj) in enumerate(zip(q, k_old, strict=True)) if qj > kj]
            room = sum(max(0.0, raw[i] - min_k) for i in donors)
            scale = min(1.0, deficit / room) if room > 0 else 0.0
            raw = [
                max(f, r) if i not in donors else r - scale * max(0.0, r - min_k)
                for i, (f, r) in enumerate(zip(floor, raw, strict=True))
            ]
            why += f"; {deficit:.2f} packets kept on idle queues (Eq. 11b)"
    k_new = whole_packets(raw, k_port, floor)
    return Reallocation(tuple(k_new), busy, over, rest, why)


# The P4's departure stamps (tna/dadctcp, `last_departure`): 64 ns ticks, 32 bits.
TICK_NS = 64
STAMP_MODULUS = 1 << 32


def idle_queues(
    stamps_ticks: Sequence[int],
    previous_ticks: Sequence[int] | None,
    idle_age_ticks: int,
) -> list[bool]:
    """Which queues hold nothing, from the time of each one's latest departure.

    The depth register keeps what the queue's latest departure saw until the
    next departure, so a queue that stopped receiving keeps it for ever. A
    queue is idle (its depth read as 0) when:

    * it never sent (stamp 0, the register's initial value);
    * its stamp is the one read the previous round: nothing left it for a
      whole interval, which a queue holding packets on a running port does
      not do (a queue paused by PFC or starved by a strict-priority queue
      above it reads idle too, and its next departure makes it busy again);
    * its latest departure is more than `idle_age_ticks` older than the
      freshest departure of the others that sent since the previous round
      (the clock "now" that a controller without the chip's clock can read).

    Stamps wrap after 2^32 ticks (275 s); the third test compares stamps of
    queues that sent within one interval (at most 60 s), so modulo 2^32
    their differences are exact.
    """
    if idle_age_ticks <= 0:
        raise ThresholdError(f"idle_age_ticks must be > 0, got {idle_age_ticks}")
    if previous_ticks is not None and len(previous_ticks) != len(stamps_ticks):
        raise ThresholdError(
            f"previous_ticks: {len(previous_ticks)} stamps for {len(stamps_ticks)} queues"
        )
    idle = [s == 0 for s in stamps_ticks]
    if previous_ticks is not None:
        idle = [i or s == p for i, s, p in zip(idle, stamps_ticks, previous_ticks, strict=True)]
    recent = [j for j, i in enumerate(idle) if not i]
    if not recent:
        return idle
    # Signed offsets from one recent stamp: the freshest has the largest.
    half = STAMP_MODULUS // 2
    ref = stamps_ticks[recent[0]]
    offset = {j: (stamps_ticks[j] - ref + half) % STAMP_MODULUS - half for j in recent}
    freshest = max(offset.values())
    for j in recent:
        if freshest - offset[j] > idle_age_ticks:
            idle[j] = True
    return idle
