# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN/QCN reaction point: Eqs. 2-4 of P4QCN (seed 003), step by step."""

from __future__ import annotations

import dataclasses

import pytest

from models.baselines import QcnReactionPoint, QcnRpParams, RpStage

LINE = 10e9
B = 150_000
BASE = QcnRpParams(line_rate_bps=LINE, min_rate_bps=1e6)


def rp(**overrides: object) -> QcnReactionPoint:
    return QcnReactionPoint(dataclasses.replace(BASE, **overrides))  # type: ignore[arg-type]


def test_defaults_follow_p4qcn_and_qcn() -> None:
    p = BASE
    assert (p.beta, p.fast_recovery_cycles, p.rai_bps) == (1.0, 5, 5e6)
    assert (p.byte_counter_bytes, p.timer_ns) == (150_000, None)


def test_idle_until_the_first_feedback() -> None:
    r = rp()
    assert r.stage is RpStage.IDLE
    r.on_bytes_sent(100 * B, 0)
    assert (r.rate_bps, r.target_rate_bps, r.byte_count) == (LINE, LINE, 0)


@pytest.mark.parametrize(("beta", "rc"), [(1.0, 5e9), (0.5, 7.5e9), (0.25, 8.75e9)])
def test_eq2_rate_reduction(beta: float, rc: float) -> None:
    r = rp(beta=beta)
    r.on_feedback(0)
    assert r.target_rate_bps == LINE  # Rt = R_old
    assert r.rate_bps == rc  # Rc (1 - beta/2)
    assert r.rate_deficit_bps == LINE - rc  # Rd = Rt - Rc
    assert r.stage is RpStage.FAST_RECOVERY


def test_eq3_fast_recovery_halves_the_deficit_for_n_cycles() -> None:
    r = rp()
    r.on_feedback(0)
    rd = 5e9
    for cycle in range(1, 6):
        assert r.stage is RpStage.FAST_RECOVERY
        r.on_bytes_sent(B, cycle)
        rd /= 2
        assert r.target_rate_bps == LINE  # Rt unchanged
        assert r.rate_deficit_bps == rd  # Rc = (Rt + Rc) / 2
        assert r.cycles == cycle
    assert r.rate_bps == LINE - 5e9 / 32
    assert r.stage is RpStage.ADDITIVE_INCREASE


def test_eq4_active_increase_after_n_cycles() -> None:
    r = rp()
    r.on_feedback(0)
    r.on_feedback(1)  # Rt = 5G, Rc = 2.5G
    rt, rc = 5e9, 2.5e9
    assert (r.target_rate_bps, r.rate_bps) == (rt, rc)
    for _ in range(5):
        r.on_bytes_sent(B, 2)
        rc = (rt + rc) / 2
    for cycle in range(6, 10):
        assert r.stage is RpStage.ADDITIVE_INCREASE
        r.on_bytes_sent(B, cycle)
        rt += 5e6  # Rt = Rt + R_AI
        rc = (rt + rc) / 2  # Rc = (Rt + Rc) / 2
        assert r.target_rate_bps == pytest.approx(rt)
        assert r.rate_bps == pytest.approx(rc)


