# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 50, finding 3 in the ns-3 harness: three severe 100 Gb/s reaction
ports on one switch (evaluation/scenarios/bfcc-three-severe-dc.yaml).

Without ns-3: the switch's config is refused with its ports in one pipe
(150 Gb/s of recirculation against the pipe's 100 Gb/s) and accepted with
them spread over two. With ns-3 (pip install -e '.[eval]'): every original
is delivered, nothing is dropped at a recirculation port, and the
reordering BFCC's recirculation causes is counted against `none`'s.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from bfrt_controller.errors import ConfigError
from evaluation import schemes
from evaluation.records import RunResult
from evaluation.scenario import load_scenario
from evaluation.topology import Topology
from hw_profiles import load_profile

SCENARIO = "bfcc-three-severe-dc"


def test_multipipe_bfcc_harness_three_severe_ports_in_one_pipe_are_refused() -> None:
    s = load_scenario(SCENARIO).model_copy(update={"pipes": 1})
    with pytest.raises(ConfigError, match=r"pipe 0's recirculation port 68 .*150 Gb/s"):
        schemes.switch_setup(Topology(s), "s1", "bfcc", load_profile("tofino"), 1)


def test_multipipe_bfcc_harness_three_severe_ports_over_two_pipes_are_set_up() -> None:
    """s1 runs two pipes, its reaction ports in both (s2, s4 in pipe 1, s3 in
    pipe 0), backpressure copied between them."""
    s = load_scenario(SCENARIO)
    setup = schemes.switch_setup(Topology(s), "s1", "bfcc", load_profile("tofino"), 1)
    model = setup.pipeline.program  # type: ignore[attr-defined]
    assert model.pipes == 2
    table = model.table("SwitchEgress.recirculation")
    assert sorted(e.key["eg_intr_md.egress_port"].value for e in table.entries) == [3, 130, 131]
    assert len(model.table("SwitchIngress.bp_replicate").entries) == 3 + 2


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    if importlib.util.find_spec("ns3") is None:
        pytest.skip("the ns3 wheel is not installed (pip install -e '.[eval]')")
    from evaluation.simulate import RunSpec, run_one

    # Import from a directory whose path holds no "test": the ns3 loader's trap.
    here = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    try:
        s = load_scenario(SCENARIO)
        return {name: run_one(s, RunSpec(name, "")) for name in ("bfcc", "none")}
    finally:
        os.chdir(here)


def test_multipipe_bfcc_harness_three_severe_reaction_ports_deliver_every_original(
    runs: dict[str, RunResult],
) -> None:
    r = runs["bfcc"]
    assert r.feedback_sent.get("fake", 0) > 1000 and r.recirculated_packets > 1000
    assert r.recirculation_drops == 0
    assert r.drops_overflow == 0 and r.drops_active == 0
    for f in r.flows:
        assert f.packets_received == f.packets_sent > 0, f.name
        assert f.completed_ns is not None, f.name


def test_multipipe_bfcc_harness_reordering_is_counted_against_none(
    runs: dict[str, RunResult],
) -> None:
    """A recirculated original rejoins the tail of its port's queue, so later
    packets overtake it; `none` reorders nothing."""
    assert all(f.out_of_order == 0 for f in runs["none"].flows)
    assert all(f.out_of_order > 0 for f in runs["bfcc"].flows)
