# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DCQCN notification and reaction points, step by step against Zhu et al. 2015 Sec. 3.1."""

from __future__ import annotations

import dataclasses

import pytest

from models.baselines import (
    DcqcnNotificationPoint,
    DcqcnReactionPoint,
    DcqcnRpParams,
    RpStage,
)

US = 1_000
G = 1.0 / 256.0
LINE = 40e9
T_NS = 55 * US  # rate timer
K_NS = 55 * US  # alpha timer


def rp(**overrides: object) -> DcqcnReactionPoint:
    return DcqcnReactionPoint(dataclasses.replace(DcqcnRpParams(), **overrides))  # type: ignore[arg-type]


# --- notification point -------------------------------------------------------------


def test_np_one_cnp_per_flow_per_50us_window() -> None:
    np_ = DcqcnNotificationPoint()
    assert np_.cnp_interval_ns == 50 * US
    assert not np_.on_packet("qp1", False, 0)  # unmarked: nothing to report
    assert np_.on_packet("qp1", True, 10)
    assert not np_.on_packet("qp1", True, 10 + 50 * US - 1)
    assert np_.on_packet("qp2", True, 10 + 50 * US - 1)  # per flow
    assert np_.on_packet("qp1", True, 10 + 50 * US)  # exactly N later
    assert np_.last_cnp_ns("qp1") == 10 + 50 * US


def test_np_unmarked_packets_never_open_or_extend_a_window() -> None:
    np_ = DcqcnNotificationPoint(cnp_interval_ns=100)
    for t in range(0, 1_000, 10):
        assert not np_.on_packet("qp", False, t)
    assert np_.last_cnp_ns("qp") is None
    assert np_.on_packet("qp", True, 1_000)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True])
def test_np_bad_interval(bad: object) -> None:
    with pytest.raises(ValueError, match="cnp_interval_ns"):
        DcqcnNotificationPoint(cnp_interval_ns=bad)  # type: ignore[arg-type]


def test_np_time_running_backwards_is_refused() -> None:
    np_ = DcqcnNotificationPoint()
    np_.on_packet("qp", False, 100)
    with pytest.raises(ValueError, match="now_ns"):
        np_.on_packet("qp", True, 99)


# --- reaction point: decrease and alpha ---------------------------------------------


def test_defaults_match_the_documented_sources() -> None:
    p = DcqcnRpParams()
    assert (p.g, p.alpha_timer_ns, p.rate_timer_ns, p.fast_recovery_steps) == (G, K_NS, T_NS, 5)
    assert (p.byte_counter_bytes, p.rai_bps, p.rhai_bps) == (10_000_000, 40e6, 200e6)
    assert (p.line_rate_bps, p.min_rate_bps, p.alpha_init) == (LINE, 100e6, 1.0)


def test_idle_before_the_first_cnp() -> None:
    r = rp()
    assert r.stage is RpStage.IDLE
    assert (r.rate_bps, r.target_rate_bps, r.alpha) == (LINE, LINE, 1.0)
    assert r.next_timer_ns is None
    r.on_bytes_sent(100_000_000, 0)
    r.on_timer(10**9)
    assert (r.rate_bps, r.target_rate_bps, r.alpha) == (LINE, LINE, 1.0)


def test_cnp_cuts_with_the_current_alpha_then_updates_it() -> None:
    r = rp(alpha_init=0.5)
    r.on_feedback(0)
    assert r.target_rate_bps == LINE  # Rt = Rc
    assert r.rate_bps == LINE * (1 - 0.5 / 2)  # Rc (1 - alpha/2) with the old alpha
    assert r.alpha == pytest.approx((1 - G) * 0.5 + G)
    assert r.stage is RpStage.FAST_RECOVERY
    assert (r.timer_count, r.byte_count) == (0, 0)


def test_alpha_update_before_cut_reproduces_the_ns3_models() -> None:
    r = rp(alpha_init=0.5, alpha_update_before_cut=True)
    r.on_feedback(0)
    alpha = (1 - G) * 0.5 + G
    assert r.alpha == pytest.approx(alpha)
    assert r.rate_bps == pytest.approx(LINE * (1 - alpha / 2))


