# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The control loop's speed-ups (models/cycle_speedups.py, issue 48
deliverable 4) change how many requests a PMQECN cycle makes, never what it
leaves on the switch: cycle by cycle, both paths give the same changes and
the same switch state, on BF-Runtime (the fake SDE) and on the model, and a
refused write is undone the same way. Seconds are benchmarks/control_loop.py's."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import WriteError
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import Change, PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from doubles.fake_bfrt_grpc import FakeBfrtGrpc
from hw_profiles import load_profile
from models import cycle_speedups

# (qos, dscp, K cells) of each class of a port; 2-4 packets an interval each.
KINDS = (("A", 46, 20), ("B", 34, 40), ("C", 10, 60), ("A", 40, 20), ("B", 32, 40))
BURST = {"A": 3, "B": 4, "C": 2}
PORTS = 6
DT = 2.5e-5


def port_of(i: int) -> int:
    """Receivers on pipes 0 and 1, so per-pipe shares and entries are exercised."""
    return i if i % 2 else 128 + i


def raw_config() -> dict[str, Any]:
    classes, routes, bindings = [], [], []
    for p in range(1, PORTS + 1):
        routes.append(
            {"prefix": f"10.{p}.0.0/16", "port": port_of(p), "src_mac": "02:00:00:00:00:01",
             "dst_mac": "00:00:00:00:00:02"}
        )  # fmt: skip
        bindings.append({"port": port_of(p), "prefixes": [f"10.{p}.0.0/16"]})
        for k, (qos, dscp, cells) in enumerate(KINDS):
            cid = (p - 1) * len(KINDS) + k + 1
            classes.append(
                {"id": cid, "name": f"c{cid}", "priority": cid, "vq": cid, "queue": k % 3,
                 "qos": qos, "threshold_cells": cells, "port": port_of(p),
                 "match": {"dst": f"10.{p}.0.0/16", "dscp": dscp}}
            )  # fmt: skip
    return {
        "chip": "tofino",
        "routes": routes,
        "ports": [{"port": 0, "feedback_session": 1}],
        "source_bindings": [*bindings, {"port": 0, "prefixes": ["10.200.0.0/16"]}],
        "scheduling": {"mode": "p4_wrr", "level_queues": [0, 1, 2]},
        "classes": classes,
        "optimizer": {
            "capacity_packets": 1000, "service_rate_pps": 1_250_000,
            "arrival_cap_pps": 1_500_000, "link_capacity_pps": 1_250_000,
        },
    }  # fmt: skip


def bfrt_app() -> tuple[PmqecnApp, FakeBfrtGrpc]:
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("pmqecn", profile)
    switch = BfrtSwitch("pmqecn", profile, client_module=fake)
    switch.connect()
    app = PmqecnApp(switch, parse_config(raw_config()))
    app.push_all()
    app.start(0.0)
    return app, fake


def traffic(app: PmqecnApp, fake: FakeBfrtGrpc, step: int, steady: bool = False) -> None:
    """One interval's arrivals and sojourns as the data plane leaves them.
    Unless `steady`, the mix moves every interval (the answers change, and
    some classes arrive through two pipes in shares that move)."""
    arrivals = fake.switch.state[fake.switch.spec(n.CLASS_ARRIVALS).name]
    for c in app.config.classes:
        k = BURST[c.qos] + (0 if steady else (c.id + step) % 3)
        split = 0 if steady or c.id % 4 else 1 + step % 2
        for pipe, share in ((0, k - split), (1, split)):
            # The same packets in both, as the data plane counts them: the
            # reference path takes lambda_i from the counter, today's from
            # the arrivals (enough of them for the pipe shares to count).
            packets = 40 * share
            fake.count(n.CLASS_COUNTERS, c.id, packets, packets * 142, pipe=pipe)
            arrivals[pipe][c.id] = (arrivals[pipe][c.id] + packets) % (1 << 32)
        epoch = app.meter.epoch
        fake.set_register(n.SOJOURN_SUM_NS[epoch], c.id, (1500 + 100 * (c.id % 5)) * k, pipe=0)
        fake.set_register(n.SOJOURN_PKTS[epoch], c.id, k, pipe=0)


def cycles_on_bfrt(fast: bool, steps: int = 4) -> list[tuple[list[Change], dict[str, Any]]]:
    out = []
    with cycle_speedups.disabled() if not fast else nullcontext():
        app, fake = bfrt_app()
        for step in range(steps):
            traffic(app, fake, step)
            changes = app.optimize_once(DT * (step + 1))
            out.append((changes, fake.snapshot()))
    return out


def test_bfrt_cycles_change_the_switch_as_the_reference_does() -> None:
    fast = cycles_on_bfrt(True)
    reference = cycles_on_bfrt(False)
    assert sum(len(changes) for changes, _ in fast) > 0, "the answers moved"
    for step, (got, want) in enumerate(zip(fast, reference, strict=True)):
        assert got[0] == want[0], f"cycle {step}: changes"
        assert got[1] == want[1], f"cycle {step}: switch state"


