# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM family's reference model (issue 51): the PI entries its shared
vectors carry held to what the controller writes, and the model's own
mechanisms beside each other. The vectors themselves run with every
program's (tests/test_vectors_on_model.py).
"""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from bfrt_controller.aqm.pi import PiGains, pi_terms_entries, saturation_ns, step_shift, terms_at
from hw_profiles import load_profile
from models.switch.aqm import Aqm
from models.switch.core import Match
from models.switch.tna import EgressIntrinsic, IngressIntrinsic
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file

FAMILY = DEFAULT_VECTOR_ROOT / "aqm"


# ---- the vectors' PI entries are the controller's --------------------
PIE_GAINS = PiGains(alpha=0.125, beta=1.25, target_us=15_000)
DUALPI2_GAINS = PiGains(alpha=0.16, beta=3.2, target_us=15_000)
CURVE_GAINS = {"pie.yaml": {0: PIE_GAINS}, "switch.yaml": {0: PIE_GAINS}}
CURVE_GAINS["dualpi2.yaml"] = {1: DUALPI2_GAINS}


@pytest.mark.parametrize("name", sorted(CURVE_GAINS))
def test_vector_pi_entries_are_what_the_controller_writes(name: str) -> None:
    vfile = load_vector_file(FAMILY / name)
    entries = [*vfile.setup.tables, *(e for v in vfile.vectors for e in v.setup.tables)]
    checked = 0
    for e in entries:
        if e.table == "SwitchEgress.pi.pi_terms":
            gains = CURVE_GAINS[name][e.key["eg_md.curve"].value]
            k = e.key["eg_md.queue.sojourn_ns"]
            want = {(t.value, t.mask): (t.term, t.beta_term) for t in pi_terms_entries(gains)}
            assert want[(k.value, k.mask)] == (e.data["term"], e.data["beta_term"])
            checked += 1
    assert checked >= 2


@pytest.mark.parametrize("gains", [PIE_GAINS, DUALPI2_GAINS])
def test_pi_terms_cover_every_delay_and_saturate(gains: PiGains) -> None:
    """Every sojourn hits exactly one entry; below the saturation delay it
    is T and B at the middle of its step (so never more than half a step
    off), and above it they stay at the saturation delay's (delta a signed
    32-bit value)."""
    entries = pi_terms_entries(gains)
    step = 1 << step_shift(gains)
    assert len(entries) <= 1024 + 32
    for d in (0, 1, step - 1, step, 7 * step + 5, int(saturation_ns(gains)) - 1, 10**9, 2**32 - 1):
        hits = [t for t in entries if d & t.mask == t.value]
        assert len(hits) == 1, d
        if d < saturation_ns(gains) - step:
            mid = (d // step + 0.5) * step
            assert (hits[0].term, hits[0].beta_term) == terms_at(gains, mid), d
    top = next(t for t in entries if (2**32 - 1) & t.mask == t.value)
    assert top.term < 2**30 + 2**25 and top.beta_term < 2**30


# ---- depths: DCTCP at dequeue, RED at arrival ------------------------
def _family_with(action: str, data: dict[str, int]) -> Aqm:
    model = Aqm(load_profile("tofino"))
    model.table("SwitchIngress.forward.ipv4_lpm").add(
        {"hdr.ipv4.dst_addr": Match(0x0A000202, prefix_len=24)},
        "SwitchIngress.forward.route",
        {"port": 2, "src_mac": 0x020000000002, "dst_mac": 0x000000000202},
    )
    model.table("SwitchEgress.aqm_queue").add(
        {"eg_intr_md.egress_port": Match(2), "eg_intr_md.egress_qid": Match(0)},
        f"SwitchEgress.{action}",
        data,
    )
    return model


ECT0_PACKET = bytes(
    Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
    / IP(src="10.0.1.1", dst="10.0.2.2", tos=2)
    / TCP(sport=40000, dport=80)
)


def test_dctcp_marks_on_the_dequeue_depth() -> None:
    """A packet that found 50 cells but leaves an empty queue is not marked;
    one that leaves 40 behind is, whatever it found on arrival."""
    model = _family_with("set_dctcp", {"ecn": 1, "k_cells": 40})
    ig = model.ingress(IngressIntrinsic(3), ECT0_PACKET)
    out = model.egress(EgressIntrinsic(2, 0, enq_qdepth=50, deq_qdepth=0), ig.data)
    assert Ether(out.data)[IP].tos & 3 == 2
    out = model.egress(EgressIntrinsic(2, 0, enq_qdepth=0, deq_qdepth=40), ig.data)
    assert Ether(out.data)[IP].tos & 3 == 3


def test_red_averages_the_arrival_depth() -> None:
    """RED's block sums the depth the packet found (enq_qdepth), as aqm.p4's."""
    model = _family_with("set_red", {"slot": 1, "curve": 0, "ecn": 0, "block_last": 3})
    ig = model.ingress(IngressIntrinsic(3), ECT0_PACKET)
    model.egress(EgressIntrinsic(2, 0, enq_qdepth=7, deq_qdepth=100), ig.data)
    assert model.register("SwitchEgress.red_block_sum_cells").read(1) == 7


def test_pie_holds_a_fluid_queue_near_its_target() -> None:
    """The model's PI, stepped every T_update against a fluid queue fed at
    twice the drained rate by Reno-like senders (rate ~ 1/sqrt(p)), settles
    the delay within a millisecond of the 15 ms target: the tabled terms
    are RFC 8033's PI, not merely close to it at one point."""
    model = _family_with(
        "set_pie",
        {
            "slot": 0,
            "curve": 0,
            "ecn": 0,
            "minus_t_update_ticks": 2**32 - 234375,
            "mark_max_level": 1 << 15,
        },
    )
    for t in pi_terms_entries(PIE_GAINS):
        model.table("SwitchEgress.pi.pi_terms").add(
            {"eg_md.curve": Match(0), "eg_md.queue.sojourn_ns": Match(t.value, mask=t.mask)},
            "SwitchEgress.pi.set_pi_terms",
            {"term": t.term, "beta_term": t.beta_term},
            1,
        )
    ig = model.ingress(IngressIntrinsic(3), ECT0_PACKET)
    delay_s = 0.0
    delays = []
    for step in range(1, 2000):
        t_ns = step * 15_000_000
        data = _bridged_at(ig.data, t_ns)
        # Tofino: the sojourn is the egress timestamp minus the arrival.
        leave_ns = t_ns + round(delay_s * 1e9)
        model.egress(EgressIntrinsic(2, 0, global_tstamp_ns=leave_ns), data)
        p = model.register("SwitchEgress.pi.pi_prob").read(0) / 2**32
        # Offered load falls as 1/sqrt(p): 2x the link at p = 1 %.
        load = min(4.0, 0.2 / max(p, 1e-6) ** 0.5)
        delay_s = max(0.0, delay_s + (load - 1.0) * 0.015)
        delays.append(delay_s)
    tail = delays[-200:]
    assert abs(sum(tail) / len(tail) - 0.015) < 0.001


