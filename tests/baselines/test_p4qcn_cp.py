# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN congestion point: Eq. 1, the per-flow feedback limit, PFC and the threshold formulas."""

from __future__ import annotations

import pytest

from models.baselines import (
    P4qcnCongestionPoint,
    P4qcnCpParams,
    PfcAction,
    PfcGate,
    feedback_probability,
    p4qcn_thresholds,
)
from tests.baselines.scripted import scripted

N_US = 50_000


def never() -> float:
    raise AssertionError("CP drew a random number where none was due")


RAMP = P4qcnCpParams(q_min=10, q_max=20, q_pfc=30)


@pytest.mark.parametrize(
    ("q", "p"),
    [
        (0, 0.0),
        (10, 0.0),  # at Qmin: nothing
        (11, 0.1),  # alpha = 1 / (Qmax - Qmin) by default
        (15, 0.5),
        (19, 0.9),
        (20, 1.0),  # "when the queue size reaches Qmax": certain
        (25, 1.0),
        (30, 1.0),  # at Q_pfc
        (40, 1.0),  # past Eq. 1's range: feedback does not stop under PFC
    ],
)
def test_eq1_at_and_around_each_threshold(q: float, p: float) -> None:
    assert feedback_probability(q, RAMP) == pytest.approx(p, rel=1e-12, abs=0.0)


def test_explicit_alpha_is_capped_at_one() -> None:
    params = P4qcnCpParams(q_min=10, q_max=20, q_pfc=30, alpha=0.25)
    assert feedback_probability(12, params) == 0.5
    assert feedback_probability(14, params) == 1.0
    assert feedback_probability(16, params) == 1.0


def test_paper_setting_qmin_equals_qmax_is_a_step() -> None:
    params = P4qcnCpParams()
    assert (params.q_min, params.q_max, params.q_pfc) == (11, 11, 14)
    assert feedback_probability(11, params) == 0.0
    assert feedback_probability(12, params) == 1.0


def test_one_feedback_per_flow_per_interval_at_exactly_n() -> None:
    cp = P4qcnCongestionPoint(never)  # q = 12 > 11: p = 1, no draws
    assert cp.params.feedback_interval_ns == N_US
    assert cp.on_packet("A", 12, 0)
    assert not cp.on_packet("A", 12, 1)
    assert cp.on_packet("B", 12, 1)  # flows are limited independently
    assert not cp.on_packet("A", 12, N_US - 1)
    assert cp.on_packet("A", 12, N_US)  # exactly N later: allowed again
    assert cp.last_feedback_ns("A") == N_US
    assert not cp.on_packet("B", 12, N_US)  # B's window runs from 1
    assert cp.on_packet("B", 12, N_US + 1)


def test_suppressed_marks_do_not_extend_the_window() -> None:
    cp = P4qcnCongestionPoint(never)
    assert cp.on_packet("A", 12, 0)
    for t in range(0, N_US, 5_000):
        assert not cp.on_packet("A", 13, t)
    assert cp.on_packet("A", 13, N_US)


def test_no_feedback_below_threshold_leaves_the_window_open() -> None:
    cp = P4qcnCongestionPoint(never)
    assert not cp.on_packet("A", 11, 0)
    assert cp.last_feedback_ns("A") is None
    assert cp.on_packet("A", 12, 1)


def test_ramp_draws_only_for_flows_outside_their_window() -> None:
    cp = P4qcnCongestionPoint(scripted([0.5, 0.4999], "CP"), RAMP)  # q = 15: p = 0.5
    assert not cp.on_packet("A", 15, 0)  # u = 0.5 is not below p
    assert cp.last_feedback_ns("A") is None  # a lost draw does not start the window
    assert cp.on_packet("A", 15, 10)
    assert not cp.on_packet("A", 15, 20)  # limited: must not consume a draw


def test_time_running_backwards_is_refused() -> None:
    cp = P4qcnCongestionPoint(never)
    cp.on_packet("A", 0, 100)
    with pytest.raises(ValueError, match="now_ns"):
        cp.on_packet("B", 0, 99)


def test_pfc_pauses_above_and_resumes_below_q_pfc_once_each() -> None:
    gate = PfcGate()  # Q_PFC = 14
    trace = [gate.on_queue(q) for q in (13, 14, 15, 16, 14, 13, 12, 14, 15)]
    assert trace == [
        None,
        None,  # at Q_PFC: not exceeded
        PfcAction.PAUSE,
        None,  # already paused: no second PAUSE
        None,  # back at Q_PFC: not yet under it
        PfcAction.RESUME,
        None,
        None,
        PfcAction.PAUSE,
    ]


def test_pfc_with_a_lower_resume_threshold() -> None:
    gate = PfcGate(q_pfc=14, q_resume=10)
    assert gate.on_queue(15) is PfcAction.PAUSE
    assert [gate.on_queue(q) for q in (13, 11, 10)] == [None, None, None]
    assert gate.paused
    assert gate.on_queue(9) is PfcAction.RESUME
    assert gate.on_queue(13) is None  # below Q_PFC: stays running


def test_threshold_formulas() -> None:
    # 8 priorities x 4 ports = 32 queues; Q_flight = 100 reserves 3200 of 9600.
    t = p4qcn_thresholds(buffer=9_600, n_ports=4, q_flight=100)
    assert t.q_pfc_max == 200  # (9600 - 3200) / 32
    assert t.q_p4qcn_max == 100  # Q_PFC - Q_flight
    assert t.q_p4qcn_shared_max == pytest.approx(8 * 6_400 / (32 * 9))
    t2 = p4qcn_thresholds(buffer=9_600, n_ports=4, q_flight=100, shared_alpha=1, priorities=1)
    assert t2.q_pfc_max == 2_300
    assert t2.q_p4qcn_shared_max == 9_200 / 8


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: P4qcnCpParams(q_min=12, q_max=11), "q_max"),
        (lambda: P4qcnCpParams(q_pfc=10), "q_pfc"),
        (lambda: P4qcnCpParams(q_min=-1), "q_min"),
        (lambda: P4qcnCpParams(alpha=0.0), "alpha"),
        (lambda: P4qcnCpParams(feedback_interval_ns=0), "feedback_interval_ns"),
        (lambda: P4qcnCpParams(feedback_interval_ns=50e3), "feedback_interval_ns"),  # type: ignore[arg-type]
        (lambda: PfcGate(q_pfc=14, q_resume=15), "q_resume"),
        (lambda: PfcGate(q_pfc=float("inf")), "q_pfc"),
        (lambda: p4qcn_thresholds(buffer=3_200, n_ports=4, q_flight=100), "buffer"),
        (lambda: p4qcn_thresholds(buffer=3_300, n_ports=4, q_flight=100), "q_flight"),
        (lambda: p4qcn_thresholds(buffer=9_600, n_ports=0, q_flight=100), "n_ports"),
        (lambda: p4qcn_thresholds(buffer=9_600, n_ports=4, q_flight=-1), "q_flight"),
        (lambda: feedback_probability(-1, RAMP), "q"),
    ],
)
def test_bad_parameters_name_themselves(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()
