# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every BFCC example config validates and applies to the model; the
two-tier pair runs a congestion episode across two model switches."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import load_config
from bfrt_controller.bfcc.rows import CONGESTION_POINTS, REACTION_POINTS
from bfrt_controller.switch import EntryWrite
from hw_profiles import load_profile
from models.switch.bfcc import ETHERTYPE_TOFCC_FAKE
from models.switch.chain import Chain
from models.switch.core import Match

# The two-tier examples wire the hosts as the chain test does.
from tests.test_bfcc_chain import host_packet

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("bfcc*.yaml"))


def make_app(path: Path) -> BfccApp:
    cfg = load_config(path)
    app = BfccApp(ModelSwitch("bfcc", load_profile(cfg.chip)), cfg)
    app.push_all()
    return app


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_applies(path: Path) -> None:
    app = make_app(path)
    cps = [r for r in app.status() if r["section"] == CONGESTION_POINTS]
    # The examples' 10 Gb/s ports: the paper's 150 ms at 10 Mb/s as 150 us.
    assert [(r["t_max_ns"], r["saturated"]) for r in cps] == [(150_000, "-")] * len(cps)


def test_two_tier_congestion_slows_the_named_group_upstream() -> None:
    s1 = make_app(EXAMPLES_DIR / "bfcc-two-tier-s1.yaml")
    s2 = make_app(EXAMPLES_DIR / "bfcc-two-tier-s2.yaml")
    assert isinstance(s1.switch, ModelSwitch) and isinstance(s2.switch, ModelSwitch)
    chain = Chain({"s1": s1.switch.model, "s2": s2.switch.model}, [(("s1", 3), ("s2", 1))])
    # S2's receiver queue is deep with a moderate sojourn (test hook).
    s2.switch.write(
        [
            EntryWrite(
                "SwitchEgress.queue_hook.queue_md_override",
                {"eg_intr_md.egress_port": Match(2)},
                "SwitchEgress.queue_hook.inject",
                {"depth_cells": 15 * 19 + 1, "sojourn_ns": 100000},
            )
        ]
    )
    out = []
    for seq in range(8):
        out += chain.send("s1", 1, host_packet(1, seq))
    assert sorted(Ether(o.data)[IP].id for o in out) == list(range(8))
    (cp,) = [r for r in s2.status() if r["section"] == CONGESTION_POINTS]
    assert (cp["signalled_group"], cp["signalled_degree"]) == (1, 2)
    (rp,) = [r for r in s1.status() if r["section"] == REACTION_POINTS]
    assert (rp["slowed_group"], rp["slowed_degree"], rp["backpressure_received"]) == (1, 2, 1)
    # RT 3 for degree 2: every 4th flagged slot on the link is a fake.
    fakes = [c for c in chain.crossings if Ether(c.data).type == ETHERTYPE_TOFCC_FAKE]
    assert len(fakes) == rp["fakes_sent"] == 2
    # The operator halves the slowing of degree 2 upstream: one batch, live at once.
    s1.set_params({"rt2_packets": 7})
    for seq in range(8, 16):
        chain.send("s1", 1, host_packet(1, seq))
    (rp,) = [r for r in s1.status() if r["section"] == REACTION_POINTS]
    assert rp["fakes_sent"] == 3
