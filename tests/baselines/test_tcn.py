# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TCN: stateless marking when the sojourn time exceeds the threshold."""

from __future__ import annotations

import pytest

from models.baselines import TcnMarker, tcn_threshold_ns

T = 20_000


@pytest.mark.parametrize(
    ("sojourn", "marked"), [(0, False), (T - 1, False), (T, False), (T + 1, True)]
)
def test_marks_only_above_the_threshold(sojourn: int, marked: bool) -> None:
    assert TcnMarker(T).should_mark_sojourn(sojourn) is marked


def test_decision_uses_the_packet_timestamps_only() -> None:
    marker = TcnMarker(T)
    assert not marker.should_mark(1_000_000, 1_000_000 + T)
    assert marker.should_mark(1_000_000, 1_000_000 + T + 1)
    # Stateless: an earlier long sojourn does not affect the next packet.
    assert not marker.should_mark(5, 6)


def test_threshold_from_rtt_uses_lambda_017() -> None:
    assert tcn_threshold_ns(100_000) == 17_000
    assert TcnMarker.from_rtt(100_000).threshold_ns == 17_000
    assert TcnMarker.from_rtt(100_000, lam=0.5).threshold_ns == 50_000
    assert tcn_threshold_ns(1) == 1  # never rounds down to a zero threshold


def test_dequeue_before_enqueue_is_refused() -> None:
    with pytest.raises(ValueError, match="dequeue_ns"):
        TcnMarker(T).should_mark(10, 9)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: TcnMarker(0), "threshold_ns"),
        (lambda: TcnMarker(1.5), "threshold_ns"),  # type: ignore[arg-type]
        (lambda: TcnMarker(True), "threshold_ns"),
        (lambda: tcn_threshold_ns(0), "base_rtt_ns"),
        (lambda: tcn_threshold_ns(100, lam=0.0), "lam"),
        (lambda: TcnMarker(T).should_mark_sojourn(-1), "sojourn_ns"),
    ],
)
def test_bad_parameters_name_themselves(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()