def test_model_cycles_change_the_switch_as_the_reference_does() -> None:
    def run(fast: bool) -> list[tuple[list[Change], Any]]:
        out = []
        with cycle_speedups.disabled() if not fast else nullcontext():
            profile = load_profile("tofino")
            app = PmqecnApp(ModelSwitch("pmqecn", profile), parse_config(raw_config()))
            app.push_all()
            app.start(0.0)
            switch = app.switch
            assert isinstance(switch, ModelSwitch)
            for step in range(4):
                model = switch.model
                for c in app.config.classes:
                    k = BURST[c.qos] + (c.id + step) % 3
                    # Counted as ingress counts them: the counter and the
                    # class's arrivals in the pipe (pipe 0 here).
                    for _ in range(k):
                        model.counter(n.CLASS_COUNTERS).count(c.id, 142)
                    arrivals = model.register(n.CLASS_ARRIVALS)
                    arrivals.write(c.id, (arrivals.read(c.id) + k) % (1 << 32))
                    epoch = app.meter.epoch
                    model.register(n.SOJOURN_SUM_NS[epoch]).write_all(c.id, 1700 * k)
                    model.register(n.SOJOURN_PKTS[epoch]).write_all(c.id, k)
                changes = app.optimize_once(DT * (step + 1))
                out.append((changes, model.snapshot()))
        return out

    fast, reference = run(True), run(False)
    assert sum(len(changes) for changes, _ in fast) > 0, "the answers moved"
    assert fast == reference


def test_a_steady_full_cycle_is_a_few_requests() -> None:
    """Once the mix holds (nothing to rewrite), a cycle reads each table it
    measures in one request (three: the arrivals, the sojourn half's two
    registers) and writes the flip as three: a clear of each
    of the idle half's two registers (one update each, no key) and the
    epoch. The reference path sent a request per cleared cell and read each
    one's prior alone; the path before the halves were registers of their
    own cleared 1,024 cells a cycle on a full switch."""
    app, fake = bfrt_app()
    for step in range(3):
        traffic(app, fake, step, steady=True)
        app.optimize_once(DT * (step + 1))
    before = len(fake.calls)
    traffic(app, fake, 3, steady=True)
    summing = app.meter.epoch
    assert app.optimize_once(DT * 4) == []
    calls = fake.calls[before:]
    classes = len(app.config.classes)
    reads = [(c.table, c.count) for c in calls if c.rpc == "read"]
    writes = [(c.table, c.count) for c in calls if c.rpc == "write"]
    # The arrivals once, for the pipe shares and lambda_i both; no counter read.
    assert sorted(reads) == sorted(
        [
            (f"pipe.{n.CLASS_ARRIVALS}", classes),
            (f"pipe.{n.SOJOURN_SUM_NS[summing]}", classes),
            (f"pipe.{n.SOJOURN_PKTS[summing]}", classes),
        ]
    )
    idle = 1 - summing
    assert writes == [
        (f"pipe.{n.SOJOURN_SUM_NS[idle]}", 1),
        (f"pipe.{n.SOJOURN_PKTS[idle]}", 1),
        (f"pipe.{n.SOJOURN_EPOCH}", 1),
    ]
    assert app.meter.epoch == idle
    # Each cell of the half now summed into, in every pipe, starts at 0.
    for c in app.config.classes:
        assert set(fake.register(n.SOJOURN_PKTS[idle], c.id)) == {0}


@pytest.mark.parametrize("which", ["sum", "pkts"])
def test_a_refused_flip_leaves_what_is_read_as_it_was(which: str) -> None:
    """A clear refused by the switch: the epoch and the half being summed
    stay as they were on both paths, and the next cycle measures as the
    reference does. The reference puts every cleared cell back; today's
    path, whose clears are a batch each, may leave the idle half's first
    register cleared, which nothing reads before the next flip clears it
    again."""

    def run(fast: bool) -> tuple[list[Change], dict[str, Any]]:
        with cycle_speedups.disabled() if not fast else nullcontext():
            app, fake = bfrt_app()
            traffic(app, fake, 0)
            app.optimize_once(DT)
            traffic(app, fake, 1)
            epoch = app.meter.epoch
            refused = (n.SOJOURN_SUM_NS if which == "sum" else n.SOJOURN_PKTS)[1 - epoch]
            before = fake.snapshot()
            # The reference past a few cells: its refused call has applied some of its own.
            fake.fail_write(refused, after=0 if fast else 3)
            with pytest.raises(WriteError):
                app.optimize_once(2 * DT)
            after = fake.snapshot()
            assert app.meter.epoch == epoch
            for name in (n.SOJOURN_SUM_NS[epoch], n.SOJOURN_PKTS[epoch], n.SOJOURN_EPOCH):
                assert after[f"pipe.{name}"] == before[f"pipe.{name}"], name
            if not fast:  # every cleared cell put back
                for name in (n.SOJOURN_SUM_NS[1 - epoch], n.SOJOURN_PKTS[1 - epoch]):
                    assert after[f"pipe.{name}"] == before[f"pipe.{name}"], name
            changes = app.optimize_once(3 * DT)
            return changes, fake.snapshot()

    assert run(True) == run(False)
