# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP's Algorithm 1 step by step: each branch of the reading in
models/hosts/dadctcp.py, on windows of hand-made ACKs."""

from __future__ import annotations

import pytest

from models.hosts.dadctcp import DaDctcpSender

MSS = 1000


def _window(s: DaDctcpSender, rtt_ns: int, marked: bool) -> None:
    """ACK one whole window, one MSS per ACK, every ACK marked or none."""
    for _ in range(s.cwnd_bytes // MSS):
        s.on_ack(rtt_ns, MSS, marked)


def _ca(cwnd_segments: int = 20) -> DaDctcpSender:
    # In congestion avoidance from the start (ssthresh below the window).
    return DaDctcpSender(MSS, cwnd_segments, ssthresh_bytes=MSS)


def test_unmarked_flat_rtt_adds_one_segment_per_window() -> None:
    s = _ca()
    _window(s, 100_000, False)
    assert s.last is not None and s.last.action == "+1"
    assert s.cwnd_bytes == 21 * MSS
    assert s.alpha == 0.0


def test_alpha_is_dctcps_ewma_with_g_one_sixteenth() -> None:
    s = _ca()
    _window(s, 100_000, True)  # F = 1
    assert s.alpha == pytest.approx(1 / 16)
    _window(s, 100_000, False)  # F = 0
    assert s.alpha == pytest.approx(15 / 16 / 16)


def test_rising_rtt_without_persistent_marks_cuts_by_alpha_over_4() -> None:
    s = _ca()
    _window(s, 100_000, True)  # alpha 1/16, not > 0.125
    before = s.cwnd_bytes
    _window(s, 120_000, True)  # G > 0
    a = s.alpha
    assert s.last is not None and s.last.action == "alpha/4" and not s.last.persistent
    assert s.cwnd_bytes == int(before * (1 - a / 4))


def test_persistent_marks_high_utilisation_rising_rtt_halves() -> None:
    s = _ca(40)
    s.alpha = 0.2  # as if marked heavily before
    s.alpha_high = [True, False]
    _window(s, 100_000, True)  # alpha stays > 0.125: two windows in a row
    _window(s, 110_000, True)  # RTT_max = cur: U = 1 >= 0.8, G > 0
    assert s.last is not None and s.last.persistent and s.last.action == "halve"


def test_persistent_marks_low_utilisation_rising_rtt_cuts_by_alpha_over_2() -> None:
    s = _ca(40)
    s.alpha = 0.2
    s.alpha_high = [True, True]
    s.rtt_max_ns = 1_000_000  # an earlier, much longer RTT: U = 0.2
    s.pre_rtt_ns = 150_000
    before = s.cwnd_bytes
    _window(s, 200_000, True)
    assert s.last is not None and s.last.u < 0.8 and s.last.action == "alpha/2"
    assert s.cwnd_bytes == int(before * (1 - s.alpha / 2))


def test_persistent_marks_falling_rtt_cuts_by_alpha_over_4() -> None:
    s = _ca(40)
    s.alpha = 0.2
    s.alpha_high = [True, True]
    s.pre_rtt_ns = 300_000
    _window(s, 200_000, True)  # G < 0
    assert s.last is not None and s.last.persistent and s.last.action == "alpha/4"


def test_u_exactly_at_threshold_with_rising_rtt_halves() -> None:
    """The printed lines 6 and 9 (U > 0.8, U < 0.8) miss U = 0.8; read as >=."""
    s = _ca(40)
    s.alpha = 0.2
    s.alpha_high = [True, True]
    s.rtt_max_ns = 250_000
    s.pre_rtt_ns = 150_000
    _window(s, 200_000, True)  # U = 0.8 exactly, G > 0
    assert s.last is not None and s.last.u == pytest.approx(0.8)
    assert s.last.action == "halve"


def test_one_cut_per_window_not_per_ack() -> None:
    s = _ca()
    s.alpha, s.alpha_high = 0.5, [True, True]
    s.pre_rtt_ns = 50_000
    acks = 0
    while s.last is None:
        s.on_ack(100_000, MSS, True)
        acks += 1
    assert acks == 20 and s.cwnd_bytes == 10 * MSS  # halved once, after the whole window


def test_window_never_below_two_segments() -> None:
    s = _ca(2)
    s.alpha, s.alpha_high = 1.0, [True, True]
    s.pre_rtt_ns = 50_000
    _window(s, 100_000, True)
    assert s.cwnd_bytes == 2 * MSS


def test_slow_start_grows_per_ack_until_a_cut() -> None:
    s = DaDctcpSender(MSS, 10)
    s.on_ack(100_000, MSS, False)
    assert s.cwnd_bytes == 11 * MSS
    s.pre_rtt_ns = 50_000
    while s.last is None:
        s.on_ack(100_000, MSS, True)  # marked: no slow-start growth
    assert s.last.action == "alpha/4"
    assert s.ssthresh_bytes == s.cwnd_bytes < 11 * MSS  # the cut left slow start


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"rtt_ns": 0}, "rtt_ns"), ({"acked_bytes": -1}, "acked_bytes"), ({"rtt_ns": 1.5}, "rtt_ns")],
)
def test_bad_ack_is_refused_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    s = _ca()
    args: dict[str, object] = {"rtt_ns": 100, "acked_bytes": MSS, "ece": False, **kwargs}
    with pytest.raises(ValueError, match=f"^{field} "):
        s.on_ack(**args)  # type: ignore[arg-type]
