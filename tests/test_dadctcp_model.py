# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP's reference model: the fixed-point helpers the vectors rely on,
the two-sample EWMA against Eq. 5's exact average (the README's bound), and
vectors that must fail when the model is broken on purpose.

The Python model is what is broken, so it runs every packet here: the
compiled core (models/switch/native) is held to it by
tests/test_native_cores.py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from hw_profiles import load_profile
from models.switch import dadctcp as m
from models.switch.core import Match
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.switch.tna import EgressIntrinsic, IngressIntrinsic
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector

# The Python model is broken on purpose here: it runs every packet.
pytestmark = pytest.mark.usefixtures("python_model")


@pytest.mark.parametrize(
    ("value", "bits", "expected"),
    [(10, 1, 5), (0xFFFFFFFB, 1, 0xFFFFFFFD), (0xFFFFFFFB, 2, 0xFFFFFFFE), (1, 2, 0)],
)
def test_arithmetic_shift_keeps_the_sign(value: int, bits: int, expected: int) -> None:
    # -5 >> 1 = -3 and -5 >> 2 = -2: rounding toward minus infinity, as the ALU does.
    assert m.arith_shift_right(value, bits) == expected


@pytest.mark.parametrize(
    ("depth", "threshold", "expected"), [(20, 20, True), (19, 20, False), (0, 0, True)]
)
def test_at_or_above(depth: int, threshold: int, expected: bool) -> None:
    assert m.at_or_above(depth, threshold) is expected


def test_two_sample_ewma_is_within_the_readme_bound() -> None:
    """|exact - here| <= |a_(n-2)|/4 + 1.25 cells on random depth walks."""
    rng = random.Random(4)
    for _ in range(200):
        depth = prev_depth = 0
        samples: list[int] = []
        exact = [0.0]
        for _ in range(50):
            depth = max(0, min((1 << 19) - 1, depth + rng.randint(-40, 40)))
            s = depth - prev_depth
            prev_depth = depth
            samples.append(s)
            exact.append(exact[-1] / 2 + s / 2)
            prev = samples[-2] if len(samples) > 1 else 0
            here = m.to_signed32(m.average_slope(s & m.U32_MASK, prev & m.U32_MASK))
            older = exact[-3] if len(exact) > 2 else 0.0
            assert abs(exact[-1] - here) <= abs(older) / 4 + 1.25


def _run(name: str) -> None:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "dadctcp" / "marking.yaml")
    vector = next(v for v in vfile.vectors if v.name == name)
    model = make_model("dadctcp", load_profile("tofino"))
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS["dadctcp"].queue_hook)


def test_every_vector_passes_on_the_unbroken_model() -> None:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "dadctcp" / "marking.yaml")
    assert len(vfile.vectors) >= 15
    for vector in vfile.vectors:
        _run(vector.name)


def test_slope_ignored_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Marking from K1 up regardless of the slope (DCTCP at K1).
    monkeypatch.setattr(m, "average_slope", lambda s, prev: 0)
    with pytest.raises(VectorMismatch):
        _run("falling_queue_between_k1_and_k2_not_marked")


def test_printed_strict_k2_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Eq. 6 as printed (q > K2): q = K2 on a draining queue goes unmarked.
    real = m.at_or_above

    def strict(depth: int, threshold: int) -> bool:
        return real(depth, threshold + 1) if threshold == 40 else real(depth, threshold)

    monkeypatch.setattr(m, "at_or_above", strict)
    with pytest.raises(VectorMismatch):
        _run("at_k2_marked_while_draining")


def test_logical_shift_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # A logical shift turns a negative sample into a huge positive one.
    monkeypatch.setattr(m, "arith_shift_right", lambda v, b: (v & m.U32_MASK) >> b)
    with pytest.raises(VectorMismatch):
        _run("falling_queue_between_k1_and_k2_not_marked")


def test_one_slot_for_every_queue_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = m.Dadctcp.depth_swap

    def shared(self: m.Dadctcp, slot: int, depth: int) -> int:
        return real(self, 0, depth)

    monkeypatch.setattr(m.Dadctcp, "depth_swap", shared)
    with pytest.raises(VectorMismatch):
        _run("queues_keep_their_own_slope")


def test_departure_stamp_not_kept_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(m.Dadctcp, "stamp_departure", lambda self, slot, now_ticks: None)
    with pytest.raises(VectorMismatch):
        _run("idle_queue_keeps_its_old_departure_time")


def test_depth_is_the_one_the_packet_leaves_behind() -> None:
    """Seed 004 takes the slope "when the packet is out of the queue": the
    last packet of a burst that came in behind 40 cells leaves the queue
    empty, and the slot remembers 0, not 40."""
    model = make_model("dadctcp", load_profile("tofino"))
    model.table("SwitchIngress.forward.ipv4_lpm").add(
        {"hdr.ipv4.dst_addr": Match(0x0A000202, prefix_len=24)},
        "SwitchIngress.forward.route",
        {"port": 2, "src_mac": 0x020000000002, "dst_mac": 0x000000000202},
    )
    model.table("SwitchEgress.queue_threshold").add(
        {"eg_intr_md.egress_port": Match(2), "eg_intr_md.egress_qid": Match(0)},
        "SwitchEgress.set_threshold",
        {"slot": 2, "k1_cells": 20, "k2_cells": 40, "use_slope": 1, "drop_not_ect": 0},
    )
    pkt = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.2.2", tos=2)
        / TCP(sport=40000, dport=80)
    )
    ig = model.ingress(IngressIntrinsic(3), pkt)
    out = model.egress(EgressIntrinsic(2, 0, enq_qdepth=40, deq_qdepth=0), ig.data)
    assert Ether(out.data)[IP].tos & 3 == 2  # empty as it leaves: below K1, unmarked
    assert model.register("SwitchEgress.last_depth").read(2) == 0


def test_production_build_has_no_test_hook() -> None:
    from models.switch.p4_source import read_program

    source = Path(__file__).resolve().parents[1] / "tna/dadctcp/dadctcp.p4"
    profile = load_profile("tofino")
    with_hooks = read_program(source, profile)
    without = read_program(source, profile, test_hooks=False)
    assert set(with_hooks.tables) - set(without.tables) == {
        "SwitchEgress.queue_hook.queue_md_override"
    }
