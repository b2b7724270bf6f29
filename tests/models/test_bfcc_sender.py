# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC's sender reaction (match_switch), one message at a time."""

from __future__ import annotations

import pytest

from models.hosts import BfccSender, SenderReactionConfig, State

MBPS = 1e6
BP, CLEAR = 2, 3


def sender(**kw: object) -> BfccSender:
    return BfccSender(SenderReactionConfig(base_rate_bps=8 * MBPS, group=1, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize(("degree", "share"), [(1, 9 / 10), (2, 3 / 4), (3, 1 / 2)])
def test_backpressure_cuts_to_the_switchs_share(degree: int, share: float) -> None:
    s = sender()
    assert s.rate_bps(0) == 8 * MBPS
    s.on_message(BP, 1, degree, 10)
    assert s.state is State.REDUCED
    assert s.rate_bps(11) == pytest.approx(8 * MBPS * share)


def test_repeats_and_new_degrees_replace_the_cut_never_compound() -> None:
    s = sender()
    for t in range(5):  # the switch's refresh repeats the message
        s.on_message(BP, 1, 2, t)
    assert s.rate_bps(5) == pytest.approx(6 * MBPS)
    s.on_message(BP, 1, 3, 6)
    assert s.rate_bps(6) == pytest.approx(4 * MBPS)
    s.on_message(BP, 1, 1, 7)  # milder: back up to 9/10, as the switch's RT
    assert s.rate_bps(7) == pytest.approx(7.2 * MBPS)
    assert s.cuts == 7


def test_clear_restores_the_base_rate() -> None:
    s = sender()
    s.on_message(BP, 1, 3, 0)
    s.on_message(CLEAR, 1, 0, 100)
    assert (s.state, s.rate_bps(100), s.clears) == (State.NORMAL, 8 * MBPS, 1)
    s.on_message(CLEAR, 1, 0, 200)  # a clear while normal changes nothing
    assert s.clears == 1


def test_expiry_restores_the_rate_like_the_switchs_record() -> None:
    s = sender(expiry_ns=1000)
    s.on_message(BP, 1, 3, 0)
    assert s.rate_bps(999) == pytest.approx(4 * MBPS)
    assert s.rate_bps(1000) == 8 * MBPS
    s.on_message(BP, 1, 3, 1500)
    s.on_message(BP, 1, 3, 2400)  # a refresh renews it
    assert s.rate_bps(3399) == pytest.approx(4 * MBPS)
    assert s.rate_bps(3400) == 8 * MBPS


def test_never_expires_with_expiry_0() -> None:
    s = sender()
    s.on_message(BP, 1, 2, 0)
    assert s.rate_bps(10**15) == pytest.approx(6 * MBPS)


@pytest.mark.parametrize(
    ("msg_type", "group", "degree"),
    [(BP, 2, 3), (BP, 1, 0), (BP, 1, 4), (1, 1, 3), (4, 1, 3)],
)
def test_other_groups_degrees_and_types_are_ignored(msg_type: int, group: int, degree: int) -> None:
    s = sender()
    s.on_message(msg_type, group, degree, 0)
    assert (s.state, s.rate_bps(0), s.cuts) == (State.NORMAL, 8 * MBPS, 0)


def test_a_clear_for_another_group_keeps_the_cut() -> None:
    s = sender()
    s.on_message(BP, 1, 2, 0)
    s.on_message(CLEAR, 2, 0, 1)
    assert s.rate_bps(1) == pytest.approx(6 * MBPS)


def test_custom_rate_thresholds_follow_the_switch() -> None:
    s = BfccSender(
        SenderReactionConfig(base_rate_bps=10 * MBPS, rate_thresholds={1: 4, 2: 2, 3: 1})
    )
    s.on_message(BP, 7, 1, 0)  # no group configured: any group
    assert s.rate_bps(0) == pytest.approx(8 * MBPS)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"base_rate_bps": 0}, "base_rate_bps"),
        ({"base_rate_bps": 1.0, "rate_thresholds": {1: 9, 2: 3}}, "degrees 1, 2, 3"),
        ({"base_rate_bps": 1.0, "rate_thresholds": {1: 9, 2: 0, 3: 1}}, r"rate_thresholds\[2\]"),
        ({"base_rate_bps": 1.0, "expiry_ns": -1}, "expiry_ns"),
    ],
)
def test_bad_config_is_refused(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SenderReactionConfig(**kw)  # type: ignore[arg-type]
