# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The fast ns-3 glue (one dispatcher pair per run, C-API calls) against the
reference glue it replaced (models/speedups.py): the same scenario and seed
write byte-identical results.json on both, and an exception inside an event
or a receive callback still stops the run and surfaces after it.

Needs the `ns3` wheel; the reference path costs ~0.5 s per ns-3 device per
run, so the horizons are short.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluation import ns3_env
from evaluation.network import Sim
from evaluation.records import RunResult
from evaluation.report import write_report
from evaluation.scenario import load_scenario
from evaluation.simulate import run_one, run_specs
from models import speedups

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)

# pmqecn-s1: the optimiser's controller writes (undo log) at 0.2 s and 0.4 s,
# feedback mirrors. bfcc-single: recirculation, backpressure mirrors; too
# short for a flow to finish, which the report's FCT plot cannot draw, so
# only the run itself is compared there.
CASES = {"pmqecn-s1": ("pmqecn", 0.5, True), "bfcc-single": ("bfcc", 0.1, False)}


def facts(r: RunResult) -> dict[str, object]:
    d = dataclasses.asdict(r)
    d.pop("wall_s")
    return d


@pytest.mark.parametrize("name", list(CASES))
def test_both_glues_write_the_same_results(name: str, tmp_path: Path) -> None:
    scheme, seconds, report = CASES[name]
    s = load_scenario(name).model_copy(update={"duration_s": seconds})
    spec = next(p for p in run_specs(s) if p.scheme == scheme)
    fast = run_one(s, spec)
    with speedups.disabled():
        ref = run_one(s, spec)
    assert len(fast.packets) > 0, "the run delivered nothing: nothing was compared"
    assert facts(fast) == facts(ref)
    if not report:
        return
    write_report(s, [fast], tmp_path / "fast")
    write_report(s, [ref], tmp_path / "reference")
    written = (tmp_path / "fast" / "results.json").read_bytes()
    assert written == (tmp_path / "reference" / "results.json").read_bytes()


@pytest.fixture(params=[True, False], ids=["fast", "reference"])
def sim(request: pytest.FixtureRequest) -> Iterator[Sim]:
    ns, glue = ns3_env.ns3()
    ns3_env.reset(ns)
    try:
        if request.param:
            yield Sim(ns, glue)
        else:
            with speedups.disabled():
                yield Sim(ns, glue)
    finally:
        ns3_env.reset(ns)


def linked_pair(sim: Sim) -> tuple[Any, Any]:
    ns = sim.ns
    p2p = ns.PointToPointHelper()
    devs = p2p.Install(ns.CreateObject[ns.Node](), ns.CreateObject[ns.Node]())
    return devs.Get(0), devs.Get(1)


def test_events_run_in_time_order_with_the_clock(sim: Sim) -> None:
    seen: list[tuple[str, int]] = []
    sim.later(300, lambda: seen.append(("c", sim.now())))
    sim.later(100, lambda: seen.append(("a", sim.now())))
    sim.later(100, lambda: seen.append(("b", sim.now())))  # same time: scheduling order
    sim.ns.Simulator.Run()
    sim.raise_error()
    assert seen == [("a", 100), ("b", 100), ("c", 300)]


def test_a_failing_event_stops_the_run_and_is_raised_after(sim: Sim) -> None:
    ran: list[int] = []

    def boom() -> None:
        raise ZeroDivisionError("in an event")

    sim.later(10, boom)
    sim.later(20, lambda: ran.append(sim.now()))
    sim.ns.Simulator.Run()
    with pytest.raises(ZeroDivisionError, match="in an event"):
        sim.raise_error()
    assert ran == []


def test_frames_arrive_whole_and_a_failing_receiver_is_raised_after(sim: Sim) -> None:
    a, b = linked_pair(sim)
    got: list[bytes] = []

    def receive(frame: bytes) -> None:
        got.append(frame)
        if len(got) == 2:
            raise KeyError("in a receiver")

    sim.on_receive(a, lambda frame: None)
    sim.on_receive(b, receive)
    frames = [bytes(range(60)), b"\x00\xff" * 700, b"x" * 64]
    for i, f in enumerate(frames):
        sim.later(1_000_000 * i, lambda f=f: sim.send(a, f))
    sim.ns.Simulator.Run()
    with pytest.raises(KeyError, match="in a receiver"):
        sim.raise_error()
    assert got == frames[:2]
