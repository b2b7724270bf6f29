# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN's reference model: the hash the vectors rely on, the probability
curve with the real random source, and vectors that must fail when the
model is broken on purpose."""

from __future__ import annotations

import ipaddress

import pytest

from hw_profiles import load_profile
from models.switch import p4qcn as p4qcn_model
from models.switch.core import Match
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.switch.tna import EgressIntrinsic
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector


def _ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def test_crc16_is_crc16_arc() -> None:
    # The catalogue check value of CRC-16/ARC (bf-utils' crc_16).
    assert p4qcn_model.crc16(b"123456789") == 0xBB3D


def test_flow_slots_the_vectors_name() -> None:
    slot = p4qcn_model.flow_slot
    assert slot(_ip("10.0.1.1"), _ip("10.0.2.2")) == 1855
    assert slot(_ip("10.0.1.3"), _ip("10.0.2.2")) == 1862
    assert slot(_ip("10.0.1.17"), _ip("10.0.2.71")) == 1855
    assert slot(_ip("10.0.1.1"), _ip("10.0.4.4")) == 1468


@pytest.mark.parametrize(
    ("random_value", "level", "expected"),
    [(0, 0, False), (32767, 32768, True), (4095, 4096, True), (4096, 4096, False)],
)
def test_chosen_is_random_below_level(random_value: int, level: int, expected: bool) -> None:
    assert p4qcn_model.chosen(random_value, level) is expected


def _run(file: str, name: str) -> None:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "p4qcn" / file)
    vector = next(v for v in vfile.vectors if v.name == name)
    model = make_model("p4qcn", load_profile("tofino"))
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS["p4qcn"].queue_hook)


def test_real_random_source_follows_the_level() -> None:
    """Without an injected value the draw is uniform on 0..32767, so a level
    of 8192 chooses a quarter of the packets (the model's seeded generator
    standing in for the chip's)."""
    model = make_model("p4qcn", load_profile("tofino"))
    model.table("SwitchEgress.feedback_probability").add(
        {
            "eg_intr_md.egress_port": Match(2),
            "eg_intr_md.egress_qid": Match(0),
            "eg_md.queue.depth_cells": Match(0, mask=0),
        },
        "SwitchEgress.set_level",
        {"level": 8192, "three_point": 1, "feedback_interval_ticks": 0},
        priority=1,
    )
    hdr = p4qcn_model.P4qcnHeaders()
    hdr.ipv4.set_valid()
    hdr.ipv4.ecn = 2
    n = 20_000
    for _ in range(n):
        hdr.ipv4.ecn = 2
        model.congestion_point(
            EgressIntrinsic(egress_port=2, egress_qid=0), hdr, p4qcn_model.EgMd(), 64
        )
    marked = model.counter("SwitchEgress.ce_marked").read(2)[0]
    assert abs(marked / n - 0.25) < 0.02


def test_interval_off_by_one_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # "elapsed > N" instead of ">= N": the packet exactly N later is suppressed.
    gap = p4qcn_model.P4qcn.fb_gap_check

    def strict(self: p4qcn_model.P4qcn, slot: int, now: int, md: p4qcn_model.EgMd) -> int:
        md.window_start_ticks = (md.window_start_ticks - 1) & 0xFFFFFFFF
        return gap(self, slot, now, md)

    monkeypatch.setattr(p4qcn_model.P4qcn, "fb_gap_check", strict)
    with pytest.raises(VectorMismatch):
        _run("rate_limit.yaml", "feedback_again_once_interval_has_passed")


def test_per_queue_instead_of_per_flow_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # One slot for every flow: the second flow would be suppressed.
    monkeypatch.setattr(p4qcn_model, "P4QCN_FLOW_SLOT_MASK", 0)
    with pytest.raises(VectorMismatch):
        _run("rate_limit.yaml", "other_flow_has_its_own_interval")


def test_margin_kept_too_narrow_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # random - level in 15 bits: its sign (bit 15) is lost and nothing is chosen.
    monkeypatch.setattr(p4qcn_model, "U16_MASK", 0x7FFF)
    with pytest.raises(VectorMismatch):
        _run("congestion_point.yaml", "at_q_max_always_feeds_back")


def test_production_build_has_no_test_hook() -> None:
    """-DTOFCC_NO_TEST_HOOKS removes the three hook tables and nothing else."""
    from pathlib import Path

    from models.switch.p4_source import read_program

    source = Path(__file__).resolve().parents[1] / "tna/p4qcn/p4qcn.p4"
    profile = load_profile("tofino")
    with_hooks = read_program(source, profile)
    without = read_program(source, profile, test_hooks=False)
    assert set(with_hooks.tables) - set(without.tables) == {
        "SwitchEgress.queue_hook.queue_md_override",
        "SwitchEgress.random_hook.random_override",
        "SwitchIngress.clock.ingress_tstamp_override",
    }
    assert set(without.tables) <= set(with_hooks.tables)
