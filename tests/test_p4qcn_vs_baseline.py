# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The P4QCN mechanism decides like the P4QCN baseline the evaluations use.

models/baselines/p4qcn_cp.py is Eq. 1 with a float probability and exact
per-flow state; tna/p4qcn (through its reference model, configured by the
controller) quantises the probability to P x 32768 and hashes flows into
4096 slots of a 64 ns clock. Where those cannot differ - levels that are
whole numbers, flows in distinct slots, times on the tick grid and an
interval of whole ticks - every packet of a random trace must get the same
answer from both.
"""

from __future__ import annotations

import copy
import ipaddress
import random

import pytest
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.p4qcn.app import P4qcnApp
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG, TICK_NS, interval_ticks, parse_config
from hw_profiles import load_profile
from models.baselines.p4qcn_cp import P4qcnCongestionPoint, P4qcnCpParams
from models.switch.core import Match
from models.switch.p4qcn import flow_slot

Q_MIN, Q_MAX = 8, 16  # alpha 1/8: levels 4096 (d - 8), whole numbers
INTERVAL_US = 50.0
SOURCES = [f"10.0.1.{i}" for i in range(1, 7)]
RECEIVER = "10.0.4.4"


def _switch() -> P4qcnApp:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw = copy.deepcopy(raw)
    raw["queues"][0].update(q_min_cells=Q_MIN, q_max_cells=Q_MAX, feedback_interval_us=INTERVAL_US)
    app = P4qcnApp(ModelSwitch("p4qcn", load_profile("tofino")), parse_config(raw))
    app.push_all()
    return app


def _set(table: object, key: dict[str, Match], action: str, data: dict[str, int]) -> None:
    table.add_or_modify(key, action, data)  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_feedback_decisions_on_a_random_trace(seed: int) -> None:
    slots = {
        flow_slot(int(ipaddress.IPv4Address(s)), int(ipaddress.IPv4Address(RECEIVER)))
        for s in SOURCES
    }
    assert len(slots) == len(SOURCES), "the trace needs flows in distinct slots"
    rng = random.Random(seed)
    app = _switch()
    model = app.switch.model  # type: ignore[attr-defined]
    queue_hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    random_hook = model.table("SwitchEgress.random_hook.random_override")
    clock_hook = model.table("SwitchIngress.clock.ingress_tstamp_override")
    drawn: list[float] = []
    baseline = P4qcnCongestionPoint(
        lambda: drawn.pop(),
        P4qcnCpParams(
            q_min=Q_MIN,
            q_max=Q_MAX,
            q_pfc=Q_MAX,
            feedback_interval_ns=interval_ticks(INTERVAL_US) * TICK_NS,
        ),
    )
    now_ns = 1_000_000
    sent = {True: 0, False: 0}
    for i in range(1500):
        now_ns += TICK_NS * rng.choice([0, 1, 5, 50, 300, 780, 782, 2000])
        src = rng.choice(SOURCES)
        depth = rng.randrange(0, Q_MAX + 8)
        r = rng.randrange(0, 1 << 15)
        _set(
            queue_hook,
            {"eg_intr_md.egress_port": Match(4)},
            "SwitchEgress.queue_hook.inject",
            {"depth_cells": depth, "sojourn_ns": 0},
        )
        _set(
            random_hook,
            {"eg_intr_md.egress_port": Match(4)},
            "SwitchEgress.random_hook.inject",
            {"random_value": r},
        )
        _set(
            clock_hook,
            {"ig_intr_md.ingress_port": Match(1)},
            "SwitchIngress.clock.inject",
            {"tstamp_ns": now_ns},
        )
        pkt = bytes(
            Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
            / IP(src=src, dst=RECEIVER)
            / UDP(sport=5000, dport=6000)
        )
        switch_says = any(o.port == 1 for o in model.send(1, pkt))
        drawn[:] = [r / (1 << 15)]
        baseline_says = baseline.on_packet((src, RECEIVER), depth, now_ns)
        assert switch_says == baseline_says, (i, src, depth, r, now_ns)
        sent[switch_says] += 1
    # The trace exercised both answers, and the interval suppressed some.
    assert sent[True] > 50 and sent[False] > 50
    assert model.counter("SwitchEgress.feedback_suppressed").read(4)[0] > 0