def test_feedback_during_recovery_takes_the_current_rate_as_target() -> None:
    r = rp()
    r.on_feedback(0)
    r.on_bytes_sent(2 * B, 1)  # Rc = 8.75G
    r.on_bytes_sent(B // 2, 2)  # half a cycle pending
    r.on_feedback(3)
    assert (r.target_rate_bps, r.rate_bps) == (8.75e9, 4.375e9)
    assert r.cycles == 0
    r.on_bytes_sent(B - 1, 4)  # the pending half cycle was discarded
    assert r.cycles == 0
    r.on_bytes_sent(1, 5)
    assert r.cycles == 1


def test_a_cycle_needs_exactly_b_bytes() -> None:
    r = rp()
    r.on_feedback(0)
    r.on_bytes_sent(B - 1, 1)
    assert r.rate_bps == 5e9
    r.on_bytes_sent(1, 2)
    assert r.rate_bps == 7.5e9
    r.on_bytes_sent(3 * B, 3)  # several cycles in one call
    assert r.cycles == 4


def test_no_timer_unless_configured() -> None:
    r = rp()
    r.on_feedback(0)
    assert r.next_timer_ns is None
    r.on_timer(10**12)
    assert (r.rate_bps, r.cycles) == (5e9, 0)


def test_optional_qcn_timer_counts_cycles_too() -> None:
    r = rp(timer_ns=1_000)
    r.on_feedback(0)
    assert r.next_timer_ns == 1_000
    r.on_timer(999)
    assert r.timer_count == 0
    r.on_timer(3_000)
    assert (r.timer_count, r.rate_bps) == (3, LINE - 5e9 / 8)
    r.on_bytes_sent(2 * B, 3_000)  # max(T, BC) = 3: still fast recovery
    assert r.cycles == 3
    assert r.rate_bps == LINE - 5e9 / 32
    r.on_timer(5_000)  # T reaches 5
    assert r.stage is RpStage.ADDITIVE_INCREASE


def test_rates_clamped_to_min_and_line() -> None:
    r = rp()
    for t in range(40):
        r.on_feedback(t)
    assert r.rate_bps == 1e6
    r.on_bytes_sent(10_000 * B, 100)
    assert r.target_rate_bps == LINE
    assert r.rate_bps <= LINE


def test_time_and_byte_inputs_are_checked() -> None:
    r = rp()
    r.on_feedback(10)
    with pytest.raises(ValueError, match="now_ns"):
        r.on_bytes_sent(B, 9)
    with pytest.raises(ValueError, match="n_bytes"):
        r.on_bytes_sent(1.5, 20)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"line_rate_bps": -1}, "line_rate_bps"),
        ({"min_rate_bps": 0}, "min_rate_bps"),
        ({"min_rate_bps": 2 * LINE}, "min_rate_bps"),
        ({"beta": 0}, "beta"),
        ({"beta": 1.01}, "beta"),
        ({"fast_recovery_cycles": 0}, "fast_recovery_cycles"),
        ({"rai_bps": -5e6}, "rai_bps"),
        ({"byte_counter_bytes": 0}, "byte_counter_bytes"),
        ({"byte_counter_bytes": 1.5e5}, "byte_counter_bytes"),
        ({"timer_ns": 0}, "timer_ns"),
    ],
)
def test_bad_parameters_name_themselves(overrides: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        rp(**overrides)


def test_rates_have_no_default() -> None:
    with pytest.raises(TypeError):
        QcnRpParams()  # type: ignore[call-arg]


# How seed 000 ran P4QCN (its authors' RP): options, each off by default.


def test_only_every_kth_feedback_cuts() -> None:
    r = rp(feedback_packets_per_cut=26)
    for t in range(25):
        r.on_feedback(t)
    assert (r.rate_bps, r.stage) == (LINE, RpStage.IDLE)
    r.on_feedback(25)
    assert r.rate_bps == LINE / 2
    for t in range(26, 51):
        r.on_feedback(t)
    assert r.rate_bps == LINE / 2  # the count restarts after a cut
    r.on_feedback(51)
    assert r.rate_bps == LINE / 4


def test_ignored_feedback_does_not_restart_recovery() -> None:
    r = rp(feedback_packets_per_cut=2, timer_ns=1_000)
    r.on_feedback(0)
    r.on_feedback(1)  # cuts
    r.on_feedback(500)  # counted, ignored: the timer keeps its deadline
    r.on_timer(1_001)
    assert r.timer_count == 1


def test_random_beta_is_uniform_below_beta_and_seeded() -> None:
    cuts = []
    for seed in (1, 1, 2):
        r = rp(random_beta=True, seed=seed, beta=1.0)
        r.on_feedback(0)
        cuts.append(r.rate_bps)
    assert cuts[0] == cuts[1] != cuts[2]
    factors = []
    r = rp(random_beta=True, seed=7)
    for t in range(2000):
        before = r.rate_bps
        r.on_feedback(t)
        factors.append(r.rate_bps / before)
        r = rp(random_beta=True, seed=7 + t + 1)
    assert all(0.5 < f <= 1.0 for f in factors)
    assert sum(factors) / len(factors) == pytest.approx(0.75, abs=0.01)


def test_initial_rate_starts_in_active_increase_on_the_timer() -> None:
    r = rp(initial_rate_bps=1e6, timer_ns=1_000_000_000, byte_counter_bytes=None)
    assert (r.rate_bps, r.target_rate_bps, r.stage) == (1e6, 1e6, RpStage.ADDITIVE_INCREASE)
    r.on_bytes_sent(10**9, 10)  # no byte counter: bytes end no cycle
    assert r.rate_bps == 1e6
    r.on_timer(1_000_000_000)  # Eq. 4: Rt += R_AI, Rc = (Rt + Rc) / 2
    assert (r.target_rate_bps, r.rate_bps) == (6e6, 3.5e6)


def test_no_byte_counter_needs_a_timer_and_start_within_rates() -> None:
    with pytest.raises(ValueError, match="timer_ns"):
        rp(byte_counter_bytes=None)
    with pytest.raises(ValueError, match="initial_rate_bps"):
        rp(initial_rate_bps=0.5e6)
    with pytest.raises(ValueError, match="feedback_packets_per_cut"):
        rp(feedback_packets_per_cut=0)
