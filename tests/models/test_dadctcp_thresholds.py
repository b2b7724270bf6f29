# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Algorithm 2 of seed 004 on hand-computed cases: where the printed rule
keeps Eq. 11, where it breaks it, and what `reallocate` does instead."""

from __future__ import annotations

import random
import re

import pytest

from models.dadctcp_thresholds import (
    ThresholdError,
    algorithm2_as_printed,
    idle_queues,
    reallocate,
)


def test_printed_first_round_busy_port_keeps_the_sum() -> None:
    # q = [18, 4], K = [10, 10], K_port 20: total_q 22 >= 20, K_rest = 6.
    # Busy queue: 10 + 18/22 x 6 = 14.909; idle: 4 + 4/22 x 6 = 5.091.
    out = algorithm2_as_printed([18, 4], [10, 10], [10, 10])
    assert out == pytest.approx([10 + 18 / 22 * 6, 4 + 4 / 22 * 6])
    assert sum(out) == pytest.approx(20)


def test_printed_first_round_idle_port_keeps_the_sum() -> None:
    # q = [15, 3], K = [10, 10]: total_q 18 < 20, K_over = 5.
    # Busy: 15 - 15/18 x 5 = 10.833; idle: 10 - 3/18 x 5 = 9.167.
    out = algorithm2_as_printed([15, 3], [10, 10], [10, 10])
    assert out == pytest.approx([15 - 15 / 18 * 5, 10 - 3 / 18 * 5])
    assert sum(out) == pytest.approx(20)


def test_printed_second_round_with_fixed_baseline_breaks_the_sum() -> None:
    # Round 2 from round 1's [14.909, 5.091], baseline still [10, 10], same q:
    # busy 10 + 18/22 x 1.091 = 10.893, idle 4 + 4/22 x 1.091 = 4.198: 15.09, not 20.
    k_old = algorithm2_as_printed([18, 4], [10, 10], [10, 10])
    out = algorithm2_as_printed([18, 4], [10, 10], k_old)
    assert sum(out) == pytest.approx(15.0909, abs=1e-3)


def test_printed_idle_port_lowers_an_unmarked_queue_below_its_depth() -> None:
    # q = [12, 10, 5], K = [10, 10, 10]: total 27 < 30, K_over 2. The second
    # queue (10 of 10: not marked) gets 10 - 10/27 x 2 = 9.26 < 10: Eq. 11(b) broken.
    out = algorithm2_as_printed([12, 10, 5], [10, 10, 10], [10, 10, 10])
    assert out[1] == pytest.approx(10 - 10 / 27 * 2)
    assert out[1] < 10


def test_printed_divides_by_zero_on_an_empty_port() -> None:
    with pytest.raises(ZeroDivisionError):
        algorithm2_as_printed([0, 0], [10, 10], [10, 10])


def test_reallocate_busy_port() -> None:
    r = reallocate([18, 4], [10, 10], 20)
    assert r.busy and r.k_rest == 6
    assert r.k_new == (15, 5)  # 14.909 and 5.091, largest remainder to the first


def test_reallocate_keeps_the_sum_in_every_round() -> None:
    k = [10, 10]
    for _ in range(5):
        k = list(reallocate([18, 4], k, 20).k_new)
        assert sum(k) == 20


def test_reallocate_keeps_an_unmarked_queue_at_or_above_its_depth() -> None:
    r = reallocate([12, 10, 5], [10, 10, 10], 30)
    assert not r.busy
    assert r.k_new[1] >= 10  # printed: 9.26
    assert sum(r.k_new) == 30
    assert "Eq. 11b" in r.why


def test_reallocate_empty_port_keeps_the_thresholds() -> None:
    r = reallocate([0, 0, 0], [5, 10, 15], 30)
    assert r.k_new == (5, 10, 15)


def test_reallocate_random_ports_keep_eq_11a_and_the_floor() -> None:
    rng = random.Random(11)
    for _ in range(500):
        n = rng.randint(1, 8)
        k_port = rng.randint(n * 2, 400)
        cuts = sorted(rng.sample(range(1, k_port), n - 1)) if n > 1 else []
        k_old = [b - a for a, b in zip([0, *cuts], [*cuts, k_port], strict=True)]
        if min(k_old) < 1:
            continue
        q = [rng.uniform(0, 2 * kj) for kj in k_old]
        r = reallocate(q, k_old, k_port)
        assert sum(r.k_new) == k_port
        assert min(r.k_new) >= 1
        if sum(q) < k_port:
            for qj, ko, kn in zip(q, k_old, r.k_new, strict=True):
                if qj <= ko:
                    assert kn >= qj - 1e-9


@pytest.mark.parametrize(
    ("q", "k_old", "k_port", "field"),
    [
        ([1, 2], [10], 10, "q"),
        ([-1, 2], [10, 10], 20, "q[0]"),
        ([1, float("nan")], [10, 10], 20, "q[1]"),
        ([1, 2], [10, 0], 10, "k_old[1]"),
        ([1, 2], [10, 10], 25, "k_old"),
    ],
)
def test_bad_inputs_name_the_field(
    q: list[float], k_old: list[int], k_port: int, field: str
) -> None:
    with pytest.raises(ThresholdError, match="^" + re.escape(field) + "[: ]"):
        reallocate(q, k_old, k_port)


def test_idle_queues_by_the_age_of_their_latest_departure() -> None:
    # Ticks of 64 ns; idle age 31 ticks (2 us). Queue 2 never sent; queue 1
    # sent 40 ticks before the freshest (queue 0); queue 3 20 ticks before.
    assert idle_queues([1000, 960, 0, 980], None, 31) == [False, True, True, False]


def test_idle_queues_unchanged_since_the_previous_round() -> None:
    # Nothing left queues 0 and 1 since the last read: idle, however fresh
    # they are against each other.
    assert idle_queues([1000, 999, 2000], [1000, 999, 1500], 31) == [True, True, False]
    assert idle_queues([5, 5], [5, 5], 31) == [True, True]


def test_idle_queues_across_the_stamp_wrap() -> None:
    # The freshest stamp wrapped past 2^32: 10 is 26 ticks after 2^32 - 16.
    top = (1 << 32) - 16
    assert idle_queues([top, 10, top - 100], None, 31) == [False, False, True]


def test_idle_queues_refuses_bad_inputs() -> None:
    with pytest.raises(ThresholdError, match="idle_age_ticks"):
        idle_queues([1], None, 0)
    with pytest.raises(ThresholdError, match="previous_ticks"):
        idle_queues([1, 2], [1], 5)
