# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The L4S scenario (issue 51's acceptance): under tna/aqm's DualPI2 the
scalable flows' mean queue delay is at most a fifth of the classic flows',
their rates within 2x, and both classes' delays below drop-tail's."""

from __future__ import annotations

import importlib.util

import pytest

from evaluation.l4s import CLASSIC, SCALABLE, class_figures, meets_rfc9332_aim
from evaluation.scenario import P4AqmFamily, load_scenario
from evaluation.simulate import RunSpec, run_one

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


def test_the_scenario_runs_dualpi2_with_scalable_and_classic_flows() -> None:
    s = load_scenario("aqm-l4s")
    p = s.schemes.get("p4aqm")
    assert isinstance(p, P4AqmFamily) and p.mechanism == "dualpi2"
    assert {f.cc for f in s.flows} == {"dctcp-l4s", "cubic"}


@needs_ns3
def test_dualpi2_meets_rfc9332s_aim_and_beats_drop_tail() -> None:
    # A shorter horizon than the scenario's 10 s: 2 s of start-up, 3 measured.
    s = load_scenario("aqm-l4s").model_copy(update={"duration_s": 5.0})
    dualpi2 = class_figures(run_one(s, RunSpec("p4aqm", "")), s)
    none = class_figures(run_one(s, RunSpec("none", "")), s)
    assert meets_rfc9332_aim(dualpi2), dualpi2
    for c in (SCALABLE, CLASSIC):
        assert dualpi2[c].queue_delay_ms < none[c].queue_delay_ms, (c, dualpi2, none)
    # The classic queue is held near RFC 9332's 15 ms target, the L4S one
    # near its 1 ms step.
    assert 10 < dualpi2[CLASSIC].queue_delay_ms < 20
    assert dualpi2[SCALABLE].queue_delay_ms < 1.0
