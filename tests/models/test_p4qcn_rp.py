# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN's reaction point is one implementation for the mechanism and the baseline."""

from __future__ import annotations

import pytest

from models.baselines.qcn_rp import QcnReactionPoint, QcnRpParams
from models.hosts.p4qcn_rp import P4qcnReactionPoint, P4qcnRpParams


def test_mechanism_and_baseline_share_the_class() -> None:
    assert P4qcnReactionPoint is QcnReactionPoint
    assert P4qcnRpParams is QcnRpParams


def test_paper_defaults() -> None:
    p = P4qcnRpParams(line_rate_bps=100e6, min_rate_bps=1e5)
    assert (p.beta, p.fast_recovery_cycles, p.rai_bps) == (1.0, 5, 5e6)


def test_eqs_2_to_4_by_hand() -> None:
    """100 Mb/s line, 1 KB cycles. Feedback: Rt = 100, Rc = 100 (1 - 1/2) = 50
    (Eq. 2). Five fast-recovery cycles halve the gap (Eq. 3): 75, 87.5, 93.75,
    96.875, 98.4375. Then active increase (Eq. 4): Rt = min(100 + 5, line) =
    100, Rc = (100 + 98.4375) / 2 = 99.21875."""
    rp = P4qcnReactionPoint(
        P4qcnRpParams(line_rate_bps=100e6, min_rate_bps=1e6, byte_counter_bytes=1000)
    )
    rp.on_feedback(0)
    assert (rp.target_rate_bps, rp.rate_bps) == (100e6, 50e6)
    expected = [75e6, 87.5e6, 93.75e6, 96.875e6, 98.4375e6, 99.21875e6]
    for n, rate in enumerate(expected, start=1):
        rp.on_bytes_sent(1000, n)
        assert rp.rate_bps == pytest.approx(rate), n
    assert rp.target_rate_bps == 100e6  # R_AI capped at the line rate


def test_active_increase_raises_the_target_below_line_rate() -> None:
    """Two feedbacks: the second sets Rt = 50 (the rate it arrived at) and
    Rc = 25; after five cycles Rc = 50 - 25/32 = 49.21875, and the sixth adds
    R_AI: Rt = 55, Rc = (55 + 49.21875) / 2 = 52.109375."""
    rp = P4qcnReactionPoint(
        P4qcnRpParams(line_rate_bps=100e6, min_rate_bps=1e6, byte_counter_bytes=1000)
    )
    rp.on_feedback(0)
    rp.on_feedback(1)
    assert (rp.target_rate_bps, rp.rate_bps) == (50e6, 25e6)
    for n in range(6):
        rp.on_bytes_sent(1000, 2 + n)
    assert rp.target_rate_bps == pytest.approx(55e6)
    assert rp.rate_bps == pytest.approx(52.109375e6)
