# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC's model against its P4 source, and the vector-format pieces BFCC added."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hw_profiles import load_profile
from models.switch import bfcc
from models.switch.headers import BridgedMd
from models.switch.registry import PROGRAMS
from models.switch.target import ModelTarget
from models.switch.tna import IngressIntrinsic
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    VectorFormatError,
    load_vector_file,
    parse_vector_file,
    vector_files,
)
from models.vectors.runner import VectorMismatch, apply_setup, run_vector
from models.wire import TofccFeedback

REPO = Path(__file__).resolve().parents[1]


def _p4_consts(path: Path) -> dict[str, int]:
    text = path.read_text()
    return {
        m.group(1): int(m.group(2), 0)
        for m in re.finditer(r"const\s+\w+(?:<\d+>)?\s+(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*;", text)
    }


def _p4_defines(path: Path) -> dict[str, int]:
    return {
        m.group(1): int(m.group(2), 0)
        for m in re.finditer(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)", path.read_text())
    }


def test_constants_match_the_p4() -> None:
    shared = _p4_consts(REPO / "tna/include/defines.p4")
    sizes = _p4_defines(REPO / "tna/include/size.p4")
    program = {**_p4_consts(REPO / "tna/bfcc/bfcc.p4"), **_p4_defines(REPO / "tna/bfcc/bfcc.p4")}
    program |= {n: v for n, v in sizes.items() if n.startswith("BFCC_")}
    assert sizes["TOFCC_PORTS"] == bfcc.BFCC_PORTS
    assert "BFCC_GROUPS" in program  # the sizes were read
    for name in (
        "ETHERTYPE_TOFCC_FAKE",
        "PKT_TYPE_MIRROR_BACKPRESSURE",
        "PKT_TYPE_MIRROR_RECIRCULATE",
        "MIRROR_TYPE_BACKPRESSURE",
        "MIRROR_TYPE_RECIRCULATE",
    ):
        assert shared[name] == getattr(bfcc, name), name
    for name, value in program.items():
        if name.startswith("BFCC_"):
            assert getattr(bfcc, name) == value, name
    for name in ("PKT_TYPE_MIRROR_BP_REPLICA", "MIRROR_TYPE_BP_REPLICA"):
        assert program[name] == getattr(bfcc, name), name
    # A type of BFCC's own, clear of every shared one.
    shared_types = {v for k, v in shared.items() if k.startswith("PKT_TYPE_")}
    assert bfcc.PKT_TYPE_MIRROR_BP_REPLICA not in shared_types
    assert bfcc.BFCC_VQ_SLOTS == bfcc.BFCC_CONGESTION_POINTS * bfcc.BFCC_GROUPS


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_headers_fit_the_chip(chip: str) -> None:
    profile = load_profile(chip)
    assert bfcc.BpMirror.size_bytes() <= profile.mirror_header_max_bytes
    assert bfcc.RecircMirror.size_bytes() <= profile.mirror_header_max_bytes
    assert bfcc.BpReplicaMirror.size_bytes() <= profile.mirror_header_max_bytes
    bridged = BridgedMd.size_bytes() + bfcc.BfccBridged.size_bytes()
    assert bridged <= profile.bridged_metadata_max_bytes
    # Every register entry fits a stateful ALU word: one of at most 32 bits,
    # or a pair of halves of at most 32 bits each (the ALU's dual mode).
    model = bfcc.Bfcc(profile)
    for r in model.p4.registers.values():
        assert r.member_width <= 32 and len(r.members) in (0, 2), r.name


def test_enough_vectors() -> None:
    files = vector_files(DEFAULT_VECTOR_ROOT, "bfcc")
    assert sum(len(load_vector_file(p).vectors) for p in files) >= 15


def test_clock_vectors_are_model_only() -> None:
    # tofino-model's clock cannot be set, so a vector that sets it must say so.
    for path in vector_files(DEFAULT_VECTOR_ROOT, "bfcc"):
        for v in load_vector_file(path).vectors:
            assert v.model_only or not v.uses_clock, v.name


BASE: dict[str, Any] = {
    "program": "bfcc",
    "setup": {"mirror_sessions": [{"sid": 20, "port": "recirculation"}]},
    "vectors": [
        {
            "name": "v",
            "description": "d",
            "model_only": True,
            "steps": [
                {"send": {"port": 1, "packet": {"hex": "00"}}, "time_ns": 10, "expect": []},
                {"send": {"port": 1, "packet": {"hex": "00"}}, "time_ns": 10, "expect": []},
            ],
        }
    ],
}


def test_clock_must_not_run_backwards() -> None:
    raw = copy.deepcopy(BASE)
    parse_vector_file(copy.deepcopy(raw), "f.yaml")
    raw["vectors"][0]["steps"][1]["time_ns"] = 9
    with pytest.raises(VectorFormatError, match=r"vector 'v'.*time_ns 9 is before 10"):
        parse_vector_file(raw, "f.yaml")


