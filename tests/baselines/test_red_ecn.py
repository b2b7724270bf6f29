# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DCQCN's RED/ECN marker against the piecewise-linear law of Zhu et al. 2015."""

from __future__ import annotations

import pytest

from models.baselines import RedEcnMarker, RedEcnParams, marking_probability
from tests.baselines.scripted import scripted


def never() -> float:
    raise AssertionError("marker drew a random number where the outcome is certain")


RAMP = RedEcnParams(k_min=100, k_max=300, p_max=0.5)


def test_defaults_are_the_dcqcn_deployment_values() -> None:
    params = RedEcnParams()
    assert (params.k_min, params.k_max, params.p_max) == (5_000, 200_000, 0.01)


@pytest.mark.parametrize(
    ("q", "p"),
    [
        (0, 0.0),
        (99, 0.0),
        (100, 0.0),  # at Kmin: still unmarked
        (101, 0.5 * 1 / 200),  # just above Kmin: the ramp starts from zero
        (200, 0.25),  # midway: Pmax / 2
        (299, 0.5 * 199 / 200),
        (300, 0.5),  # at Kmax: exactly Pmax
        (300.5, 1.0),  # above Kmax: always
        (10_000, 1.0),
    ],
)
def test_probability_at_and_around_each_threshold(q: float, p: float) -> None:
    assert marking_probability(q, RAMP) == pytest.approx(p, rel=1e-12, abs=0.0)


def test_default_ramp_is_one_percent_at_kmax() -> None:
    params = RedEcnParams()
    assert marking_probability(5_000, params) == 0.0
    assert marking_probability(102_500, params) == pytest.approx(0.005)
    assert marking_probability(200_000, params) == pytest.approx(0.01)
    assert marking_probability(200_001, params) == 1.0


def test_equal_thresholds_make_a_step_at_k() -> None:
    # The comparison papers' setting: Kmin = Kmax = 11 queue units.
    params = RedEcnParams(k_min=11, k_max=11, p_max=0.01)
    assert marking_probability(11, params) == 0.0
    assert marking_probability(11.001, params) == 1.0
    assert marking_probability(12, params) == 1.0


def test_marks_iff_the_draw_is_below_p() -> None:
    marker = RedEcnMarker(scripted([0.2499, 0.25, 0.0, 0.9999], "marker"), RAMP)
    assert marker.should_mark(200)  # p = 0.25
    assert not marker.should_mark(200)
    assert marker.should_mark(101)  # p = 0.0025, u = 0
    assert not marker.should_mark(300)  # p = 0.5


def test_no_draw_where_the_outcome_is_certain() -> None:
    marker = RedEcnMarker(never, RAMP)
    assert not marker.should_mark(0)
    assert not marker.should_mark(100)
    assert marker.should_mark(301)


def test_out_of_range_uniform_is_refused() -> None:
    marker = RedEcnMarker(scripted([1.0], "marker"), RAMP)
    with pytest.raises(ValueError, match="uniform"):
        marker.should_mark(200)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"k_min": -1}, "k_min"),
        ({"k_max": float("nan")}, "k_max"),
        ({"k_min": 10, "k_max": 9}, "k_max"),
        ({"p_max": 1.5}, "p_max"),
        ({"p_max": -0.1}, "p_max"),
        ({"p_max": True}, "p_max"),
        ({"k_min": "5KB"}, "k_min"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        RedEcnParams(**kwargs)  # type: ignore[arg-type]


def test_negative_queue_is_refused() -> None:
    with pytest.raises(ValueError, match="q"):
        marking_probability(-1, RAMP)