def test_first_cnp_with_alpha_one_halves_the_rate() -> None:
    r = rp()
    r.on_feedback(0)
    assert (r.rate_bps, r.target_rate_bps, r.alpha) == (LINE / 2, LINE, 1.0)


def test_alpha_decays_every_k_without_cnp_and_a_cnp_restarts_the_clock() -> None:
    r = rp(alpha_init=0.5, rate_timer_ns=10**9)  # keep the rate timer out of the way
    r.on_feedback(0)
    a1 = (1 - G) * 0.5 + G
    r.on_timer(K_NS - 1)
    assert r.alpha == pytest.approx(a1)
    r.on_timer(K_NS)
    assert r.alpha == pytest.approx(a1 * (1 - G))
    r.on_timer(2 * K_NS)
    assert r.alpha == pytest.approx(a1 * (1 - G) ** 2)
    r.on_feedback(2 * K_NS + 10)
    a2 = (1 - G) * a1 * (1 - G) ** 2 + G
    assert r.alpha == pytest.approx(a2)
    r.on_timer(3 * K_NS)  # the old schedule would have fired here
    assert r.alpha == pytest.approx(a2)
    r.on_timer(3 * K_NS + 10)
    assert r.alpha == pytest.approx(a2 * (1 - G))


# --- reaction point: increase phases -------------------------------------------------


def test_fast_recovery_reaches_the_target_gap_over_2_to_the_f_in_f_timer_steps() -> None:
    r = rp()
    r.on_feedback(0)  # Rc = 20G, Rt = 40G
    gap = LINE / 2
    for k in range(1, 6):
        assert r.stage is RpStage.FAST_RECOVERY
        r.on_timer(k * T_NS)
        assert r.target_rate_bps == LINE  # Rt fixed during fast recovery
        assert r.rate_bps == LINE - gap / 2**k  # Rc = (Rt + Rc) / 2
        assert r.timer_count == k
    assert r.stage is RpStage.ADDITIVE_INCREASE


def test_additive_increase_after_fast_recovery() -> None:
    r = rp()
    r.on_feedback(0)
    r.on_feedback(1)  # second cut: Rt = 20G, Rc = 10G
    assert (r.rate_bps, r.target_rate_bps) == (10e9, 20e9)
    rc, rt = 10e9, 20e9
    for k in range(1, 6):
        r.on_timer(1 + k * T_NS)
        rc = (rt + rc) / 2
        assert r.rate_bps == rc
    for k in range(6, 9):
        assert r.stage is RpStage.ADDITIVE_INCREASE
        r.on_timer(1 + k * T_NS)
        rt += 40e6
        rc = (rt + rc) / 2
        assert r.target_rate_bps == pytest.approx(rt)
        assert r.rate_bps == pytest.approx(rc)


def test_hyper_increase_when_both_counters_pass_f() -> None:
    b = 1_000
    r = rp(byte_counter_bytes=b)
    r.on_feedback(0)
    r.on_feedback(1)
    rc, rt = 10e9, 20e9
    now = 2
    # Five byte-counter cycles: fast recovery (T = 0, BC = 0..4).
    for _ in range(5):
        r.on_bytes_sent(b, now)
        rc = (rt + rc) / 2
    assert (r.byte_count, r.rate_bps, r.target_rate_bps) == (5, rc, rt)
    # Timer cycles with BC = 5 >= F but T < F: additive increase.
    for k in range(1, 6):
        assert r.stage is RpStage.ADDITIVE_INCREASE
        r.on_timer(1 + k * T_NS)
        rt += 40e6
        rc = (rt + rc) / 2
    assert r.timer_count == 5
    # Both counts at F: hyper increase with i = min(T, BC) - F + 1.
    assert r.stage is RpStage.HYPER_INCREASE
    now = 1 + 5 * T_NS
    r.on_bytes_sent(b, now)  # T = 5, BC = 5: i = 1
    rt += 1 * 200e6
    rc = (rt + rc) / 2
    assert r.target_rate_bps == pytest.approx(rt)
    assert r.rate_bps == pytest.approx(rc)
    r.on_bytes_sent(b, now)  # T = 5, BC = 6: i = 1
    rt += 1 * 200e6
    rc = (rt + rc) / 2
    r.on_timer(1 + 6 * T_NS)  # T = 5, BC = 7: i = 1
    rt += 1 * 200e6
    rc = (rt + rc) / 2
    r.on_bytes_sent(b, 1 + 6 * T_NS)  # T = 6, BC = 7: i = 2
    rt += 2 * 200e6
    rc = (rt + rc) / 2
    assert (r.timer_count, r.byte_count) == (6, 8)
    assert r.target_rate_bps == pytest.approx(rt)
    assert r.rate_bps == pytest.approx(rc)


