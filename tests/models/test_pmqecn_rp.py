# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The PMQECN reaction point, one event at a time (Algorithm 3, Eqs. 15-18)."""

from __future__ import annotations

import dataclasses

import pytest

from models.hosts import Phase, ReactionPoint, RpConfig

MBPS = 1e6
CFG = RpConfig(
    line_rate=10 * MBPS,
    min_rate=0.1 * MBPS,
    initial_rate=8 * MBPS,
    r_a=0.5 * MBPS,
    n_c=5,
    timer_period=0.01,
    byte_counter=1000,
)


def test_feedback_scales_rate_by_optimal_over_measured() -> None:
    rp = ReactionPoint(CFG)
    new = rp.on_feedback(rate=400.0, target_rate=100.0, now=0.001)
    assert new == pytest.approx(2 * MBPS)  # 8 Mbps * 100/400, Eqs. 15-16
    s = rp.state
    assert s.phase is Phase.FAST_RECOVERY
    assert s.target == pytest.approx(8 * MBPS)  # R_t = R_old
    assert s.cycles_left == CFG.n_c


def test_fast_recovery_halves_the_gap_for_n_c_cycles_then_increases() -> None:
    rp = ReactionPoint(CFG)
    rp.on_feedback(rate=400.0, target_rate=100.0, now=0.0)
    gap = 6 * MBPS
    for cycle in range(1, CFG.n_c + 1):
        assert rp.on_timer(now=cycle * CFG.timer_period) == 1
        gap /= 2  # Eq. 17: R_c = (R_c + R_t)/2
        assert rp.rate == pytest.approx(8 * MBPS - gap)
        assert rp.state.target == pytest.approx(8 * MBPS)
    assert rp.state.phase is Phase.ACTIVE_INCREASE
    assert 8 * MBPS - rp.rate == pytest.approx(6 * MBPS / 2**CFG.n_c)
    # Eq. 18: the target grows by R_A and the rate moves half way to it.
    before = rp.rate
    rp.on_timer(now=(CFG.n_c + 1) * CFG.timer_period)
    assert rp.state.target == pytest.approx(8.5 * MBPS)
    assert rp.rate == pytest.approx((before + 8.5 * MBPS) / 2)


def test_byte_counter_cycles_count_like_timer_cycles() -> None:
    rp = ReactionPoint(CFG)
    rp.on_feedback(rate=2.0, target_rate=1.0, now=0.0)
    assert rp.on_bytes_sent(999, now=0.0001) == 0
    assert rp.rate == pytest.approx(4 * MBPS)
    assert rp.on_bytes_sent(1, now=0.0002) == 1
    assert rp.rate == pytest.approx(6 * MBPS)
    assert rp.on_bytes_sent(2500, now=0.0003) == 2  # 2 full cycles, 500 bytes carried
    assert rp.state.bytes_in_cycle == 500
    assert rp.state.cycles_left == CFG.n_c - 3


def test_several_timer_periods_at_once_and_feedback_restarts_the_clock() -> None:
    rp = ReactionPoint(CFG)
    rp.on_feedback(rate=2.0, target_rate=1.0, now=0.0)
    assert rp.on_timer(now=0.035) == 3
    assert rp.state.timer_cycles == 3
    rp.on_feedback(rate=2.0, target_rate=1.0, now=0.036)
    assert rp.on_timer(now=0.045) == 0  # a new cycle started at the feedback
    assert rp.state.cycles_left == CFG.n_c


def test_active_increase_clamps_at_line_rate_and_stops() -> None:
    rp = ReactionPoint(CFG)
    rp.on_timer(now=100.0)  # 10_000 cycles of active increase
    assert rp.rate == pytest.approx(CFG.line_rate)
    assert rp.state.target == CFG.line_rate
    assert rp.rate <= CFG.line_rate


def test_reduction_clamps_at_min_rate() -> None:
    rp = ReactionPoint(CFG)
    rp.on_feedback(rate=1e6, target_rate=1.0, now=0.0)
    assert rp.rate == CFG.min_rate


def test_target_above_measured_neither_raises_the_rate_nor_restarts_recovery() -> None:
    rp = ReactionPoint(CFG)
    before = rp.state
    assert rp.on_feedback(rate=100.0, target_rate=300.0, now=0.0) == pytest.approx(8 * MBPS)
    assert rp.state.phase is before.phase
    assert (rp.state.target, rp.state.cycles_left) == (before.target, before.cycles_left)


def test_feedback_that_allows_the_rate_lets_the_increase_run() -> None:
    """An under-loaded port that keeps marking with an answer above the
    source's rate must not pin it: the rate climbs as with no feedback."""
    quiet, marked = ReactionPoint(CFG), ReactionPoint(CFG)
    period = CFG.timer_period
    for step in range(1, 6):
        t = step * period
        marked.on_feedback(rate=100.0, target_rate=200.0, now=t - period / 2)
        quiet.on_timer(t)
        marked.on_timer(t)
    assert marked.rate == pytest.approx(quiet.rate)
    assert marked.rate > CFG.initial_rate