def _bridged_at(bridged: bytes, t_ns: int) -> bytes:
    """The packet as ingress bridged it, with its clock and arrival set to
    t_ns (the AQM bridged header follows the 19-byte bridged header)."""
    from models.switch.aqm_types import AqmBridged
    from models.switch.headers import BridgedMd

    n = len(BridgedMd().pack())
    b = AqmBridged(t_ns >> 6, t_ns & 0xFFFFFFFF)
    b.set_valid()
    return bridged[:n] + b.pack() + bridged[n + len(b.pack()) :]


def test_switch_vector_batch_is_the_controllers() -> None:
    """switch.yaml's batch: the set_pie entry the app writes for a PIE queue
    with ECN at RFC 8033's defaults in slot 0 (curve 0), and a zero for every
    register of the slot (bfrt_controller/aqm/names.py SLOT_REGISTERS)."""
    from bfrt_controller.aqm import names as n
    from bfrt_controller.aqm.app import AqmApp
    from bfrt_controller.aqm.config import DEFAULT_CONFIG, load_config
    from bfrt_controller.switch import EntryWrite
    from doubles.flaky_model import FlakyModelSwitch

    vfile = load_vector_file(FAMILY / "switch.yaml")
    step = vfile.vectors[0].steps[1]
    assert step.write is not None
    assert {(r.name, r.index, r.value) for r in step.write.registers} == {
        (r, 0, 0) for r in n.SLOT_REGISTERS
    }
    cfg = load_config(DEFAULT_CONFIG)
    switch = FlakyModelSwitch("aqm")
    switch.model = Aqm(load_profile("tofino"))
    app = AqmApp(switch, cfg)
    pie = cfg.queues[0].model_copy(update={"mode": "pie", "ecn": True})
    with_pie = cfg.model_copy(update={"queues": [pie, *cfg.queues[1:]]})
    (w,) = app.queue_writes(0, pie, with_pie)
    assert isinstance(w, EntryWrite)
    (entry,) = step.write.tables
    assert (entry.action, dict(entry.data)) == (w.action, dict(w.data))