def test_byte_counter_carries_partial_cycles_and_counts_several_at_once() -> None:
    b = 1_000
    r = rp(byte_counter_bytes=b)
    r.on_feedback(0)
    r.on_bytes_sent(b - 1, 1)
    assert r.byte_count == 0
    r.on_bytes_sent(1, 2)
    assert r.byte_count == 1
    r.on_bytes_sent(3 * b + 500, 3)
    assert r.byte_count == 4
    r.on_feedback(4)  # a CNP discards the partial cycle
    r.on_bytes_sent(b - 1, 5)
    assert r.byte_count == 0


def test_rate_stays_within_min_and_line_rate() -> None:
    r = rp()
    for t in range(20):
        r.on_feedback(t)
    assert r.rate_bps == 100e6  # floored at min_rate
    r.on_timer(10**8)  # ~1800 timer cycles: hyper increase for most of them
    assert r.target_rate_bps == LINE
    assert r.rate_bps <= LINE
    assert r.rate_bps == pytest.approx(LINE)


def test_lazy_timer_firing_matches_calling_at_every_deadline() -> None:
    eager, lazy = rp(alpha_init=0.3), rp(alpha_init=0.3)
    for r in (eager, lazy):
        r.on_feedback(0)
    end = 20 * T_NS + 7
    while (due := eager.next_timer_ns) is not None and due <= end:
        eager.on_timer(due)
    lazy.on_bytes_sent(0, end)
    eager.on_timer(end)
    assert (lazy.rate_bps, lazy.target_rate_bps, lazy.alpha, lazy.timer_count) == (
        eager.rate_bps,
        eager.target_rate_bps,
        eager.alpha,
        eager.timer_count,
    )
    assert lazy.next_timer_ns == 21 * T_NS


def test_timer_due_with_a_cnp_fires_first() -> None:
    r = rp(alpha_init=0.5, alpha_timer_ns=10**9)
    r.on_feedback(0)  # Rc = 30G, Rt = 40G
    r.on_feedback(T_NS)  # fast recovery to 35G first, then the cut from 35G
    assert r.target_rate_bps == 35e9
    assert r.timer_count == 0


def test_time_and_byte_inputs_are_checked() -> None:
    r = rp()
    r.on_feedback(100)
    with pytest.raises(ValueError, match="now_ns"):
        r.on_timer(99)
    with pytest.raises(ValueError, match="n_bytes"):
        r.on_bytes_sent(-1, 200)
    with pytest.raises(ValueError, match="now_ns"):
        r.on_feedback(-1)


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"line_rate_bps": 0}, "line_rate_bps"),
        ({"min_rate_bps": -1}, "min_rate_bps"),
        ({"min_rate_bps": 50e9}, "min_rate_bps"),
        ({"g": 0.0}, "g"),
        ({"g": 1.5}, "g"),
        ({"alpha_init": 1.1}, "alpha_init"),
        ({"alpha_timer_ns": 0}, "alpha_timer_ns"),
        ({"rate_timer_ns": 55.0}, "rate_timer_ns"),
        ({"byte_counter_bytes": 0}, "byte_counter_bytes"),
        ({"fast_recovery_steps": 0}, "fast_recovery_steps"),
        ({"rai_bps": -1}, "rai_bps"),
        ({"rhai_bps": float("nan")}, "rhai_bps"),
        ({"alpha_update_before_cut": 1}, "alpha_update_before_cut"),
    ],
)
def test_bad_parameters_name_themselves(overrides: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        rp(**overrides)