def test_only_the_recirculation_port_has_a_name() -> None:
    raw = copy.deepcopy(BASE)
    raw["setup"]["mirror_sessions"][0]["port"] = "cpu"
    with pytest.raises(VectorFormatError, match=r"mirror_sessions\.0\.port"):
        parse_vector_file(raw, "f.yaml")


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_recirculation_port_comes_from_the_profile(chip: str) -> None:
    vfile = parse_vector_file(copy.deepcopy(BASE), "f.yaml")
    model = bfcc.Bfcc(load_profile(chip))
    apply_setup(ModelTarget(model), vfile.setup)
    assert model.mirror_sessions[20].egress_port == load_profile(chip).recirculation_ports[0]


class _NoClockTarget(ModelTarget):
    set_time_ns = None  # type: ignore[assignment]
    recirculation_port = None  # type: ignore[assignment]


def test_targets_without_the_optional_methods_refuse_clearly() -> None:
    vfile = parse_vector_file(copy.deepcopy(BASE), "f.yaml")
    model = bfcc.Bfcc(load_profile("tofino"))
    hook = PROGRAMS["bfcc"].queue_hook
    with pytest.raises(VectorMismatch, match="time_ns needs a target whose clock can be set"):
        run_vector(_NoClockTarget(model), vfile, vfile.vectors[0], hook)
    with pytest.raises(VectorMismatch, match="cannot name it"):
        apply_setup(_NoClockTarget(model), vfile.setup)


def test_pair_registers_match_the_p4() -> None:
    # The model packs a pair's members first-high; BF-Runtime names them.
    from models.switch.p4_source import read_program
    from models.switch.registry import make_model

    profile = load_profile("tofino")
    p4 = read_program(REPO / "tna/bfcc/bfcc.p4", profile)
    model = make_model("bfcc", profile)
    pairs = {n: r.members for n, r in model.p4.registers.items() if r.members}
    assert pairs == p4.register_members
    assert set(pairs) == {
        "SwitchEgress.occupancy_window",
        "SwitchEgress.vq_occupancy",
        "SwitchEgress.congested_vq",
    }
    # 32-bit halves: the window number is the tags' epoch (issue 33).
    assert all(p4.registers[n][0] == model.p4.registers[n].width == 64 for n in pairs)
    reg = model.p4.registers["SwitchEgress.occupancy_window"]
    assert reg.split(0x0001000500000001) == {"id": 0x00010005, "packets": 1}
    assert reg.pack({"id": 0x00010005, "packets": 1}) == 0x0001000500000001


def test_refresh_epoch_bits_match_the_p4() -> None:
    text = "\n".join(f.read_text() for f in sorted((REPO / "tna/bfcc").glob("*.p4")))
    hi = bfcc.BFCC_EPOCH_LOW_BIT + bfcc.BFCC_EPOCH_BITS - 1
    assert f"bp_epoch_ns[{hi}:{bfcc.BFCC_EPOCH_LOW_BIT}] ++ eg_md.degree[1:0]" in text


def test_backpressure_is_aged_on_the_global_timestamp() -> None:
    """Issue 50, item 5: BFCC's clock is the parser's global timestamp,
    which the chip defines for every packet, a recirculated original's
    included (ig_prsr_md.global_tstamp), not ingress_mac_tstamp, which it
    does not document on the recirculation path. A message is recorded at
    it and a data packet's age measured on it."""
    profile = load_profile("tofino")
    model = bfcc.Bfcc(profile)
    target = ModelTarget(model)
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "bfcc" / "reaction_point.yaml")
    apply_setup(target, vfile.setup)
    message = bytes(
        Ether(dst="02:00:00:00:00:03", src="00:00:00:00:03:fe", type=0x88B6)
        / TofccFeedback(msg_type=2, class_id=1, degree=3)
    )
    model.ingress(IngressIntrinsic(3, ingress_mac_tstamp_ns=111, global_tstamp_ns=7_000), message)
    assert model.register("SwitchIngress.bp_recorded_ns").read(3) == 7_000
    # Port 2 expires after 1 ms: its age is 1 ms on the global clock, 1 ms -
    # 7 us on the MAC clock, so only the global clock expires it.
    model.ingress(IngressIntrinsic(2, ingress_mac_tstamp_ns=0, global_tstamp_ns=0), message)
    packet = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.2.2")
        / UDP(sport=5001, dport=6000)
    )
    ig = model.ingress(
        IngressIntrinsic(1, ingress_mac_tstamp_ns=993_000, global_tstamp_ns=1_000_000), packet
    )
    assert not ig.drop and ig.egress_port == 2 and ig.qid == 2
    assert model.register("SwitchIngress.bp_state").read(2) == 0