def test_feedback_below_the_rate_still_cuts_and_restarts_recovery() -> None:
    rp = ReactionPoint(CFG)
    rp.on_feedback(rate=100.0, target_rate=50.0, now=0.0)
    assert rp.rate == pytest.approx(CFG.initial_rate / 2)
    assert rp.state.phase is Phase.FAST_RECOVERY


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"rate": 0.0}, "rate"),
        ({"rate": -1.0}, "rate"),
        ({"rate": float("nan")}, "rate"),
        ({"target_rate": 0.0}, "target_rate"),
        ({"target_rate": float("inf")}, "target_rate"),
        ({"target_rate": "1"}, "target_rate"),
        ({"now": -1.0}, "now"),
        ({"now": float("nan")}, "now"),
    ],
)
def test_bad_feedback_is_rejected_and_state_kept(kwargs: dict[str, object], name: str) -> None:
    rp = ReactionPoint(CFG)
    rp.on_timer(now=0.0)
    before = rp.state
    args: dict[str, object] = {"rate": 2.0, "target_rate": 1.0, "now": 0.0} | kwargs
    with pytest.raises(ValueError, match=rf"^{name} "):
        rp.on_feedback(**args)  # type: ignore[arg-type]
    assert rp.state == before


def test_bad_cycle_inputs() -> None:
    rp = ReactionPoint(CFG, now=1.0)
    with pytest.raises(ValueError, match=r"^now "):
        rp.on_timer(now=0.5)
    with pytest.raises(ValueError, match=r"^nbytes "):
        rp.on_bytes_sent(-1, now=1.0)
    with pytest.raises(ValueError, match=r"^nbytes "):
        rp.on_bytes_sent(1.5, now=1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"line_rate": 0.0}, "line_rate"),
        ({"min_rate": -1.0}, "min_rate"),
        ({"r_a": float("nan")}, "r_a"),
        ({"timer_period": 0.0}, "timer_period"),
        ({"n_c": 0}, "n_c"),
        ({"byte_counter": 0}, "byte_counter"),
        ({"initial_rate": 20 * MBPS}, "initial_rate"),
    ],
)
def test_bad_config(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} "):
        RpConfig(**kwargs)  # type: ignore[arg-type]


# ---- lambda* as a target, taken at most once per feedback interval -----------------

# CFG with its feedback taken once per 0.2 s and QCN's 150 KB byte counter.
FB = dataclasses.replace(CFG, byte_counter=150_000, feedback_interval=0.2)


def test_a_burst_of_feedback_in_one_interval_moves_the_rate_once() -> None:
    """Algorithm 3 applied per packet would cut 8 Mb/s by 0.25^100 (to the minimum)."""
    rp = ReactionPoint(FB)
    rates = [rp.on_feedback(rate=400.0, target_rate=100.0, now=0.001 * i) for i in range(1, 101)]
    assert rates == [pytest.approx(2 * MBPS)] * 100  # 8 Mb/s x 100/400, once
    assert rp.state.feedback_target == pytest.approx(2 * MBPS)


def test_the_same_answer_read_again_does_not_compound() -> None:
    rp = ReactionPoint(FB)
    rp.on_feedback(rate=400.0, target_rate=100.0, now=0.0)
    # Long after the interval, the switch still holds the same (lambda, lambda*).
    assert rp.on_feedback(rate=400.0, target_rate=100.0, now=1.0) == pytest.approx(2 * MBPS)


def test_a_new_answer_is_taken_once_the_interval_is_over() -> None:
    rp = ReactionPoint(FB)
    rp.on_feedback(rate=400.0, target_rate=100.0, now=0.0)  # 8 -> 2 Mb/s
    # Within the interval a new answer waits: the rate stays at the old target.
    assert rp.on_feedback(rate=100.0, target_rate=50.0, now=0.1) == pytest.approx(2 * MBPS)
    # After it, v* = lambda*/lambda x the mean rate over the last interval (2 Mb/s).
    assert rp.on_feedback(rate=100.0, target_rate=50.0, now=0.25) == pytest.approx(1 * MBPS)


def test_the_reference_is_the_mean_rate_over_the_last_interval() -> None:
    rp = ReactionPoint(FB)
    rp.on_feedback(rate=2.0, target_rate=1.0, now=0.0)  # 8 -> 4 Mb/s, recovery to 8
    rp.on_timer(now=0.1)  # 10 cycles in one go at t = 0.1: back at ~8 Mb/s from then
    rate_after = rp.rate
    # Mean over [0.1, 0.3]: the 0.1 s at 4 Mb/s has left the window.
    new = rp.on_feedback(rate=3.0, target_rate=1.5, now=0.3)
    assert new == pytest.approx(rate_after / 2)


def test_closed_loop_converges_to_the_target_not_the_minimum() -> None:
    """A switch that measures the source every 0.2 s and answers lambda* = 4 Mb/s,
    sending feedback every 2 ms while a fluid queue (drained at 4 Mb/s) holds data."""
    rp = ReactionPoint(RpConfig(**{**FB.__dict__, "initial_rate": 1 * MBPS, "r_a": 5 * MBPS}))
    target, dt, period = 4 * MBPS, 0.0005, 0.2
    queue_bits, window_bits, answer = 0.0, 0.0, (2.0, 1.0)
    tail: list[float] = []
    for step in range(1, 20_001):  # 10 s
        now = step * dt
        rp.on_timer(now)
        queue_bits = max(0.0, queue_bits + (rp.rate - target) * dt)
        window_bits += rp.rate * dt
        if step % round(period / dt) == 0:
            answer, window_bits = (window_bits / period, target), 0.0
        if queue_bits > 0.0 and step % 4 == 0:
            rp.on_feedback(*answer, now=now)
        if now > 8.0:
            tail.append(rp.rate)
    mean = sum(tail) / len(tail)
    assert mean == pytest.approx(target, rel=0.15)
    assert min(tail) >= 0.8 * target


def test_bad_feedback_interval() -> None:
    with pytest.raises(ValueError, match=r"^feedback_interval "):
        RpConfig(feedback_interval=0.0)
